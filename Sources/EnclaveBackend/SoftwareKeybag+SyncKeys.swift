import Crypto
import EnclaveProtocol
import FoundationEssentials
import KeychainCrypto
import KeychainModel
import SyncCrypto
import SyncProtocol

// Sync keys: the device's sync identity and the zones' keys, made, used and re-wrapped here
// only. Each is wrapped like an enclave key, by a key derived from a class key for this
// purpose alone (ClassKey.syncKeyWrapping), and unwrapped for one request. What leaves is a
// blob, a signature, an envelope, a share, or an item's plaintext — never a key. Each key is
// used for its role alone (SyncKeyRole): zone keys wrap class keys and travel in shares,
// class keys wrap records. Who may receive a share is securityd's to decide (it verifies the
// membership chain); the enclave checks the form, the roles and the signatures.

extension SoftwareKeybag {
    /// A new sync identity for `device`.
    public func createSyncIdentity(device: SyncIdentifier) throws -> SyncIdentityBlob {
        try wrapSyncIdentity(ItemKey.generate(), device: device)
    }

    private static let hexDigits = Array("0123456789abcdef")

    /// The identity of `device` with `secret`, wrapped for its class.
    private func wrapSyncIdentity(_ secret: ItemKey, device: SyncIdentifier) throws -> SyncIdentityBlob {
        let keys = try Self.deviceKeys(device: device, secret: secret)
        var blob = SyncIdentityBlob(publicKeys: keys.publicKeys, wrapped: Data())
        blob.wrapped = try wrap(secret, for: SyncIdentityBlob.protection, associatedData: blob.associatedData, access: nil, context: nil) {
            $0.syncKeyWrapping()
        }.wrapped
        return blob
    }

    /// A new recovery key — 32 characters of RFC 4648's base32 alphabet, 160 random bits —
    /// and the identity it derives, wrapped here (``importSyncRecoveryIdentity(_:)``).
    public func createSyncRecoveryIdentity() throws -> (key: SecretBytes, identity: SyncIdentityBlob) {
        var generator = SystemRandomNumberGenerator()
        var characters = [UInt8](repeating: 0, count: SyncRecovery.keyLength)
        defer { characters.withUnsafeMutableBytes { SecretBytes.zero($0) } }
        for index in characters.indices { characters[index] = SyncRecovery.alphabet[Int.random(in: 0..<32, using: &generator)] }
        let key = characters.withUnsafeBytes { SecretBytes($0) }
        return (key, try importSyncRecoveryIdentity(key))
    }

    /// The identity a recovery key derives (its case, spaces and dashes aside): the secret
    /// and the device id by HKDF-SHA256 of the key's characters, so any device given the key
    /// derives the same member; wrapped for this device.
    ///
    /// - Throws: `errSecAuthFailed` for text that is not a recovery key.
    public func importSyncRecoveryIdentity(_ key: SecretBytes) throws -> SyncIdentityBlob {
        // Sized once, so no reallocation leaves a copy behind.
        var normalized = [UInt8]()
        normalized.reserveCapacity(key.withUnsafeBytes { $0.count })
        key.withUnsafeBytes { bytes in
            for byte in bytes where byte != UInt8(ascii: "-") && byte != UInt8(ascii: " ") {
                normalized.append(byte >= 0x61 && byte <= 0x7a ? byte - 0x20 : byte)
            }
        }
        defer { normalized.withUnsafeMutableBytes { SecretBytes.zero($0) } }
        guard normalized.count == SyncRecovery.keyLength, normalized.allSatisfy({ SyncRecovery.alphabet.contains($0) }) else {
            throw KeychainError(status: OSStatusCode.authFailed, message: "not a recovery key: it is 32 letters and digits, as `recovery-key create` printed it")
        }
        let material = normalized.withUnsafeBytes { SymmetricKey(data: $0) }
        let secret = try HKDF<SHA256>.deriveKey(inputKeyMaterial: material, info: Data("trousseau sync recovery identity".utf8), outputByteCount: 32)
            .withUnsafeBytes { try ItemKey(bytes: SecretBytes($0)) }
        let id = HKDF<SHA256>.deriveKey(inputKeyMaterial: material, info: Data("trousseau sync recovery device id".utf8), outputByteCount: 8)
            .withUnsafeBytes { bytes in String(bytes.flatMap { [Self.hexDigits[Int($0 >> 4)], Self.hexDigits[Int($0 & 0xf)]] }) }
        return try wrapSyncIdentity(secret, device: SyncRecovery.device(id))
    }

