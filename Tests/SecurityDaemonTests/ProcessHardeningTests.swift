import Foundation
import KeychainTestSupport
import Testing

/// ProcessHardening in a fresh process of its own (keychain-probe harden), so that what an
/// earlier test did to the test process cannot make it pass.
@Suite struct ProcessHardeningTests {
    @Test func hardeningMakesAFreshProcessNonDumpableWithoutCoreFiles() throws {
        let result = try CommandRunner.run("keychain-probe", ["harden"])
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(lines.contains("before dumpable=1 core=\(Self.inheritedCoreLimit)"), "\(lines)")
        #expect(lines.contains("after dumpable=0 core=0"), "\(lines)")
    }

    /// The core-file limit a child inherits from this process.
    static var inheritedCoreLimit: UInt {
        var limit = rlimit()
        getrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &limit)
        return UInt(limit.rlim_cur)
    }
}
