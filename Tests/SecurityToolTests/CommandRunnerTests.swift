import Foundation
import KeychainTestSupport
import Testing

/// The test harness itself: an executable just written runs even while another process
/// still holds it open for writing for a moment (what a child forked by a parallel test
/// does until its exec; "Text file busy", the likely cause of one CI failure).
@Suite struct CommandRunnerTests {
    @Test func anExecutableBusyForAMomentStillRuns() throws {
        let path = try TemporaryKeychain.makeTemporaryDirectory() + "/busy"
        try CommandRunner.writeExecutable(Data("#!/bin/sh\necho ran\n".utf8), to: path)
        // Another process holds it open for writing for 0.2 s.
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: "/bin/sh")
        holder.arguments = ["-c", "exec 3>>\"$0\"; echo open; sleep 0.2", path]
        let opened = Pipe()
        holder.standardOutput = opened
        try holder.run()
        #expect(String(decoding: opened.fileHandleForReading.availableData, as: UTF8.self) == "open\n")
        let result = try CommandRunner.run(executable: path, [])
        #expect(result.stdout == "ran\n")
        holder.waitUntilExit()
    }

    @Test func writeExecutableMakesANewExecutableAndNeverOverwrites() throws {
        let path = try TemporaryKeychain.makeTemporaryDirectory() + "/mine"
        try CommandRunner.writeExecutable(Data("#!/bin/sh\nexit 0\n".utf8), to: path)
        #expect(access(path, X_OK) == 0)
        #expect(throws: (any Error).self) { try CommandRunner.writeExecutable(Data(), to: path) }  // never overwrites
    }
}
