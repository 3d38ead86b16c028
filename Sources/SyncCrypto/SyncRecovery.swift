import FoundationEssentials
import KeychainModel
import SyncProtocol

/// A recovery key (issue 33 point 5; docs/ARCHITECTURE.md, "The recovery key"): 32 characters
/// of RFC 4648's base32 alphabet (160 random bits), from which any device derives one sync
/// identity. That identity is added to the circle as a member, so the zone's keys are shared to
/// it like any member's; a device that has only the key becomes it, adds itself, and syncs.
/// Its device id says what it is (`recovery-` and 16 hex digits derived from the key): the
/// server, which reads the chain, learns that a circle has one, and nothing of the key.
public enum SyncRecovery {
    public static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".utf8)
    /// Characters in a key (5 bits each).
    public static let keyLength = 32
    static let prefix = "recovery-"

    /// The recovery member's device id for the 16 hex digits its key derives.
    public static func device(_ hex: String) -> SyncIdentifier { SyncIdentifier(prefix + hex)! }

    /// Whether `device` is a recovery key's member, not a device.
    public static func isRecovery(_ device: SyncIdentifier) -> Bool { device.rawValue.hasPrefix(prefix) }

    /// The key as it is shown once: groups of four characters joined by dashes.
    public static func grouped(_ key: SecretBytes) -> SecretBytes {
        key.withUnsafeBytes { bytes in
            var out = [UInt8]()
            out.reserveCapacity(bytes.count + bytes.count / 4)
            for (index, byte) in bytes.enumerated() {
                if index > 0, index % 4 == 0 { out.append(UInt8(ascii: "-")) }
                out.append(byte)
            }
            defer { out.withUnsafeMutableBytes { $0.initializeMemory(as: UInt8.self, repeating: 0) } }
            return out.withUnsafeBytes { SecretBytes($0) }
        }
    }
}
