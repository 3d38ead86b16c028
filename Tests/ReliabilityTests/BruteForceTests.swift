import Foundation
import KeychainModel
import KeychainTestSupport
import Testing

/// A scripted guesser against the keychain password, killing the daemon and the enclave
/// between and during its guesses: the throttle still allows five checked guesses before
/// its first delay, and then refuses even the right password, across every restart.
@Suite struct BruteForceTests {
    @Test func theThrottleHoldsAgainstAGuesserAcrossRestarts() throws {
        let keychain = try DaemonKeychain()
        let environment = keychain.environment.merging(["KEYCHAIN_HOME": keychain.home]) { _, new in new }
        func security(_ arguments: String...) throws -> CommandResult {
            try CommandRunner.run("security", arguments, environment: environment, input: "1234\n1234\n")
        }
        #expect(try security("set-keychain-password").status == 0)
        #expect(try security("lock-keychain").status == 0)

        let guesses = RunLength.pick(short: 30, long: 300)
        let start = ContinuousClock.now
        var kills = 0
        for guess in 0..<guesses {
            switch Int.random(in: 0..<4) {
            case 0:
                if let daemon = keychain.daemons().first { keychain.kill9(daemon); kills += 1 }
            case 1:
                if let enclave = keychain.enclaves().first { keychain.kill9(enclave); kills += 1 }
            case 2:
                // During the guess: the enclave dies while it may be checking.
                let killer = Thread {
                    usleep(UInt32.random(in: 0...3_000))
                    if let enclave = keychain.enclaves().first { kill(enclave, SIGKILL) }
                }
                killer.start()
                kills += 1
            default: break
            }
            let result = try security("unlock-keychain", "-p", String(format: "%04d", guess + 1))  // never 1234
            #expect(result.status != 0, "guess \(guess) unlocked the keychain")
        }
        func keychainInfo() throws -> String {
            let info = try security("show-keychain-info")
            return info.stderr + info.stdout
        }
        let before = try keychainInfo()
        #expect(before.contains("failed unlocks: 5\n"), "\(before)")
        // The right password now waits out the delay, across restarts too.
        for round in 0..<3 {
            let right = try security("unlock-keychain", "-p", "1234")
            #expect(right.status == 51, "round \(round): \(right.stderr)")
            if let daemon = keychain.daemons().first { keychain.kill9(daemon) }
        }
        let after = try keychainInfo()
        #expect(after.contains("state: locked") && after.contains("failed unlocks: 5\n"), "\(after)")
        RunLength.report(
            "brute force: scripted guesser with SIGKILLs of the daemon and the enclave",
            "\(guesses) wrong guesses, \(kills) kills between or during them: 5 checked, the rest refused by the delay; "
                + "the right password refused 3× across restarts", since: start)
    }
}
