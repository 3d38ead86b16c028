import Foundation
import KeychainClient
import KeychainModel
import KeychainProtocol
import KeychainSystem
import KeychainTestSupport
import Testing

@Suite struct SecurityDaemonTests {
    let keychain: DaemonKeychain
    init() throws { keychain = try DaemonKeychain() }

    @Test func tenClientsStartedAtOnceEndWithOneDaemon() throws {
        // Its own keychain whose daemon does not idle out between the last add and the count
        // (CI's loaded machine once took longer than the tests' 30 s for that).
        let keychain = try DaemonKeychain(daemonEnvironment: ["TROUSSEAU_SECURITYD_IDLE_SECONDS": "600"])
        let statuses = try onThreads(10) { i in
            osStatus { try keychain.connect().add(genericPassword(account: "client\(i)", ["v_Data": .utf8("\(i)")])) }
        }
        #expect(statuses == Array(repeating: OSStatusCode.success, count: 10))
        // A client that lost the race started a daemon that finds the lock taken and exits;
        // on a loaded machine one may still be starting when the last add returns (CI saw
        // two): wait, bounded, for those to go.
        let deadline = ContinuousClock.now + .seconds(60)
        while keychain.daemons().count > 1, ContinuousClock.now < deadline { usleep(100_000) }
        #expect(keychain.daemons().count == 1)
        let all = try keychain.connect().copyMatching(genericPassword(["m_Limit": .string("m_LimitAll"), "r_Attributes": .bool(true)]))
        #expect(all?.array?.count == 10)
    }

    /// Raw frames on the daemon's socket: each bad one gets an error reply and its
    /// connection closed; a well-formed request on another connection is still served.
    @Test func badFramesGetAnErrorAndOthersAreServed() throws {
        let client = try keychain.connect()
        _ = try client.add(genericPassword(account: "kept", ["v_Data": .utf8("x")]))

        var garbage = Data()
        garbage.appendInteger(UInt32(5))
        garbage.append(Data([9, 9, 9, 9, 9]))
        let (garbageReply, garbageClosed) = try exchange(garbage)
        #expect(garbageReply == .param)
        #expect(garbageClosed)

        var oversized = Data()
        oversized.appendInteger(UInt32(ServiceWire.maximumFrameSize + 1))
        let (oversizedReply, oversizedClosed) = try exchange(oversized)
        #expect(oversizedReply == .decode)
        #expect(oversizedClosed)

        var truncated = Data()
        truncated.appendInteger(UInt32(100))
        truncated.append(Data(repeating: 1, count: 10))
        let (_, truncatedClosed) = try exchange(truncated, shutWrite: true)
        #expect(truncatedClosed)

        #expect(try client.copyMatching(genericPassword(account: "kept", ["r_Data": .bool(true)])) == .utf8("x"))
        #expect(try keychain.connect().copyMatching(genericPassword(account: "kept", ["r_Data": .bool(true)])) == .utf8("x"))
    }

    @Test func fuzzedFramesLeaveTheDaemonServing() throws {
        let client = try keychain.connect()
        _ = try client.add(genericPassword(account: "kept", ["v_Data": .utf8("x")]))
        let valid = Data(ServiceWire.encode(Service.Update(genericPassword(account: "kept"), attributes: ["labl": .string("l")])).bytes)
        var generator = SystemRandomNumberGenerator()
        for round in 0..<300 {
            var payload = valid
            switch round % 3 {
            case 0:  // flip bytes
                for _ in 0..<Int.random(in: 1...4, using: &generator) {
                    let i = Int.random(in: 0..<payload.count, using: &generator)
                    payload[i] ^= UInt8.random(in: 1...255, using: &generator)
                }
            case 1:  // cut
                payload = payload.prefix(Int.random(in: 0..<payload.count, using: &generator))
            default:  // noise
                payload = Data((0..<Int.random(in: 0...200, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) })
            }
            var frame = Data()
            frame.appendInteger(UInt32(payload.count))
            frame.append(payload)
            _ = try exchange(frame, shutWrite: true)  // end of stream after the frame: a valid one is answered, then closed
        }
        #expect(try client.copyMatching(genericPassword(account: "kept", ["r_Data": .bool(true)])) == .utf8("x"))
        #expect(keychain.daemons().count == 1)
    }

