import FoundationEssentials
import KeychainModel
import SyncEngine
import Testing

/// An item record's plaintext: what it carries comes back whole; what a device may not take
/// (ThisDeviceOnly, a reserved group, an attribute of no catalogue, a truncated body) is
/// refused with errSecDecode and no value in the message.
@Suite struct SyncItemPayloadTests {
    static let stamp = SyncItemPayload.Stamp(clock: HybridLogicalClock(rawValue: 42 << 16), writer: "dev-a")

    static func payload(group: String = "com.example.app", protection: ProtectionClass = .afterFirstUnlock, extra: [String: KeychainValue] = [:]) -> SyncItemPayload {
        var fields: [String: SyncItemPayload.Field] = [
            "agrp": .init(.string(group), stamp), "pdmn": .init(.string(protection.rawValue), stamp),
            "acct": .init(.string("alice"), stamp), "svce": .init(.string("mail"), stamp), "labl": .init(nil, stamp),
            "cdat": .init(.date(Date(timeIntervalSinceReferenceDate: 1000)), stamp),
        ]
        for (name, value) in extra { fields[name] = .init(value, stamp) }
        return SyncItemPayload(itemClass: .genericPassword, fields: fields, secret: .init(SecretBytes(Array("top secret".utf8)), stamp))
    }

    @Test func aPayloadComesBackWhole() throws {
        let payload = Self.payload()
        #expect(try SyncItemPayload(decoding: payload.encoded) == payload)
        let later = SyncItemPayload.Stamp(clock: HybridLogicalClock(rawValue: 43 << 16), writer: "dev-b")
        let tombstone = SyncItemPayload.tombstone(of: payload, .genericPassword, later)
        #expect(try SyncItemPayload(decoding: tombstone.encoded) == tombstone)
        #expect(tombstone.isDeleted && tombstone.secret?.value == nil && tombstone.fields == payload.fields)
        let bare = SyncItemPayload.tombstone(of: nil, .internetPassword, later)
        #expect(try SyncItemPayload(decoding: bare.encoded) == bare)
        #expect(payload.attributes == ["acct": .string("alice"), "svce": .string("mail"), "cdat": .date(Date(timeIntervalSinceReferenceDate: 1000))])
        #expect(payload.accessGroup == "com.example.app" && payload.protection == .afterFirstUnlock)
    }

    @Test func whatMayNotComeHereIsRefused() {
        let refused: [(String, SyncItemPayload)] = [
            ("ThisDeviceOnly", Self.payload(protection: .whenUnlockedThisDeviceOnly)),
            ("a daemon group", Self.payload(group: "trousseau.trust-settings")),
            ("a profile's group", Self.payload(group: "trousseau.profile.com.example")),
            ("a Secret Service collection", Self.payload(group: "unsigned.0123456789abcdef/collection/scratch")),
            ("an access control", Self.payload(extra: ["accc": .data(Data([1]))])),
            ("a token id", Self.payload(extra: ["tkid": .string("com.example.token")])),
            ("no catalogue attribute", Self.payload(extra: ["evil": .string("x")])),
            ("an inet attribute on genp", Self.payload(extra: ["srvr": .string("example.com")])),
            ("a deleted item with its secret", { var p = Self.payload(); p.deletion = SyncItemPayload.Stamp(clock: HybridLogicalClock(rawValue: 50 << 16), writer: "dev-b"); return p }()),
        ]
        for (what, payload) in refused {
            #expect(throws: KeychainError.self, "\(what)") { try SyncItemPayload(decoding: payload.encoded) }
        }
    }

    @Test func everyTruncationIsRefusedAndNamesNoValue() throws {
        let bytes = Self.payload().encoded.withUnsafeBytes { Array($0) }
        for length in 0..<bytes.count {
            do {
                _ = try SyncItemPayload(decoding: SecretBytes(bytes[..<length]))
                Issue.record("a payload cut at \(length) decoded")
            } catch let error as KeychainError {
                #expect(error.status == OSStatusCode.decode)
                #expect(!error.message.contains("alice") && !error.message.contains("top secret"))
            }
        }
        #expect(throws: KeychainError.self) { try SyncItemPayload(decoding: SecretBytes(bytes + [0])) }
    }
}
