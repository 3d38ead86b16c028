import Crypto
import FoundationEssentials
import KeychainCertificates
import KeychainClient
public import KeychainModel
import KeychainProtocol
import KeychainSystem

/// A keychain in the window's sidebar.
struct WindowKeychain: Sendable {
    enum Kind: Sendable { case login, file(String), systemRoots }

    /// What URLs name: `login`, `roots`, or `file-` and 16 hex digits of SHA-256 of its path
    /// (stable while the search list changes).
    let id: String
    let name: String
    let kind: Kind
    /// Nil when the keychain has no lock (System Roots) or its state cannot be read.
    var locked: Bool?
    var isReadOnly: Bool { if case .systemRoots = kind { true } else { false } }
    var isFile: Bool { if case .file = kind { true } else { false } }
}

/// The window's view of the keychain, through securityd: every call is a request of the
/// `keychain-access` role (docs/ARCHITECTURE.md, "How to add a caller policy"), sent over one
/// client connection that reconnects, and restarts securityd, when the daemon went away.
public final class KeychainDirectory: Sendable {
    let client: KeychainClient
    let paths: KeychainPaths

    public init(paths: KeychainPaths = .fromEnvironment()) throws {
        self.paths = paths
        client = try KeychainClient.connect(paths)
    }

    /// The login keychain, the file keychains of the search list, and System Roots.
    func keychains() -> [WindowKeychain] {
        var keychains = [WindowKeychain(id: "login", name: "login", kind: .login, locked: loginLocked())]
        let list = (try? KeychainSearchList(home: paths.home, loginPath: paths.database).list()) ?? []
        for path in list where path != paths.database {
            guard case .file(let file) = KeychainName.listed(path, paths) else { continue }
            let locked = (try? call(Service.KeychainInfo(path: file))).map { !$0.unlocked }
            let name = String(file.split(separator: "/").last ?? Substring(file))
            keychains.append(WindowKeychain(id: "file-" + Self.hex(SHA256.hash(data: Data(file.utf8)).prefix(8)), name: name.hasSuffix(".keychain-db") ? String(name.dropLast(12)) : name, kind: .file(file), locked: locked))
        }
        keychains.append(WindowKeychain(id: "roots", name: "System Roots", kind: .systemRoots, locked: nil))
        return keychains
    }

    func loginLocked() -> Bool? {
        guard let status = try? call(Service.KeychainStatusRequest()) else { return nil }
        return status.lockState != .unlocked
    }

    func status() throws(KeychainError) -> Service.KeychainStatus {
        try call(Service.KeychainStatusRequest())
    }

    /// Every item of `keychain`, with attributes and no secret.
    ///
    /// - Throws: errSecInteractionNotAllowed while it is locked.
    func items(in keychain: WindowKeychain) throws(KeychainError) -> [WindowItem] {
        if case .systemRoots = keychain.kind {
            let records = try call(Service.CopyTrustSettings(domain: .system)).records
            return records.compactMap { record in
                guard let fields = try? CertificateFields(der: Array(record.certificate)) else { return nil }
                var item = WindowItem(id: "root-" + Self.hex(Insecure.SHA1.hash(data: record.certificate)), itemClass: SecName.kSecClassCertificate,
                                      attributes: fields.itemAttributes, keychain: keychain.name)
                item.certificate = record.certificate
                return item
            }
        }
        var items: [WindowItem] = []
        for itemClass in [SecName.kSecClassGenericPassword, SecName.kSecClassInternetPassword, SecName.kSecClassCertificate, SecName.kSecClassKey] {
            var query: [String: KeychainValue] = [
                QueryKey.itemClass: .string(itemClass), QueryKey.matchLimit: .string(SecName.kSecMatchLimitAll),
                QueryKey.returnAttributes: .bool(true), QueryKey.returnPersistentRef: .bool(true),
                SecName.kSecAttrSynchronizable: .string(QueryKey.synchronizableAny),
            ]
            if itemClass == SecName.kSecClassCertificate { query[QueryKey.returnData] = .bool(true) }
            scope(&query, to: keychain)
            let found: KeychainValue?
            do {
                found = try call(Service.CopyMatching(query))
            } catch where error.status == .itemNotFound {
                continue
            } catch where itemClass == SecName.kSecClassCertificate && error.status == .interactionRequired {
                // Another group's certificate data needs the user's presence: list without it.
                query[QueryKey.returnData] = nil
                found = try? call(Service.CopyMatching(query))
            }
            guard case .array(let values)? = found else { continue }
            for case .dictionary(var attributes) in values {
                guard let reference = attributes.removeValue(forKey: QueryKey.valuePersistentRef)?.dataValue else { continue }
                let certificate = attributes.removeValue(forKey: QueryKey.valueData)?.dataValue
                var item = WindowItem(id: Self.hex(reference), itemClass: itemClass, attributes: attributes, keychain: keychain.name)
                item.certificate = certificate
                items.append(item)
            }
        }
        let privateKeyLabels = Set(items.filter { $0.itemClass == SecName.kSecClassKey && $0.kind == "private key" }
            .compactMap { $0.attributes[SecName.kSecAttrApplicationLabel]?.dataValue })
        for index in items.indices where items[index].itemClass == SecName.kSecClassCertificate {
            if let hash = items[index].attributes[SecName.kSecAttrPublicKeyHash]?.dataValue, privateKeyLabels.contains(hash) {
                items[index].hasPrivateKey = true
            }
        }
        return items
    }

