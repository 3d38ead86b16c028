import FoundationEssentials
import KeychainCertificates
import KeychainKeys
import KeychainLogging
import KeychainModel
import KeychainProfiles
import KeychainProtocol
import KeychainStore
import KeychainCallers
import KeychainSystem

/// Installed configuration profiles (docs/ARCHITECTURE.md, "Configuration profiles").
///
/// A profile's items live in a group of their own, `trousseau.profile.<PayloadIdentifier>`,
/// which no caller can be entitled to (groups are in their team's namespace): that group is
/// how an item remembers its profile. The profile's record (what `profiles list/show`
/// print, and its root payloads' anchors) is an item of `trousseau.profiles`. Install writes
/// the group and the record in one transaction, replacing a profile of the same identifier;
/// remove deletes both in one transaction. Records are always available (ThisDeviceOnly),
/// so that the profile's anchors count and it can be listed and removed while locked.
struct ProfileStore: Sendable {
    static let recordGroup = AccessGroups.DaemonGroup.profileRecords.rawValue
    static let itemGroupPrefix = AccessGroups.profileItemGroupPrefix
    private static let recordService = "configuration-profile"

    let store: KeychainStore
    let trustSettings: TrustSettingsStore
    /// The System keychain's profiles also make their roots the administrator's anchors.
    let systemScope: Bool
    private let cache = Cache()

    private final class Cache: Sendable {
        let records = BlockingMutex<[StoredProfile]?>(nil)
    }

    init(store: KeychainStore, trustSettings: TrustSettingsStore, systemScope: Bool) {
        self.store = store
        self.trustSettings = trustSettings
        self.systemScope = systemScope
    }

    /// The group of the items `identifier`'s profile installed.
    static func itemGroup(_ identifier: String) -> String { itemGroupPrefix + identifier }

    /// Whether `group` holds a profile's items.
    static func isProfileGroup(_ group: String) -> Bool { group.hasPrefix(itemGroupPrefix) }

    /// Installs a profile file: reads and checks it whole (signature, payloads) before
    /// anything is written, then writes its items and record in one transaction.
    func install(_ file: Data, verify: ([Data]) -> Bool) throws -> ProfileRecord {
        var profile = try ConfigurationProfile(file: file)
        let encrypted = profile.encryptedPayloads != nil
        if let message = profile.encryptedPayloads {
            try profile.openPayloads { _ throws(KeychainError) in try decrypt(message) }
        }
        let installation = try ProfileInstallation(profile)
        let verification: ProfileVerification
        var signer: String?
        if let leaf = profile.signerCertificates.first {
            verification = verify(profile.signerCertificates) ? .verified : .unverified
            signer = (try? CertificateFields(der: Array(leaf)))?.subjectSummary
        } else {
            verification = .unsigned
        }
        let record = ProfileRecord(
            identifier: profile.identifier, uuid: String(profile.uuid.prefix(1024)), displayName: profile.displayName.map { String($0.prefix(1024)) },
            description: profile.description.map { String($0.prefix(1024)) }, organization: profile.organization.map { String($0.prefix(1024)) },
            version: profile.version, removalDisallowed: profile.removalDisallowed, verification: verification, signer: signer,
            encrypted: encrypted, installationDate: Date(), payloads: installation.payloads)
        let group = Self.itemGroup(profile.identifier)
        var items = installation.items.map { item in
            var item = item
            item[SecName.kSecAttrAccessGroup] = .string(group)
            return item
        }
        let replaced = try stored().first { $0.record.identifier == profile.identifier }
        // The System keychain's: its roots are every user's anchors, through the
        // administrator's trust settings (each user's securityd reads them).
        let adminAnchors = systemScope ? try trustSettings.addAdminAnchors(installation.anchors) : []
        var stored = ByteWriter()
        let previous = replaced?.adminAnchors ?? []
        let kept = previous.filter(installation.anchors.contains)
        StoredProfile(record: record, anchors: installation.anchors, adminAnchors: kept + adminAnchors).encode(to: &stored)
        var recordItem = recordQuery(profile.identifier)
        recordItem[SecName.kSecAttrAccessible] = .string(ProtectionClass.alwaysThisDeviceOnly.rawValue)
        recordItem[SecName.kSecAttrLabel] = .string("Configuration profile")
        recordItem[SecName.kSecValueData] = .data(Data(stored.bytes))
        items.append(recordItem)
        do {
            try store.replaceGroup(group, with: items, caller: .profileInstallation(profile.identifier))
        } catch {
            try? trustSettings.removeAdminAnchors(adminAnchors)
            throw error
        }
        cache.records.withLock { $0 = nil }
        // The replaced profile's roots the new one does not have are no longer anchors.
        try trustSettings.removeAdminAnchors(previous.filter { !installation.anchors.contains($0) })
        return record
    }

    /// Removes the profile `identifier` and exactly the items it installed.
    ///
    /// - Throws: errSecItemNotFound when no such profile is installed.
    func remove(_ identifier: String) throws {
        let group = Self.itemGroup(identifier)
        let removed = try stored().first { $0.record.identifier == identifier }
        do {
            try store.deleteGroup(group, with: recordQuery(identifier), caller: .profileInstallation(identifier))
        } catch let error as KeychainError where error.status == OSStatusCode.itemNotFound {
            throw KeychainError(status: OSStatusCode.itemNotFound, message: "no configuration profile \(identifier) is installed")
        }
        cache.records.withLock { $0 = nil }
        try trustSettings.removeAdminAnchors(removed?.adminAnchors ?? [])
    }

    /// The installed profiles, by identifier.
    func records() throws -> [ProfileRecord] {
        try stored().map(\.record)
    }

