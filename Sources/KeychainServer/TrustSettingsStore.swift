import Crypto
import FoundationEssentials
import KeychainLogging
import KeychainModel
import KeychainProtocol
import KeychainStore
import KeychainSystem
import SwiftASN1
import KeychainCallers

#if canImport(Glibc)
import Glibc
#endif

/// Trust settings, by domain (docs/ARCHITECTURE.md, "Trust settings"):
///
/// - the user's are items of the keychain itself: one per certificate, in a group no
///   caller can be entitled to, AlwaysThisDeviceOnly (evaluation must see a `deny` while the
///   keychain is locked), encrypted and authenticated like every item;
/// - the administrator's are one file, `/etc/trousseau/trust-settings`, that only root
///   writes and every user's securityd reads: no user's key could protect it for the
///   others, so its integrity is its owner (root) and mode (not writable by others), as
///   for `/etc/ssl`; a file that fails that check is ignored and logged;
/// - the system's are the operating system's CA bundle, read-only: nothing here writes it.
///
/// The user's domain is read from the store once and kept (this daemon is its only
/// writer); the administrator's file is read again when it changes.
struct TrustSettingsStore: Sendable {
    /// Trousseau's own namespace, like the local developer root's.
    static let accessGroup = AccessGroups.DaemonGroup.trustSettings.rawValue
    static let defaultAdminPath = "/etc/trousseau/trust-settings"
    /// The bundles a CA store is read from, the first that exists (as swift-certificates'
    /// `CertificateStore.systemTrustRoots`).
    static let systemBundles = ["/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt"]
    private static let service = "trust-settings"
    private static let fileLimit = 16 << 20

    let store: KeychainStore
    let adminPath: String
    private let cache = Cache()

    private final class Cache: Sendable {
        let user = BlockingMutex<[TrustSettingsRecord]?>(nil)
        let admin = BlockingMutex<(identity: [Int], records: [TrustSettingsRecord])?>(nil)
    }

    init(store: KeychainStore, adminPath: String) {
        self.store = store
        self.adminPath = adminPath
    }

    private var groups: AccessGroups { .daemon(.trustSettings) }

    /// The settings evaluation honours: the user's first, then the administrator's (the
    /// user's override, as on macOS).
    func evaluationSettings() -> [TrustSettingsRecord] {
        var settings: [TrustSettingsRecord] = []
        for domain in [TrustSettingsDomain.user, .admin] {
            do {
                settings += try records(domain)
            } catch {
                // Unreadable settings anchor nothing; say so (a deny in them is not seen).
                let status = (error as? KeychainError)?.status.rawValue ?? OSStatusCode.securityInternal.rawValue
                DaemonLog.logger.warning("trust settings (\(domain)) cannot be read: OSStatus \(status)")
            }
        }
        return settings
    }

    func records(_ domain: TrustSettingsDomain) throws -> [TrustSettingsRecord] {
        switch domain {
        case .user:
            if let cached = cache.user.withLock({ $0 }) { return cached }
            let loaded = try loadUser()
            cache.user.withLock { $0 = loaded }
            return loaded
        case .admin:
            return try loadAdmin()
        case .system:
            return Self.systemRoots().map { TrustSettingsRecord(certificate: Data($0), constraints: []) }
        }
    }

    /// Sets `record` in `domain` for `caller`: the administrator's only for root.
    func set(_ record: TrustSettingsRecord, in domain: TrustSettingsDomain, caller: Caller) throws {
        switch domain {
        case .user:
            let query = itemQuery(for: record.certificate)
            var writer = ByteWriter()
            record.encode(to: &writer)
            let value = KeychainValue.data(Data(writer.bytes))
            do {
                try store.update(query, attributes: ["v_Data": value], caller: groups)
            } catch let error as KeychainError where error.status == OSStatusCode.itemNotFound {
                var item = query
                item["pdmn"] = .string(ProtectionClass.alwaysThisDeviceOnly.rawValue)
                item["labl"] = .string("Trust settings")
                item["v_Data"] = value
                _ = try store.add(item, caller: groups)
            }
            cache.user.withLock { $0 = nil }
        case .admin:
            try requireRoot(caller)
            var records = try loadAdmin().filter { $0.certificate != record.certificate }
            records.append(record)
            try writeAdmin(records)
        case .system:
            throw KeychainError(status: OSStatusCode.readOnly, message: "the system's trust settings are the operating system's CA bundle")
        }
    }

    /// Removes the certificate's settings from `domain`; errSecItemNotFound when none.
    func remove(_ certificate: Data, from domain: TrustSettingsDomain, caller: Caller) throws {
        switch domain {
        case .user:
            try store.delete(itemQuery(for: certificate), caller: groups)
            cache.user.withLock { $0 = nil }
        case .admin:
            try requireRoot(caller)
            let records = try loadAdmin()
            guard records.contains(where: { $0.certificate == certificate }) else { throw KeychainError(status: OSStatusCode.itemNotFound) }
            try writeAdmin(records.filter { $0.certificate != certificate })
        case .system:
            throw KeychainError(status: OSStatusCode.readOnly, message: "the system's trust settings are the operating system's CA bundle")
        }
    }

