import Keybag
import KeychainTestSupport
import Testing
import Glibc

@Suite struct ProcessHardeningTests {
    @Test func openingKeysMakesTheProcessNonDumpable() throws {
        _ = try TemporaryKeychain()
        #expect(!ProcessHardening.isDumpable)
        var limit = rlimit()
        getrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &limit)
        #expect(limit.rlim_cur == 0)
    }
}
