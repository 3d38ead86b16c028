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

    /// The record that carries the member's attestation (``attestation(of:)``).
    public static func attestationRecord(of member: SyncIdentifier) -> SyncIdentifier? { SyncIdentifier("attest-" + member.rawValue) }

    /// What the recovery key's member signs when it is added (the key is at hand then, never
    /// after): the `add` entry of itself, at the index and after the hash its real `add` has —
    /// signed by itself. A device recovering with the key trusts no pin; it requires this, so a
    /// server cannot make a chain of its own that adds the member (whose public keys anyone can
    /// read) and hand the device keys it holds: the entry's `previous` fixes every entry before.
    public static func attestation(of added: MembershipRecord, member keys: SyncDevicePublicKeys) -> MembershipRecord {
        MembershipRecord.unsigned(account: added.account, index: added.index, previous: added.previous, operation: .add(keys), signer: keys.device)
    }

    /// Checks a recovery member's attestation against `chain` (verified from its genesis): signed
    /// by the member, and naming the index and previous hash of the chain's own `add` of it.
    public static func check(attestation bytes: Data, of keys: SyncDevicePublicKeys, in chain: [MembershipRecord]) throws(SyncCryptoError) {
        let attestation = try MembershipRecord(decoding: bytes)
        guard attestation.signer == keys.device, attestation.isSigned(by: keys.signing), attestation.operation == .add(keys),
            attestation.index >= 1, attestation.index < chain.count
        else { throw SyncCryptoError(.badSignature, "the recovery key's attestation is not its member's") }
        let added = chain[Int(attestation.index)]
        guard added.account == attestation.account, added.previous == attestation.previous, added.operation == .add(keys) else {
            throw SyncCryptoError(.fork, "the chain is not the one the recovery key was added to")
        }
    }

    /// The key as it is shown once: groups of four characters joined by dashes.
    public static func grouped(_ key: SecretBytes) -> SecretBytes {
        key.withUnsafeBytes { bytes in
            var out = [UInt8]()
            out.reserveCapacity(bytes.count + bytes.count / 4)
            for (index, byte) in bytes.enumerated() {
                if index > 0, index % 4 == 0 { out.append(UInt8(ascii: "-")) }
                out.append(byte)
            }
            defer { out.withUnsafeMutableBytes { SecretBytes.zero($0) } }
            return out.withUnsafeBytes { SecretBytes($0) }
        }
    }
}
