import Foundation
import KeychainTestSupport
import Testing

/// Until securityd owns the database, every `security` run opens it: many at once on a new
/// keychain must all succeed (they once raced to create the tables and failed with errSecIO).
@Suite struct ConcurrentProcessTests {
    @Test func manyFirstRunsAtOnceAllSucceed() async throws {
        for _ in 0..<3 {
            let home = try TemporaryKeychain.makeTemporaryDirectory() + "/keychain"
            let results = try await withThrowingTaskGroup(of: CommandResult.self) { group in
                for i in 0..<16 {
                    group.addTask {
                        try CommandRunner.run(
                            "security", ["add-generic-password", "-a", "user\(i)", "-s", "svc", "-w", "pw\(i)"],
                            environment: ["KEYCHAIN_HOME": home, "TROUSSEAU_DEBUG": "1"])
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(results.allSatisfy { $0.status == 0 }, "\(results.filter { $0.status != 0 }.map(\.stderr))")
            for i in 0..<16 {
                let found = try CommandRunner.run(
                    "security", ["find-generic-password", "-a", "user\(i)", "-w"], environment: ["KEYCHAIN_HOME": home])
                #expect(found.stdout == "pw\(i)\n")
            }
            DaemonControl.stop(home: home)
        }
    }
}