    @Test func concurrentClientsLoseNoAcknowledgedWrite() async throws {
        let survivors = try await withThrowingTaskGroup(of: Set<String>.self) { group in
            for worker in 0..<16 {
                group.addTask { [keychain] in
                    let client = try keychain.connect()
                    var model: Set<String> = []
                    var generator = SystemRandomNumberGenerator()
                    for _ in 0..<1000 {
                        let account = "w\(worker)-\(Int.random(in: 0..<40, using: &generator))"
                        switch Int.random(in: 0..<4, using: &generator) {
                        case 0:
                            let status = osStatus { try client.add(genericPassword(account: account, ["v_Data": .utf8(account)])) }
                            #expect(status == OSStatusCode.success || (status == OSStatusCode.duplicateItem && model.contains(account)))
                            model.insert(account)
                        case 1:
                            let status = osStatus { try client.delete(genericPassword(account: account)) }
                            #expect(status == (model.contains(account) ? OSStatusCode.success : OSStatusCode.itemNotFound))
                            model.remove(account)
                        case 2:
                            let status = osStatus { try client.update(genericPassword(account: account), attributes: ["labl": .string("u")]) }
                            #expect(status == (model.contains(account) ? OSStatusCode.success : OSStatusCode.itemNotFound))
                        default:
                            let found = try? client.copyMatching(genericPassword(account: account, ["r_Data": .bool(true)]))
                            #expect(found == (model.contains(account) ? .utf8(account) : nil))
                        }
                    }
                    return model
                }
            }
            return try await group.reduce(into: Set<String>()) { $0.formUnion($1) }
        }
        let stored = try keychain.connect().copyMatching(genericPassword(["m_Limit": .string("m_LimitAll"), "r_Attributes": .bool(true)]))?
            .array?.compactMap { $0.dictionary?["acct"]?.stringValue } ?? []
        #expect(Set(stored) == survivors)
        #expect(stored.count == survivors.count, "no phantom duplicates")
    }

    @Test func killMinus9LosesNoAcknowledgedWriteAndTheNextCallRestartsIt() throws {
        let client = try keychain.connect()
        for i in 0..<50 {
            _ = try client.add(genericPassword(account: "item\(i)", ["v_Data": .utf8("\(i)")]))
        }
        let pid = try #require(keychain.daemons().first)
        keychain.kill9(pid)
        do {
            // The old connection's next request was never read by the dead daemon: it goes to a new one.
            #expect(try client.copyMatching(genericPassword(account: "item0", ["r_Data": .bool(true)])) == .utf8("0"))
            let again = try keychain.connect()
            let all = try again.copyMatching(genericPassword(["m_Limit": .string("m_LimitAll"), "r_Data": .bool(true)]))?.array
            #expect(all?.count == 50)
        } catch {
            Issue.record("after the restart: \(error); killed \(pid), daemons now \(keychain.daemons()); daemon log:\n\(keychain.logText)")
        }
        #expect(keychain.daemons().count == 1)
        #expect(keychain.daemons().first != pid)
    }

    /// A call made while the daemon is still dying (SIGKILL, or SIGTERM as an idle exit
    /// does) neither fails nor waits out the timeout: a request the dying daemon never read
    /// is sent to the next one, which the client starts once the old one is gone. A client
    /// holding a connection to the dead daemon reconnects the same way.
    @Test func callsRacingTheDaemonsDeathReachTheNextOne() throws {
        let held = try keychain.connect()
        _ = try held.add(genericPassword(account: "kept", ["v_Data": .utf8("x")]))
        for round in 0..<12 {
            _ = try held.copyMatching(genericPassword(account: "kept"))  // a daemon runs
            let pid = try #require(keychain.daemons().first, "round \(round)")
            kill(pid, round % 2 == 0 ? SIGKILL : SIGTERM)  // a stopping daemon may still answer what it already accepted
            let started = ContinuousClock.now
            do {
                #expect(try keychain.connect().copyMatching(genericPassword(account: "kept", ["r_Data": .bool(true)])) == .utf8("x"))
                #expect(try held.copyMatching(genericPassword(account: "kept", ["r_Data": .bool(true)])) == .utf8("x"))
            } catch {
                Issue.record("round \(round): \(error) after \(ContinuousClock.now - started); daemon log:\n\(keychain.logText)")
                return
            }
            #expect(ContinuousClock.now - started < .seconds(5), "round \(round)")
            #expect(keychain.daemons().count <= 1, "round \(round)")
        }
    }

    /// kill -9 of the idle enclave: the next request starts a new enclave, and nothing
    /// stored is lost.
    @Test func killMinus9OfTheEnclaveIsSurvived() throws {
        let client = try keychain.connect()
        for i in 0..<20 {
            _ = try client.add(genericPassword(account: "item\(i)", ["v_Data": .utf8("\(i)")]))
        }
        let enclave = try #require(keychain.enclaves().first)
        keychain.kill9(enclave)
        // The daemon's request to the dead enclave was never read: it goes to a new enclave.
        #expect(try client.copyMatching(genericPassword(account: "item0", ["r_Data": .bool(true)])) == .utf8("0"))
        let all = try client.copyMatching(genericPassword(["m_Limit": .string("m_LimitAll"), "r_Data": .bool(true)]))?.array
        #expect(all?.count == 20, "daemon log:\n\(keychain.logText)")
        #expect(keychain.enclaves().count == 1 && keychain.enclaves().first != enclave)
        #expect(keychain.logText.contains("started a new one"))
    }