    /// The certificates of installed profiles' root payloads, as trust settings that make
    /// them anchors (a profile's root is trusted in its scope, as on macOS).
    func anchorSettings() -> [TrustSettingsRecord] {
        do {
            return try stored().flatMap(\.anchors).map { TrustSettingsRecord(certificate: $0, constraints: []) }
        } catch {
            let status = (error as? KeychainError)?.status.rawValue ?? OSStatusCode.securityInternal.rawValue
            DaemonLog.logger.warning("configuration profiles cannot be read: OSStatus \(status)")
            return []
        }
    }

    private func stored() throws -> [StoredProfile] {
        if let cached = cache.records.withLock({ $0 }) { return cached }
        var query: [String: KeychainValue] = [
            SecName.kSecClass: .string(SecName.kSecClassGenericPassword), SecName.kSecAttrService: .string(Self.recordService),
            SecName.kSecAttrAccessGroup: .string(Self.recordGroup),
        ]
        query["r_Data"] = .bool(true)
        query["m_Limit"] = .string("m_LimitAll")
        var profiles: [StoredProfile] = []
        do {
            guard case .array(let found)? = try store.copyMatching(query, caller: .daemon(.profileRecords)) else { return [] }
            for case .data(let data) in found {
                var reader = ByteReader(data)
                profiles.append(try StoredProfile(from: &reader))
                try reader.expectEnd("configuration profile record")
            }
        } catch let error as KeychainError where error.status == OSStatusCode.itemNotFound {
        }
        profiles.sort { $0.record.identifier < $1.record.identifier }
        cache.records.withLock { $0 = profiles }
        return profiles
    }

    private func recordQuery(_ identifier: String) -> [String: KeychainValue] {
        [
            SecName.kSecClass: .string(SecName.kSecClassGenericPassword), SecName.kSecAttrService: .string(Self.recordService),
            SecName.kSecAttrAccount: .string(identifier), SecName.kSecAttrAccessGroup: .string(Self.recordGroup),
        ]
    }

    /// Opens EnvelopedData with the keychain's identity that is a recipient of it: the
    /// certificates are searched for a recipient first, and only a recipient's private key
    /// is read (a keychain's other keys are never unwrapped for a profile).
    private func decrypt(_ message: Data) throws(KeychainError) -> SecretBytes {
        let every = AccessGroups.profileDecryption
        func found(_ query: [String: KeychainValue], limit: KeychainValue) -> [[String: KeychainValue]] {
            var query = query
            query["r_Attributes"] = .bool(true)
            query["r_Data"] = .bool(true)
            query["m_Limit"] = limit
            switch try? store.copyMatching(query, caller: every) {
            case .array(let items)?: return items.compactMap { if case .dictionary(let item) = $0 { item } else { nil } }
            case .dictionary(let item)?: return [item]
            default: return []
            }
        }
        for certificate in found([SecName.kSecClass: .string(SecName.kSecClassCertificate)], limit: .string("m_LimitAll")) {
            guard case .data(let der)? = certificate[SecName.kSecValueData], CMSMessage.isRecipient(der, of: message),
                let publicKeyHash = certificate[SecName.kSecAttrPublicKeyHash]
            else { continue }
            let keyQuery: [String: KeychainValue] = [
                SecName.kSecClass: .string(SecName.kSecClassKey), SecName.kSecAttrKeyClass: .string(SecName.kSecAttrKeyClassPrivate),
                SecName.kSecAttrApplicationLabel: publicKeyHash,
            ]
            guard let key = found(keyQuery, limit: .number(1)).first, case .data(let external)? = key[SecName.kSecValueData],
                let type = Self.keyType(key[SecName.kSecAttrKeyType]),
                let pkcs8 = (try? AsymmetricKey(externalRepresentation: external, type: type, keyClass: .private))?.pkcs8Representation
            else { continue }
            return try CMSMessage.decrypt(message, key: SecretBytes(pkcs8), certificate: der)
        }
        throw KeychainError(
            status: .itemNotFound, message: "the profile's payloads are encrypted for an identity this keychain does not hold (or it is locked)")
    }
}

extension ProfileStore {
    /// `kSecAttrKeyType` as stored: Apple's decimal string, or the number it reads as.
    fileprivate static func keyType(_ value: KeychainValue?) -> AsymmetricKey.KeyType? {
        switch value {
        case .string(let text)?: AsymmetricKey.KeyType(attributeValue: text)
        case .number(let number)?: AsymmetricKey.KeyType(attributeValue: String(number))
        default: nil
        }
    }
}

/// A profile's record as stored: what is shown, its root payloads' certificates, and those
/// of them it made the administrator's anchors (System keychain).
struct StoredProfile: WireCodable, Sendable {
    var record: ProfileRecord
    var anchors: [Data]
    var adminAnchors: [Data]

    init(record: ProfileRecord, anchors: [Data], adminAnchors: [Data]) {
        self.record = record
        self.anchors = anchors
        self.adminAnchors = adminAnchors
    }

    init(from reader: inout ByteReader) throws {
        record = try ProfileRecord(from: &reader)
        anchors = try Self.certificates(from: &reader)
        adminAnchors = try Self.certificates(from: &reader)
    }

    func encode(to writer: inout ByteWriter) {
        record.encode(to: &writer)
        for list in [anchors, adminAnchors] {
            writer.appendInteger(UInt16(clamping: list.count))
            for certificate in list.prefix(Int(UInt16.max)) { writer.appendLengthPrefixed(certificate) }
        }
    }

    private static func certificates(from reader: inout ByteReader) throws -> [Data] {
        let count = Int(try reader.integer(UInt16.self))
        return try (0..<count).map { _ in try reader.lengthPrefixed(limit: 1 << 20) }
    }
}