    /// A System-scope profile's root payloads, made anchors for every user as on macOS: each
    /// certificate without an administrator's setting gets trustRoot. The System keychain's
    /// daemon calls this for its owner (root), who installed the profile.
    ///
    /// - Returns: the certificates it added a setting for (the profile's removal takes
    ///   back those, and not a setting the administrator made).
    func addAdminAnchors(_ certificates: [Data]) throws -> [Data] {
        var records = try loadAdmin()
        let added = certificates.filter { certificate in !records.contains { $0.certificate == certificate } }
        guard !added.isEmpty else { return [] }
        var seen = Set<Data>()
        for certificate in added where seen.insert(certificate).inserted {
            records.append(TrustSettingsRecord(certificate: certificate, constraints: []))
        }
        try writeAdmin(records)
        return Array(seen)
    }

    /// Takes back what ``addAdminAnchors(_:)`` added.
    func removeAdminAnchors(_ certificates: [Data]) throws {
        guard !certificates.isEmpty else { return }
        let records = try loadAdmin()
        let kept = records.filter { !certificates.contains($0.certificate) }
        if kept.count != records.count { try writeAdmin(kept) }
    }

    private func itemQuery(for certificate: Data) -> [String: KeychainValue] {
        let digest = Hexadecimal.string(SHA256.hash(data: certificate), uppercase: true)
        return ["class": .string(ItemClass.genericPassword.rawValue), "svce": .string(Self.service), "acct": .string(digest), "agrp": .string(Self.accessGroup)]
    }

    private func loadUser() throws -> [TrustSettingsRecord] {
        let query: [String: KeychainValue] = [
            "class": .string(ItemClass.genericPassword.rawValue), "svce": .string(Self.service), "agrp": .string(Self.accessGroup),
            "r_Data": .bool(true), "r_Attributes": .bool(true), "m_Limit": .string("m_LimitAll"),
        ]
        let found: KeychainValue?
        do {
            found = try store.copyMatching(query, caller: groups)
        } catch let error as KeychainError where error.status == OSStatusCode.itemNotFound {
            return []
        }
        guard case .array(let items)? = found else { return [] }
        return try items.compactMap { item -> TrustSettingsRecord? in
            guard case .dictionary(let attributes) = item, case .data(let data)? = attributes["v_Data"] else { return nil }
            var reader = ByteReader(data)
            let record = try TrustSettingsRecord(from: &reader)
            try reader.expectEnd("trust settings")
            return record
        }
        .sorted { $0.certificate.lexicographicallyPrecedes($1.certificate) }
    }

    private func requireRoot(_ caller: Caller) throws {
        guard caller.uid == 0 else {
            throw KeychainError(status: OSStatusCode.authorizationInteractionNotAllowed, message: "the administrator's trust settings are root's to change")
        }
    }

    /// The administrator's file, when root owns it and nobody else may write it.
    private func loadAdmin() throws -> [TrustSettingsRecord] {
        let fd = open(adminPath, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else {
            if errno == ENOENT { return [] }
            throw PrivateFile.ioError("cannot open \(adminPath)")
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw PrivateFile.ioError("cannot read \(adminPath)") }
        guard info.st_uid == 0, info.st_mode & 0o022 == 0 else {
            DaemonLog.logger.warning("ignoring \(adminPath): not root's, or writable by others")
            return []
        }
        let identity = [Int(info.st_dev), Int(info.st_ino), Int(info.st_size), Int(info.st_mtim.tv_sec), Int(info.st_mtim.tv_nsec)]
        if let cached = cache.admin.withLock({ $0 }), cached.identity == identity { return cached.records }
        var buffer = [UInt8](repeating: 0, count: min(Int(info.st_size), Self.fileLimit) + 1)
        let count = try PrivateFile.readAll(fd, into: &buffer)
        guard count <= Self.fileLimit else { throw KeychainError.decode("\(adminPath) is too large") }
        var reader = ByteReader(Data(buffer.prefix(count)))
        let records = try TrustSettingsRecord.decodeList(from: &reader)
        try reader.expectEnd("trust settings")
        cache.admin.withLock { $0 = (identity, records) }
        return records
    }

    private func writeAdmin(_ records: [TrustSettingsRecord]) throws {
        let directory = String(adminPath[..<(adminPath.lastIndex(of: "/") ?? adminPath.startIndex)])
        if !directory.isEmpty, mkdir(directory, 0o755) != 0, errno != EEXIST { throw PrivateFile.ioError("cannot create \(directory)") }
        var writer = ByteWriter()
        TrustSettingsRecord.encode(records, to: &writer)
        try PrivateFile.replace(adminPath, with: Data(writer.bytes))
        guard chmod(adminPath, 0o644) == 0 else { throw PrivateFile.ioError("cannot share \(adminPath)") }
    }

    /// The certificates of the system's CA bundle (DER), in the bundle's order.
    static func systemRoots() -> [[UInt8]] {
        guard let path = systemBundles.first(where: { access($0, R_OK) == 0 }),
            let text = try? String(contentsOfFile: path, encoding: .utf8),
            let documents = try? PEMDocument.parseMultiple(pemString: text)
        else { return [] }
        return documents.filter { $0.discriminator == "CERTIFICATE" }.map(\.derBytes)
    }
}