    @Test func sigtermFinishesAndExitsCleanly() throws {
        let client = try keychain.connect()
        _ = try client.add(genericPassword(account: "a", ["v_Data": .utf8("x")]))
        let pid = try #require(keychain.daemons().first)
        DaemonControl.stop(home: keychain.home)
        #expect(!DaemonControl.isRunning(pid))
        #expect(!FileManager.default.fileExists(atPath: keychain.paths.socket), "the socket is removed")
        #expect(try keychain.connect().copyMatching(genericPassword(account: "a", ["r_Data": .bool(true)])) == .utf8("x"))
    }

    /// `~/.local/share` does not exist on every fresh system: the daemon creates the
    /// missing directories above its home (it used to fail to start).
    @Test func aHomeUnderMissingDirectoriesIsCreated() throws {
        let home = keychain.home + "/not/yet/keychain"
        let client = try KeychainClient.connect(
            KeychainPaths(home: home), daemon: DaemonKeychain.daemonExecutable, daemonEnvironment: keychain.environment)
        defer { DaemonControl.stop(home: home) }
        _ = try client.add(genericPassword(account: "a", ["v_Data": .utf8("x")]))
        #expect(try client.copyMatching(genericPassword(account: "a", ["r_Data": .bool(true)])) == .utf8("x"))
        var info = stat()
        #expect(stat(keychain.home + "/not", &info) == 0 && info.st_mode & 0o777 == 0o700)
    }

    @Test func socketAndDirectoryArePrivate() throws {
        _ = try keychain.connect()
        var info = stat()
        #expect(stat(keychain.paths.socket, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o600)
        #expect(stat(keychain.paths.socketDirectory, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o700)
    }

    /// Two unsigned executables get an implicit group each: neither sees the other's items.
    @Test func unsignedExecutablesAreIsolated() throws {
        let copyDirectory = try TemporaryKeychain.makeTemporaryDirectory()
        let original = CommandRunner.productsDirectory.appendingPathComponent("security").path
        let copy = copyDirectory + "/security"
        try CommandRunner.copyExecutable(original, to: copy)
        let environment = ["KEYCHAIN_HOME": keychain.home, "TROUSSEAU_SECURITYD": DaemonKeychain.daemonExecutable]
        func run(_ executable: String, _ arguments: String...) throws -> CommandResult {
            try CommandRunner.run(executable: executable, arguments, environment: environment)
        }
        #expect(try run(original, "add-generic-password", "-a", "shared-name", "-s", "s", "-w", "first").status == 0)
        #expect(try run(copy, "find-generic-password", "-a", "shared-name", "-w").status == 44)
        #expect(try run(copy, "add-generic-password", "-a", "shared-name", "-s", "s", "-w", "second").status == 0)
        #expect(try run(copy, "find-generic-password", "-a", "shared-name", "-w").stdout == "second\n")
        #expect(try run(original, "find-generic-password", "-a", "shared-name", "-w").stdout == "first\n")
        // And an in-process client (this test runner) is a third program.
        #expect(osStatus { try keychain.connect().copyMatching(genericPassword(account: "shared-name")) } == OSStatusCode.itemNotFound)
    }

    /// Sends raw bytes on a new connection; returns the reply (if any) and whether the
    /// daemon then closed the connection.
    func exchange(_ bytes: Data, shutWrite: Bool = false) throws -> (OSStatusCode?, Bool) {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(keychain.paths.socket.utf8)) }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else { throw KeychainError.io }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        bytes.withUnsafeBytes { _ = send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        if shutWrite { shutdown(fd, Int32(SHUT_WR)) }
        // The reply's status: after the version byte, on success or failure alike.
        let reply = (try? FrameIO.read(from: fd, maximumSize: ServiceWire.maximumFrameSize)).flatMap { $0 }
            .flatMap { frame -> OSStatusCode? in
                var reader = ByteReader(frame)
                guard (try? reader.byte()) == ServiceWire.version else { return nil }
                return try? OSStatusCode(from: &reader)
            }
        let closed: Bool
        do {
            closed = try FrameIO.read(from: fd, maximumSize: ServiceWire.maximumFrameSize) == nil  // a clean end of stream
        } catch {
            closed = false
        }
        return (reply, closed)
    }
}
