import FoundationEssentials
import KeychainModel
import KeychainStore
import KeychainTestSupport
import Keybag
import Testing
import Glibc

@Suite struct DeviceKeybagTests {
    @Test func passcodeClassCannotBeUsedWithoutAPasscode() throws {
        let keychain = try TemporaryKeychain()
        #expect(osStatus { try keychain.store.add(genericPassword(account: "a", ["pdmn": .string("akpu")]), caller: keychain.caller) } == -25293)
        #expect(osStatus { try keychain.store.copyMatching(genericPassword(account: "a", ["pdmn": .string("akpu")]), caller: keychain.caller) } == -25300)
    }

    @Test func sameDeviceKeyOnEveryOpen() throws {
        let home = try TemporaryKeychain.makeTemporaryDirectory()
        let first = try KeychainStore.open(home: home)
        _ = try first.add(genericPassword(account: "a", ["v_Data": .utf8("x")]), caller: AccessGroups(["g"]))
        let second = try KeychainStore(directory: home, keybag: DeviceKeybag(directory: home))
        #expect(try second.copyMatching(genericPassword(account: "a", ["r_Data": .bool(true)]), caller: AccessGroups(["g"])) == .utf8("x"))
    }

    @Test func aDeviceKeyOthersCanReadIsRefused() throws {
        let home = try TemporaryKeychain.makeTemporaryDirectory()
        _ = try DeviceKeybag(directory: home)
        #expect(chmod(home + "/device.key", 0o644) == 0)
        #expect(throws: KeychainError(status: OSStatusCode.noAccessForItem)) { try DeviceKeybag(directory: home) }
    }

    @Test func aDeviceKeyOfTheWrongSizeIsRefused() throws {
        let home = try TemporaryKeychain.makeTemporaryDirectory()
        let fd = open(home + "/device.key", O_WRONLY | O_CREAT, 0o600)
        _ = write(fd, "short", 5)
        close(fd)
        #expect(throws: KeychainError.decode) { try DeviceKeybag(directory: home) }
    }

    @Test func anotherDeviceKeyReadsNothing() throws {
        let keychain = try TemporaryKeychain()
        _ = try keychain.store.add(genericPassword(account: "a", ["v_Data": .utf8("x")]), caller: keychain.caller)
        #expect(unlink(keychain.home + "/device.key") == 0)
        let other = try KeychainStore(directory: keychain.home, keybag: DeviceKeybag(directory: keychain.home))
        // New index key: the token lookup finds no candidate; a scan finds one it cannot decrypt.
        #expect(osStatus { try other.copyMatching(genericPassword(account: "a"), caller: keychain.caller) } == -25300)
        #expect(osStatus { try other.copyMatching(genericPassword(), caller: keychain.caller) } == -26275)
    }
}
