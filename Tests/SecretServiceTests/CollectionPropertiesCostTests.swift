import EnclaveProtocol
import KeychainCrypto
import FoundationEssentials
import KeychainCallers
import KeychainModel
import KeychainStore
import KeychainTestSupport
@testable import SecretService
import Testing

/// What a collection's properties cost: python's keyring asks whether the collection is
/// locked before every call, so that answer must not read its items.
@Suite struct CollectionPropertiesCostTests {
    /// A keybag that counts the metadata keys asked of it: the store asks one to learn
    /// whether the keychain is locked, and more to read items.
    final class CountingKeybag: Keybag {
        let keybag: any Keybag
        let metadataKeys = BlockingMutex(0)
        init(_ keybag: any Keybag) { self.keybag = keybag }
        func indexKey() throws -> IndexKey { try keybag.indexKey() }
        func metadataKey(for protection: ProtectionClass) throws -> MetadataKey {
            metadataKeys.withLock { $0 += 1 }
            return try keybag.metadataKey(for: protection)
        }
        func wrapItemKey(
            _ itemKey: ItemKey, for protection: ProtectionClass, associatedData: Data, access: AccessControl?, context: Data?
        ) throws -> (wrapped: Data, access: AccessControl?) {
            try keybag.wrapItemKey(itemKey, for: protection, associatedData: associatedData, access: access, context: context)
        }
        func unwrapItemKey(
            _ wrapped: Data, for protection: ProtectionClass, associatedData: Data, access: AccessControl?, context: Data?
        ) throws -> ItemKey {
            try keybag.unwrapItemKey(wrapped, for: protection, associatedData: associatedData, access: access, context: context)
        }
    }

    final class Peers: BusPeers {
        func scope(of name: String) throws -> SecretScope { .test("org.freedesktop.secrets.host") }
        func isPortal(_ name: String) -> Bool { false }
    }

    @Test func askingWhetherACollectionIsLockedReadsNoItem() throws {
        let keychain = try TemporaryKeychain()
        let keybag = CountingKeybag(keychain.keybag)
        let core = SecretServiceCore(store: try KeychainStore(directory: keychain.home, keybag: keybag), unlocker: nil) {}
        let peers = Peers()
        core.peers = peers
        core.connectionAppeared(":1.1")
        func call(_ path: String, _ interface: String, _ member: String, _ arguments: [BusValue]) throws -> [BusValue] {
            switch core.handle(BusCall(sender: ":1.1", path: path, interface: interface, member: member, arguments: arguments)).reply {
            case .values(let values, _): return values
            case .error(let error): throw error
            }
        }
        let session = try call("/org/freedesktop/secrets", "org.freedesktop.Secret.Service", "OpenSession", [.string("plain"), .variant(.string(""))])[1]
        let login = "/org/freedesktop/secrets/collection/login"
        for index in 0..<3 {
            _ = try call(login, "org.freedesktop.Secret.Collection", "CreateItem", [
                .properties([("org.freedesktop.Secret.Item.Label", .string("item \(index)")), ("org.freedesktop.Secret.Item.Attributes", .attributes(["n": "\(index)"]))]),
                .structure([session, .bytes(SecretBytes([])), .bytes(SecretBytes(Array("s3cret".utf8))), .string("text/plain")]), .bool(false),
            ])
        }
        _ = core.runAfterReply()
        keybag.metadataKeys.withLock { $0 = 0 }
        for property in ["Locked", "Label", "Created"] {
            let value = try call(login, "org.freedesktop.DBus.Properties", "Get", [.string("org.freedesktop.Secret.Collection"), .string(property)])
            #expect(value.count == 1, "\(property)")
        }
        let locked = try call(login, "org.freedesktop.DBus.Properties", "Get", [.string("org.freedesktop.Secret.Collection"), .string("Locked")])
        #expect(try locked[0].variantContents().bool() == false)
        // Each Get asks the keybag once, whether the keychain is locked. Before, each also
        // listed the collection's items (two more keys: the listing's own lock check, then
        // the key it decrypted every item under): 12 for these 4 Gets.
        #expect(keybag.metadataKeys.withLock { $0 } == 4, "Get of Locked, Label or Created read the items")
        // Listing the items asks for the keys it decrypts them under, beside the lock check.
        keybag.metadataKeys.withLock { $0 = 0 }
        let items = try call(login, "org.freedesktop.DBus.Properties", "Get", [.string("org.freedesktop.Secret.Collection"), .string("Items")])
        #expect(try items[0].variantContents().objectPaths().count == 3)
        #expect(keybag.metadataKeys.withLock { $0 } > 1)
        withExtendedLifetime(keychain) {}  // its home is removed when it is dropped
    }
}
