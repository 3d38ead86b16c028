import FoundationEssentials
import KeychainModel
import KeychainStore
import KeychainTestSupport
import EnclaveBackend
import Testing
import Glibc
@testable import KeychainCallers

@Suite struct DeviceKeyTests {
    @Test func passcodeClassCannotBeUsedWithoutAPasscode() throws {
        let keychain = try TemporaryKeychain()
        #expect(osStatus { try keychain.store.add(genericPassword(account: "a", ["pdmn": .string("akpu")]), caller: keychain.caller) } == OSStatusCode.authFailed)
        #expect(osStatus { try keychain.store.copyMatching(genericPassword(account: "a", ["pdmn": .string("akpu")]), caller: keychain.caller) } == OSStatusCode.itemNotFound)
    }

    @Test func sameDeviceKeyOnEveryOpen() throws {
        let home = try TemporaryKeychain.makeTemporaryDirectory()
        let first = try KeychainStore(directory: home, keybag: SoftwareKeybag(directory: home, deviceKey: FileDeviceKey(directory: home)))
        _ = try first.add(genericPassword(account: "a", ["v_Data": .utf8("x")]), caller: AccessGroups(["g"]))
        let second = try KeychainStore(directory: home, keybag: SoftwareKeybag(directory: home, deviceKey: FileDeviceKey(directory: home)))
        #expect(try second.copyMatching(genericPassword(account: "a", ["r_Data": .bool(true)]), caller: AccessGroups(["g"])) == .utf8("x"))
    }

    @Test func aDeviceKeyOthersCanReadIsRefused() throws {
        let home = try TemporaryKeychain.makeTemporaryDirectory()
        _ = try FileDeviceKey(directory: home)
        #expect(chmod(home + "/device.key", 0o644) == 0)
        #expect(throws: KeychainError(status: OSStatusCode.noAccessForItem)) { try FileDeviceKey(directory: home) }
    }

    @Test func aDeviceKeyOfTheWrongSizeIsRefused() throws {
        let home = try TemporaryKeychain.makeTemporaryDirectory()
        let fd = open(home + "/device.key", O_WRONLY | O_CREAT, 0o600)
        _ = write(fd, "short", 5)
        close(fd)
        #expect(throws: KeychainError.decode) { try FileDeviceKey(directory: home) }
    }

    @Test func anotherDeviceKeyOpensNothingAndOverwritesNothing() throws {
        let keychain = try TemporaryKeychain()
        _ = try keychain.store.add(genericPassword(account: "a", ["v_Data": .utf8("x")]), caller: keychain.caller)
        let keybagBefore = try Data(contentsOf: URL(fileURLWithPath: keychain.home + "/keybag"))
        #expect(unlink(keychain.home + "/device.key") == 0)
        #expect(throws: KeychainError.decode) {
            try SoftwareKeybag(directory: keychain.home, deviceKey: FileDeviceKey(directory: keychain.home))
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: keychain.home + "/keybag")) == keybagBefore, "the keybag is not overwritten")
    }
}
