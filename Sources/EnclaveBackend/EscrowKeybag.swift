import FoundationEssentials
import KeychainCrypto
import KeychainModel
import KeychainSystem
import EnclaveProtocol

/// An escrow keybag: the class C keys (AfterFirstUnlock and its ThisDeviceOnly variant)
/// wrapped under a random 256-bit escrow secret entangled with the device key, kept in
/// `KEYCHAIN_HOME/escrow/ID`. Whoever holds the secret — a designated agent such as an
/// unattended backup job — can make class C available after a restart without the
/// passcode; class A and WhenPasscodeSet keys are never in it. Deleting the file revokes it.
///
/// Format: "TREK", version 1, id (16), entry count u8, per entry the class name and the
/// wrapped key (both u32-length-prefixed).
struct EscrowKeybag {
    static let classes: [ProtectionClass] = [.afterFirstUnlock, .afterFirstUnlockThisDeviceOnly]
    static let magic = Data("TREK".utf8)
    static let version: UInt8 = 1
    static let directoryName = "escrow"

    let id: Data
    var entries: [ProtectionClass: Data] = [:]

    /// The escrow of `keys` (only its class C keys) under `secret`.
    init(id: Data, keys: [ProtectionClass: ClassKey], secret: SecretBytes, deviceKey: any DeviceKey) throws {
        self.id = id
        let wrapping = try Self.wrappingKey(id: id, secret: secret, deviceKey: deviceKey)
        for protection in Self.classes {
            guard let key = keys[protection] else { throw KeychainError.internalComponent }
            entries[protection] = try wrapping.wrap(key, associatedData: Self.associatedData(id: id, protection))
        }
    }

    init(decoding data: Data) throws {
        var reader = ByteReader(data)
        guard Data(try reader.bytes(4)) == Self.magic, try reader.byte() == Self.version else {
            throw KeychainError.decode("not a Trousseau escrow keybag")
        }
        id = Data(try reader.bytes(16))
        for _ in 0..<Int(try reader.byte()) {
            let name = String(decoding: try reader.lengthPrefixed(limit: 8), as: UTF8.self)
            guard let protection = ProtectionClass(rawValue: name), Self.classes.contains(protection) else {
                throw KeychainError.decode("an escrow keybag holds only class C keys")
            }
            entries[protection] = try reader.lengthPrefixed(limit: 256)
        }
        guard reader.isAtEnd else { throw KeychainError.decode("trailing bytes in escrow keybag") }
    }

    var encoded: Data {
        var out = Self.magic
        out.append(Self.version)
        out.append(id)
        let ordered = Self.classes.filter { entries[$0] != nil }
        out.append(UInt8(ordered.count))
        for protection in ordered {
            out.appendLengthPrefixed(Data(protection.rawValue.utf8))
            out.appendLengthPrefixed(entries[protection]!)  // filtered above
        }
        return out
    }

    /// The class keys, opened with the escrow secret.
    ///
    /// - Throws: `errSecAuthFailed` for a wrong secret.
    func open(secret: SecretBytes, deviceKey: any DeviceKey) throws -> [ProtectionClass: ClassKey] {
        let wrapping = try Self.wrappingKey(id: id, secret: secret, deviceKey: deviceKey)
        var keys: [ProtectionClass: ClassKey] = [:]
        for (protection, wrapped) in entries {
            do {
                keys[protection] = try wrapping.unwrap(wrapped, associatedData: Self.associatedData(id: id, protection))
            } catch {
                throw KeychainError(status: OSStatusCode.authFailed, message: "the escrow secret is not correct")
            }
        }
        return keys
    }

    static func path(in directory: String, id: Data) -> String {
        directory + "/" + directoryName + "/" + id.lowercaseHex
    }

    private static func associatedData(id: Data, _ protection: ProtectionClass) -> Data {
        Data("trousseau escrow keybag".utf8) + id + Data(protection.rawValue.utf8)
    }

    private static func wrappingKey(id: Data, secret: SecretBytes, deviceKey: any DeviceKey) throws -> WrappingKey {
        var message = Data("trousseau escrow".utf8) + id
        secret.withUnsafeBytes { message.append(contentsOf: $0) }
        defer { message.withUnsafeMutableBytes { SecretBytes.zero($0) } }
        return WrappingKey(deriving: try deviceKey.authenticationCode(for: message), info: "trousseau escrow wrapping key")
    }
}