    /// The secret of item `id`, with the keychain passcode as the user's presence: the enclave
    /// checks it every time, and a wrong one counts in the unlock throttle.
    func secret(of id: String, in keychain: WindowKeychain, passcode: SecretBytes?) throws(KeychainError) -> Data {
        var query = try select(id, in: keychain)
        query[QueryKey.returnData] = .bool(true)
        guard case .data(let data)? = try call(Service.CopyMatching(query), presence: passcode) else {
            throw KeychainError(status: .itemNotFound, message: "the item has no secret")
        }
        return data
    }

    /// Every password's secret by item id, in one request per password class: the keychain
    /// password is checked once per request, so a wrong one counts once (not once per item).
    func secrets(in keychain: WindowKeychain, passcode: SecretBytes?) throws(KeychainError) -> [String: Data] {
        var secrets: [String: Data] = [:]
        for itemClass in [SecName.kSecClassGenericPassword, SecName.kSecClassInternetPassword] {
            var query: [String: KeychainValue] = [
                QueryKey.itemClass: .string(itemClass), QueryKey.matchLimit: .string(SecName.kSecMatchLimitAll),
                QueryKey.returnData: .bool(true), QueryKey.returnPersistentRef: .bool(true),
                SecName.kSecAttrSynchronizable: .string(QueryKey.synchronizableAny),
            ]
            scope(&query, to: keychain)
            let found: KeychainValue?
            do {
                found = try call(Service.CopyMatching(query), presence: passcode)
            } catch where error.status == .itemNotFound {
                continue
            }
            guard case .array(let values)? = found else { continue }
            for case .dictionary(let result) in values {
                if let reference = result[QueryKey.valuePersistentRef]?.dataValue, let data = result[QueryKey.valueData]?.dataValue {
                    secrets[Self.hex(reference)] = data
                }
            }
        }
        return secrets
    }

    /// Adds a password item or a secure note (a generic password of type 'note', as macOS).
    func add(_ attributes: [String: KeychainValue], in keychain: WindowKeychain, passcode: SecretBytes?) throws(KeychainError) {
        var attributes = attributes
        if case .file(let path) = keychain.kind { attributes[SecName.kSecUseKeychain] = .string(path) }
        _ = try call(Service.Add(attributes), presence: passcode)
    }

    func update(_ id: String, in keychain: WindowKeychain, attributes: [String: KeychainValue], passcode: SecretBytes?) throws(KeychainError) {
        try call(Service.Update(try select(id, in: keychain), attributes: attributes), presence: passcode)
    }

    func delete(_ id: String, in keychain: WindowKeychain, passcode: SecretBytes?) throws(KeychainError) {
        try call(Service.Delete(try select(id, in: keychain)), presence: passcode)
    }

    func lock(_ keychain: WindowKeychain) throws(KeychainError) {
        switch keychain.kind {
        case .login: try call(Service.Lock())
        case .file(let path): try call(Service.LockKeychain(path: path))
        case .systemRoots: throw KeychainError(status: .readOnly)
        }
    }

    func unlock(_ keychain: WindowKeychain, password: SecretBytes) throws(KeychainError) {
        switch keychain.kind {
        case .login: try call(Service.Unlock(passcode: password))
        case .file(let path): try call(Service.UnlockKeychain(path: path, password: password))
        case .systemRoots: throw KeychainError(status: .readOnly)
        }
    }

    /// The keychain's lock settings (none when they cannot be read).
    func settings(of keychain: WindowKeychain) -> KeychainSettings {
        switch keychain.kind {
        case .login: (try? call(Service.KeychainStatusRequest())).map { KeychainSettings(autoLockSeconds: $0.autoLockSeconds) } ?? KeychainSettings()
        case .file(let path): (try? call(Service.KeychainInfo(path: path)))?.settings ?? KeychainSettings()
        case .systemRoots: KeychainSettings()
        }
    }