    /// Signs an unsigned membership entry as `identity`: the entry's bytes, signed.
    ///
    /// - Throws: `errSecParam` for an entry another device is to sign; `errSecDecode` for
    ///   bytes that are not an entry, or a blob that is not this keybag's.
    public func signMembershipRecord(_ record: Data, as identity: SyncIdentityBlob) throws -> Data {
        let entry = try refusingSyncErrors { try MembershipRecord(decoding: record) }
        guard entry.signer == identity.publicKeys.device else { throw KeychainError.param("the entry names another device as its signer") }
        return try entry.signed(with: try signingKey(identity)).encoded
    }

    /// The identity's credential on the sync server (a bearer token the server keeps as
    /// SHA-256): HKDF-SHA256 of the identity's secret, apart from its keys' seeds.
    public func syncCredential(_ identity: SyncIdentityBlob) throws -> SecretBytes {
        let secret = try identitySecret(identity)
        return secret.secretBytes.withUnsafeBytes { bytes in
            HKDF<SHA256>.deriveKey(
                inputKeyMaterial: SymmetricKey(data: bytes), info: Data("trousseau sync credential".utf8), outputByteCount: 32
            ).withUnsafeBytes { SecretBytes($0) }
        }
    }

    /// A new sync key for `role`.
    public func createSyncKey(role: SyncKeyRole) throws -> SyncKeyBlob {
        try wrapSyncKey(ItemKey.generate(), id: SyncIdentifier.random(), role: role)
    }

    /// Seals `plaintext` as the record `context` (an item, a key pointer or a head) under the
    /// class key `parent`, signed by `identity`: the envelope's bytes.
    ///
    /// - Throws: `errSecParam` for a key record's context, a zone key as the parent, or a
    ///   plaintext too long for a record.
    public func sealSyncRecord(_ plaintext: SecretBytes, context: SyncRecordContext, parent: SyncKeyBlob, identity: SyncIdentityBlob) throws -> Data {
        try Self.require(context, [.item, .keyPointer, .head])
        try Self.require(parent, [.classA, .classC])
        guard SyncPadding.bucket(for: plaintext.count) + Self.sealOverhead <= SyncLimits.recordBody else {
            throw KeychainError.param("the plaintext is too long for a sync record once padded")
        }
        let signing = try signingKey(identity)
        let parentKey = try syncKey(parent)
        return try SyncRecordEnvelope.seal(
            plaintext, context: context, parent: (parent.keyID, parentKey), writer: identity.publicKeys.device, signingKey: signing
        ).encoded
    }

    /// Opens the record `context` written by the member `writer` (Ed25519 key `writerKey`)
    /// under the class key `parent`.
    ///
    /// - Throws: `errSecParam` for a key record's context or a zone key as the parent;
    ///   `errSecDecode` for an envelope that is malformed, written or signed by another
    ///   device, under another parent, or moved or edited; `errSecInteractionNotAllowed` while
    ///   the parent's class is locked.
    public func openSyncRecord(_ envelope: Data, context: SyncRecordContext, parent: SyncKeyBlob, writer: SyncIdentifier, writerKey: Data) throws -> SecretBytes {
        try Self.require(context, [.item, .keyPointer, .head])
        try Self.require(parent, [.classA, .classC])
        return try openEnvelope(envelope, context: context, parent: parent, writer: writer, writerKey: writerKey)
    }

    /// Seals the class key `key` as the class-key record `context` under the zone key
    /// `parent`. The signed plaintext says the key's role (A or C), so a receiving device
    /// wraps it for the same class.
    public func sealSyncKey(_ key: SyncKeyBlob, context: SyncRecordContext, parent: SyncKeyBlob, identity: SyncIdentityBlob) throws -> Data {
        try Self.require(context, [.classKey])
        try Self.require(key, [.classA, .classC])
        try Self.require(parent, [.zone])
        guard context.record == key.keyID else { throw KeychainError.param("a class-key record is named by its key's id") }
        let signing = try signingKey(identity)
        let parentKey = try syncKey(parent)
        let role = key.role.rawValue
        let inner = try unwrapSyncKey(key).secretBytes
        let plaintext = SecretBytes(count: 1 + inner.count) { buffer in
            buffer[0] = role
            inner.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: buffer[1...]).copyMemory(from: $0) }
        }
        return try SyncRecordEnvelope.seal(
            plaintext, context: context, parent: (parent.keyID, parentKey), writer: identity.publicKeys.device, signingKey: signing
        ).encoded
    }

    /// Opens a class-key record under the zone key `parent` into a blob of this keybag: the
    /// key named by the record's id, for the role its signed plaintext names.
    public func openSyncKey(_ envelope: Data, context: SyncRecordContext, parent: SyncKeyBlob, writer: SyncIdentifier, writerKey: Data) throws -> SyncKeyBlob {
        try Self.require(context, [.classKey])
        try Self.require(parent, [.zone])
        let plaintext = try openEnvelope(envelope, context: context, parent: parent, writer: writer, writerKey: writerKey)
        guard plaintext.count == 33 else { throw KeychainError.decode("a class-key record holds a role and a 32-byte key") }
        let (roleByte, key) = try plaintext.withUnsafeBytes { bytes in
            (bytes[0], try ItemKey(bytes: SecretBytes(UnsafeRawBufferPointer(rebasing: bytes[1...]))))
        }
        guard let role = SyncKeyRole(rawValue: roleByte), role != .zone else { throw KeychainError.decode("a class-key record names no class key") }
        return try wrapSyncKey(key, id: context.record, role: role)
    }

    /// Shares the zone key `key` with `recipient`, signed by `identity`: the share's bytes.
    /// Only a zone key is shared (class keys travel wrapped by it).
    public func sealSyncKeyShare(_ key: SyncKeyBlob, context: SyncRecordContext, to recipient: SyncDevicePublicKeys, identity: SyncIdentityBlob) throws -> Data {
        try Self.require(context, [.keyShare])
        try Self.require(key, [.zone])
        let keys = try deviceKeys(identity)
        return try SyncKeyShare.seal(try syncKey(key), keyID: key.keyID, context: context, to: recipient, from: keys).encoded
    }

    /// Opens a share addressed to `identity` from the member `sender` (Ed25519 key
    /// `senderKey`) into a zone-key blob.
    public func openSyncKeyShare(_ share: Data, context: SyncRecordContext, identity: SyncIdentityBlob, sender: SyncIdentifier, senderKey: Data) throws -> SyncKeyBlob {
        try Self.require(context, [.keyShare])
        let senderPublic = try Self.signingKey(senderKey)
        let keys = try deviceKeys(identity)
        let received = try refusingSyncErrors {
            let decoded = try SyncKeyShare(decoding: share)
            return (decoded.keyID, try decoded.open(context: context, recipient: keys) { $0 == sender ? senderPublic : nil })
        }
        return try wrapSyncKey(try ItemKey(bytes: received.1.withUnsafeBytes { SecretBytes($0) }), id: received.0, role: .zone)
    }

    // MARK: Wrapping

    private func wrapSyncKey(_ key: ItemKey, id: SyncIdentifier, role: SyncKeyRole) throws -> SyncKeyBlob {
        var blob = SyncKeyBlob(keyID: id, role: role, wrapped: Data())
        blob.wrapped = try wrap(key, for: role.protection, associatedData: blob.associatedData, access: nil, context: nil) { $0.syncKeyWrapping() }.wrapped
        return blob
    }

    private func unwrapSyncKey(_ blob: SyncKeyBlob) throws -> ItemKey {
        try unwrap(blob.wrapped, for: blob.protection, associatedData: blob.associatedData, access: nil, context: nil) { $0.syncKeyWrapping() }
    }

    private func syncKey(_ blob: SyncKeyBlob) throws -> SymmetricKey {
        try unwrapSyncKey(blob).secretBytes.withUnsafeBytes { SymmetricKey(data: $0) }
    }

    /// The identity's keys, once its class is available; checked against its public keys.
    /// (Shares need the X-Wing key; everything else signs only: ``signingKey(_:)``, which
    /// skips X-Wing's key generation, most of the cost.)
    private func deviceKeys(_ blob: SyncIdentityBlob) throws -> SyncDeviceKeys {
        let keys = try Self.deviceKeys(device: blob.publicKeys.device, secret: try identitySecret(blob))
        // The wrapping authenticated the public keys with the secret: they are one identity.
        guard keys.publicKeys == blob.publicKeys else { throw KeychainError.decode("the sync identity does not match its public keys") }
        return keys
    }

    /// The identity's Ed25519 key alone, checked against its public key.
    private func signingKey(_ blob: SyncIdentityBlob) throws -> Curve25519.Signing.PrivateKey {
        let seeds = Self.seeds(try identitySecret(blob))
        let key = try seeds.withUnsafeBytes { try Curve25519.Signing.PrivateKey(rawRepresentation: $0.prefix(32)) }
        guard key.publicKey.rawRepresentation == blob.publicKeys.signing.rawRepresentation else {
            throw KeychainError.decode("the sync identity does not match its public keys")
        }
        return key
    }

    private func identitySecret(_ blob: SyncIdentityBlob) throws -> ItemKey {
        try unwrap(blob.wrapped, for: SyncIdentityBlob.protection, associatedData: blob.associatedData, access: nil, context: nil) {
            $0.syncKeyWrapping()
        }
    }

    private static func deviceKeys(device: SyncIdentifier, secret: ItemKey) throws -> SyncDeviceKeys {
        let seeds = Self.seeds(secret)
        return try refusingSyncErrors { try SyncDeviceKeys(device: device, seeds: seeds.withUnsafeBytes { SecretBytes($0) }) }
    }

    /// The Ed25519 seed, then the X-Wing seed: HKDF-SHA256 of the identity's secret.
    private static func seeds(_ secret: ItemKey) -> SymmetricKey {
        secret.secretBytes.withUnsafeBytes { bytes in
            HKDF<SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(data: bytes), info: Data("trousseau sync device keys".utf8), outputByteCount: 64)
        }
    }

    // MARK: Checks

    private func openEnvelope(_ envelope: Data, context: SyncRecordContext, parent: SyncKeyBlob, writer: SyncIdentifier, writerKey: Data) throws -> SecretBytes {
        let writerPublic = try Self.signingKey(writerKey)
        let parentKey = try syncKey(parent)  // the class's lock state first, as for an item
        return try refusingSyncErrors {
            let decoded = try SyncRecordEnvelope(decoding: envelope)
            return try decoded.open(context: context) { $0 == parent.keyID ? parentKey : nil } writerKey: { $0 == writer ? writerPublic : nil }
        }
    }

    /// AES-GCM's nonce and tag around a padded plaintext.
    private static let sealOverhead = 28

    private static func require(_ context: SyncRecordContext, _ types: Set<SyncRecordType>) throws {
        guard types.contains(context.type) else { throw KeychainError.param("this request does not handle \(context.type) records") }
    }

    private static func require(_ key: SyncKeyBlob, _ roles: Set<SyncKeyRole>) throws {
        guard roles.contains(key.role) else { throw KeychainError.param("a \(key.role) key cannot be used here") }
    }

    private static func signingKey(_ bytes: Data) throws -> Curve25519.Signing.PublicKey {
        guard bytes.count == SyncDevicePublicKeys.signingKeyLength, let key = try? Curve25519.Signing.PublicKey(rawRepresentation: bytes) else {
            throw KeychainError.param("a device's signing key is 32 bytes")
        }
        return key
    }
}

/// Runs `body`, answering a refusal of SyncCrypto's as `errSecDecode` with its message (which
/// names no value).
private func refusingSyncErrors<T>(_ body: () throws -> T) throws -> T {
    do {
        return try body()
    } catch let error as SyncCryptoError {
        throw KeychainError.decode(error.description)
    }
}