    /// Sets them: the login keychain's timeout (its sleep behaviour is securityd's), a file
    /// keychain's timeout and lock on sleep, as `security set-keychain-settings` does.
    func setSettings(of keychain: WindowKeychain, _ settings: KeychainSettings) throws(KeychainError) {
        switch keychain.kind {
        case .login: try call(Service.UpdateSettings(autoLockSeconds: settings.autoLockSeconds))
        case .file(let path): try call(Service.SetKeychainSettings(path: path, settings: settings))
        case .systemRoots: throw KeychainError(status: .readOnly)
        }
    }

    /// The user's trust setting for a certificate, as `security add-trusted-cert` writes it:
    /// `alwaysTrust` a root (or as root), `neverTrust` a deny, `systemDefaults` none.
    func setTrust(_ certificate: Data, to setting: TrustChoice, passcode: SecretBytes?) throws(KeychainError) {
        switch setting {
        case .systemDefaults:
            do {
                try call(Service.RemoveTrustSettings(domain: .user, certificate: certificate), presence: passcode)
            } catch where error.status == .itemNotFound {}
        case .alwaysTrust, .neverTrust:
            let selfSigned = (try? CertificateFields(der: Array(certificate))).map(\.isSelfIssued) ?? false
            let result: TrustSettingsResult = setting == .neverTrust ? .deny : (selfSigned ? .trustRoot : .trustAsRoot)
            let record = TrustSettingsRecord(certificate: certificate, constraints: result == .trustRoot ? [] : [TrustUsageConstraint(result: result)])
            try call(Service.SetTrustSettings(domain: .user, record: record), presence: passcode)
        }
    }

    /// The user's trust setting for `certificate`.
    func trust(of certificate: Data) -> TrustChoice {
        guard let records = try? call(Service.CopyTrustSettings(domain: .user)).records,
            let record = records.first(where: { $0.certificate == certificate })
        else { return .systemDefaults }
        return record.constraints.contains { $0.result == .deny } ? .neverTrust : .alwaysTrust
    }

    /// securityd's recent refusals, newest first.
    func activity() throws(KeychainError) -> [Service.SecurityActivityEvent] {
        try call(Service.CopySecurityActivity()).events
    }

    func profiles() throws(KeychainError) -> [ProfileRecord] {
        try call(Service.CopyProfiles()).profiles
    }

    func removeProfile(_ identifier: String, passcode: SecretBytes?) throws(KeychainError) {
        try call(Service.RemoveProfile(identifier: identifier), presence: passcode)
    }

    /// Sends `request` (the keychain password as the user's presence, when given).
    func call<Request: ServiceRequest>(_ request: Request, presence: SecretBytes? = nil) throws(KeychainError) -> Request.Response {
        do {
            return try client.call(request, presence: presence)
        } catch {
            throw error as? KeychainError ?? KeychainError(status: .internalComponent)
        }
    }

    /// The query that selects item `id` (its persistent reference) in `keychain`.
    private func select(_ id: String, in keychain: WindowKeychain) throws(KeychainError) -> [String: KeychainValue] {
        guard let reference = Self.bytes(hex: id), let parsed = try? PersistentReference(data: reference) else {
            throw KeychainError(status: .param, message: "not an item of this keychain")
        }
        var query: [String: KeychainValue] = [
            QueryKey.itemClass: .string(parsed.itemClass.rawValue), QueryKey.valuePersistentRef: .data(reference),
            SecName.kSecAttrSynchronizable: .string(QueryKey.synchronizableAny),
        ]
        scope(&query, to: keychain)
        return query
    }

    private func scope(_ query: inout [String: KeychainValue], to keychain: WindowKeychain) {
        if case .file(let path) = keychain.kind { query[QueryKey.matchSearchList] = .array([.string(path)]) }
    }

    static func hex(_ bytes: some Sequence<UInt8>) -> String {
        bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }

    static func bytes(hex: String) -> Data? {
        let digits = Array(hex.utf8)
        guard digits.count % 2 == 0, digits.count <= 128 else { return nil }
        var bytes = Data()
        var index = 0
        while index < digits.count {
            guard let byte = UInt8(String(decoding: digits[index..<index + 2], as: UTF8.self), radix: 16) else { return nil }
            bytes.append(byte)
            index += 2
        }
        return bytes
    }
}

/// Keychain Access's "When using this certificate" choices.
enum TrustChoice: String, CaseIterable, Sendable {
    case systemDefaults = "system-defaults", alwaysTrust = "always-trust", neverTrust = "never-trust"

    var title: String {
        switch self {
        case .systemDefaults: "Use System Defaults"
        case .alwaysTrust: "Always Trust"
        case .neverTrust: "Never Trust"
        }
    }
}
