import Crypto
import KeychainKeys
import SwiftASN1
import FoundationEssentials
import KeychainCertificates
import KeychainClient
public import KeychainModel
import KeychainProtocol
import KeychainSystem

#if canImport(Glibc)
import Glibc
#endif

/// A keychain in the window's sidebar.
struct WindowKeychain: Sendable {
    enum Kind: Sendable { case login, file(String), system, systemRoots }

    /// What URLs name: `login`, `system`, `roots`, or `file-` and 16 hex digits of SHA-256 of
    /// its path (stable while the search list changes).
    let id: String
    let name: String
    let kind: Kind
    /// Nil when the keychain has no lock (System Roots) or its state cannot be read.
    var locked: Bool?
    /// False for the System keychain when its daemon is not running.
    var available = true
    /// Its lock settings (none when they cannot be read).
    var settings = KeychainSettings()
    /// The login keychain's, and the System keychain's for its owner: its securityd's count of
    /// committed writes (``Service/KeychainStatus``).
    var changeCount: UInt64?
    /// System Roots, and the System keychain: the machine's, changed by its administrator
    /// with `sudo security`, never from a user's window.
    var isReadOnly: Bool {
        switch kind {
        case .system, .systemRoots: true
        case .login, .file: false
        }
    }
    var isFile: Bool { if case .file = kind { true } else { false } }
}

extension WindowKeychain.Kind {
    var isSystem: Bool { if case .system = self { true } else { false } }
}

/// The window's view of the keychain, through securityd: every call is a request of the
/// `keychain-access` role (docs/ARCHITECTURE.md, "How to add a caller policy"), sent over one
/// client connection that reconnects, and restarts securityd, when the daemon went away.
public final class KeychainDirectory: Sendable {
    let client: KeychainClient
    let paths: KeychainPaths
    /// The System keychain's securityd (its system unit's; never started here), connected
    /// when first asked.
    private let systemPaths: KeychainPaths
    private let systemClient = BlockingMutex<KeychainClient?>(nil)

    public init(paths: KeychainPaths = .fromEnvironment(), systemPaths: KeychainPaths = .system()) throws {
        self.paths = paths
        self.systemPaths = systemPaths
        client = try KeychainClient.connect(paths)
    }

    /// The login keychain, the file keychains of the search list, System and System Roots.
    /// One request for each (the login keychain's status gives its lock state, settings and
    /// change count at once).
    func keychains() -> [WindowKeychain] {
        let status = try? call(Service.KeychainStatusRequest())
        var login = WindowKeychain(id: "login", name: "login", kind: .login, locked: status.map { $0.lockState != .unlocked })
        login.settings = KeychainSettings(autoLockSeconds: status?.autoLockSeconds ?? 0)
        login.changeCount = status?.changeCount
        var keychains = [login]
        let list = (try? KeychainSearchList(home: paths.home, loginPath: paths.database).list()) ?? []
        for path in list where path != paths.database {
            guard case .file(let file) = KeychainName.listed(path, paths) else { continue }
            let info = try? call(Service.KeychainInfo(path: file))
            let name = String(file.split(separator: "/").last ?? Substring(file))
            var keychain = WindowKeychain(
                id: "file-" + Hexadecimal.string(SHA256.hash(data: Data(file.utf8)).prefix(8)), name: name.hasSuffix(".keychain-db") ? String(name.dropLast(12)) : name,
                kind: .file(file), locked: info.map { !$0.unlocked })
            keychain.settings = info?.settings ?? KeychainSettings()
            keychains.append(keychain)
        }
        // System: there when its socket is (systemd's, or its daemon's); its status — and so
        // its changes, for an open page — only for root or its own user: another user may
        // read its certificates and nothing else, and is not made to be refused every page.
        var system = WindowKeychain(id: "system", name: "System", kind: .system, locked: nil)
        var socket = stat()
        system.available = stat(systemPaths.socket, &socket) == 0 && (socket.st_mode & S_IFMT) == S_IFSOCK
        if system.available, ownsSystemKeychain(socketOwner: socket.st_uid) {
            system.changeCount = (try? call(Service.KeychainStatusRequest(), in: system))?.changeCount
        }
        keychains.append(system)
        keychains.append(WindowKeychain(id: "roots", name: "System Roots", kind: .systemRoots, locked: nil))
        return keychains
    }

    /// Root, or the System keychain's daemon's own user (its socket's owner): who may read
    /// more than its certificates (``SystemKeychainPolicy`` in securityd).
    private func ownsSystemKeychain(socketOwner: uid_t? = nil) -> Bool {
        if geteuid() == 0 { return true }
        if let socketOwner { return socketOwner == geteuid() }
        var socket = stat()
        return stat(systemPaths.socket, &socket) == 0 && socket.st_uid == geteuid()
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
                var item = WindowItem(id: "root-" + Hexadecimal.string(Insecure.SHA1.hash(data: record.certificate)), itemClass: SecName.kSecClassCertificate,
                                      attributes: fields.itemAttributes, keychain: keychain.name)
                item.certificate = record.certificate
                return item
            }
        }
        var items: [WindowItem] = []
        // Another user asks the System keychain for what it may read: its certificates.
        let classes =
            keychain.kind.isSystem && !ownsSystemKeychain()
            ? [SecName.kSecClassCertificate]
            : [SecName.kSecClassGenericPassword, SecName.kSecClassInternetPassword, SecName.kSecClassCertificate, SecName.kSecClassKey]
        for itemClass in classes {
            var query: [String: KeychainValue] = [
                QueryKey.itemClass: .string(itemClass), QueryKey.matchLimit: .string(SecName.kSecMatchLimitAll),
                QueryKey.returnAttributes: .bool(true), QueryKey.returnPersistentRef: .bool(true),
                SecName.kSecAttrSynchronizable: .string(QueryKey.synchronizableAny),
            ]
            if itemClass == SecName.kSecClassCertificate { query[QueryKey.returnData] = .bool(true) }
            scope(&query, to: keychain)
            let found: KeychainValue?
            do {
                found = try call(Service.CopyMatching(query), in: keychain)
            } catch where error.status == .itemNotFound {
                continue
            } catch where itemClass == SecName.kSecClassCertificate && error.status == .interactionRequired {
                // Another group's certificate data needs the user's presence: list without it.
                query[QueryKey.returnData] = nil
                found = try? call(Service.CopyMatching(query), in: keychain)
            }
            guard case .array(let values)? = found else { continue }
            for case .dictionary(var attributes) in values {
                guard let reference = attributes.removeValue(forKey: QueryKey.valuePersistentRef)?.dataValue else { continue }
                let certificate = attributes.removeValue(forKey: QueryKey.valueData)?.dataValue
                var item = WindowItem(id: Hexadecimal.string(reference), itemClass: itemClass, attributes: attributes, keychain: keychain.name)
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
        guard case .data(let data)? = try call(Service.CopyMatching(query), presence: passcode, in: keychain) else {
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
                    secrets[Hexadecimal.string(reference)] = data
                }
            }
        }
        return secrets
    }

    /// Adds a password item or a secure note (a generic password of type 'note', as macOS).
    func add(_ attributes: [String: KeychainValue], in keychain: WindowKeychain, passcode: SecretBytes?) throws(KeychainError) {
        if keychain.isReadOnly { throw KeychainError(status: .readOnly) }
        var attributes = attributes
        if case .file(let path) = keychain.kind { attributes[SecName.kSecUseKeychain] = .string(path) }
        _ = try call(Service.Add(attributes), presence: passcode)
    }

    func update(_ id: String, in keychain: WindowKeychain, attributes: [String: KeychainValue], passcode: SecretBytes?) throws(KeychainError) {
        if keychain.isReadOnly { throw KeychainError(status: .readOnly) }
        try call(Service.Update(try select(id, in: keychain), attributes: attributes), presence: passcode)
    }

    func delete(_ id: String, in keychain: WindowKeychain, passcode: SecretBytes?) throws(KeychainError) {
        if keychain.isReadOnly { throw KeychainError(status: .readOnly) }
        try call(Service.Delete(try select(id, in: keychain)), presence: passcode)
    }

    func lock(_ keychain: WindowKeychain) throws(KeychainError) {
        // (System: the machine's, locked and unlocked by its administrator, not from here.)
        switch keychain.kind {
        case .login: try call(Service.Lock())
        case .file(let path): try call(Service.LockKeychain(path: path))
        case .system, .systemRoots: throw KeychainError(status: .readOnly)
        }
    }

    func unlock(_ keychain: WindowKeychain, password: SecretBytes) throws(KeychainError) {
        switch keychain.kind {
        case .login: try call(Service.Unlock(passcode: password))
        case .file(let path): try call(Service.UnlockKeychain(path: path, password: password))
        case .system, .systemRoots: throw KeychainError(status: .readOnly)
        }
    }

    /// Sets a keychain's lock settings: the login keychain's timeout (its sleep behaviour is securityd's), a file
    /// keychain's timeout and lock on sleep, as `security set-keychain-settings` does.
    func setSettings(of keychain: WindowKeychain, _ settings: KeychainSettings) throws(KeychainError) {
        switch keychain.kind {
        case .login: try call(Service.UpdateSettings(autoLockSeconds: settings.autoLockSeconds))
        case .file(let path): try call(Service.SetKeychainSettings(path: path, settings: settings))
        case .system, .systemRoots: throw KeychainError(status: .readOnly)
        }
    }

    /// Sets the user's trust settings for a certificate, as `security add-trusted-cert` writes
    /// them: Always Trust a root (or as root), Never Trust a deny, for every policy or for one
    /// of ``CertificateTrust/policies``; Use System Defaults for all, none. Constraints the
    /// window does not show (a host name, an allowed error, an application, another policy)
    /// are kept, first, as they were.
    func setTrust(_ certificate: Data, to trust: CertificateTrust, passcode: SecretBytes?) throws(KeychainError) {
        var trust = trust
        trust.kept = self.trust(of: certificate).kept
        let selfSigned = (try? CertificateFields(der: Array(certificate))).map(\.isSelfIssued) ?? false
        guard let constraints = trust.constraints(selfSigned: selfSigned) else {
            do {
                try call(Service.RemoveTrustSettings(domain: .user, certificate: certificate), presence: passcode)
            } catch where error.status == .itemNotFound {}
            return
        }
        try call(Service.SetTrustSettings(domain: .user, record: TrustSettingsRecord(certificate: certificate, constraints: constraints)), presence: passcode)
    }

    /// The user's trust settings for `certificate`.
    func trust(of certificate: Data) -> CertificateTrust {
        guard let records = try? call(Service.CopyTrustSettings(domain: .user)).records,
            let record = records.first(where: { $0.certificate == certificate })
        else { return CertificateTrust() }
        return CertificateTrust(record.constraints)
    }

    /// The chain securityd builds for `certificate` (leaf first), with `others` (the
    /// keychain's certificates) as intermediates, and whether it is trusted under the basic
    /// X.509 policy now.
    func evaluate(_ certificate: Data, others: [Data]) -> Service.TrustEvaluation? {
        let intermediates = others.filter { $0 != certificate && $0.count <= Service.EvaluateTrust.certificateSize }
            .prefix(Service.EvaluateTrust.certificateLimit - 1)
        return try? call(
            Service.EvaluateTrust(certificates: [certificate] + intermediates, policies: [.basicX509], anchors: [], trustsSystemRoots: true, verifyDate: Date()))
    }

    /// File > Export Items for one certificate: DER, PEM, or with its private key a PKCS#12
    /// file under `passphrase` — the key read with the keychain password as the user's
    /// presence, as a reveal is.
    ///
    /// - Throws: errSecItemNotFound without a private key for .p12; errSecDataNotAvailable
    ///   for a key that is not extractable.
    func export(_ item: WindowItem, in keychain: WindowKeychain, as format: ExportFormat, passphrase: SecretBytes, passcode: SecretBytes?) throws(KeychainError) -> Data {
        guard let der = item.certificate else { throw KeychainError(status: .param, message: "only certificates and identities are exported") }
        switch format {
        case .cer: return der
        case .pem: return Data((PEMDocument(type: "CERTIFICATE", derBytes: Array(der)).pemString + "\n").utf8)
        case .p12:
            guard let hash = item.attributes[SecName.kSecAttrPublicKeyHash]?.dataValue else { throw KeychainError(status: .itemNotFound) }
            var query: [String: KeychainValue] = [
                QueryKey.itemClass: .string(SecName.kSecClassKey), SecName.kSecAttrKeyClass: .string(AsymmetricKey.KeyClass.private.attributeValue),
                SecName.kSecAttrApplicationLabel: .data(hash), QueryKey.returnAttributes: .bool(true), QueryKey.returnData: .bool(true),
                SecName.kSecAttrSynchronizable: .string(QueryKey.synchronizableAny),
            ]
            scope(&query, to: keychain)
            guard case .dictionary(let found)? = try call(Service.CopyMatching(query), presence: passcode, in: keychain) else {
                throw KeychainError(status: .itemNotFound, message: "the certificate's private key is not in this keychain")
            }
            if found[SecName.kSecAttrIsExtractable]?.boolValue == false { throw KeychainError(status: .dataNotAvailable, message: "its private key is not extractable") }
            let typeName = found[SecName.kSecAttrKeyType].flatMap { $0.stringValue ?? $0.numberValue.map { String($0) } }
            guard let data = found[QueryKey.valueData]?.dataValue, let type = typeName.flatMap(AsymmetricKey.KeyType.init(attributeValue:)),
                let pkcs8 = try AsymmetricKey(externalRepresentation: data, type: type, keyClass: .private).pkcs8Representation
            else { throw KeychainError(status: .unknownFormat, message: "its private key cannot be exported") }
            let file = try call(Service.EncodePKCS12(privateKey: SecretBytes(pkcs8), certificates: [der], passphrase: passphrase, name: item.name))
            return file.bytes
        }
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

    /// Sends `request` (the keychain password as the user's presence, when given) to the
    /// daemon of `keychain`: the System keychain's, or the user's.
    @discardableResult
    func call<Request: ServiceRequest>(
        _ request: Request, presence: SecretBytes? = nil, in keychain: WindowKeychain? = nil
    ) throws(KeychainError) -> Request.Response {
        do {
            // The keychain password the page asks for is the login keychain's: never the System's.
            if let kind = keychain?.kind, kind.isSystem { return try systemDaemon().call(request) }
            return try client.call(request, presence: presence)
        } catch {
            throw error as? KeychainError ?? KeychainError(status: .internalComponent)
        }
    }

    private func systemDaemon() throws -> KeychainClient {
        try systemClient.withLock { client in
            if let client { return client }
            let connected = try KeychainClient.connectSystem(systemPaths)
            client = connected
            return connected
        }
    }

    /// The query that selects item `id` (its persistent reference) in `keychain`.
    private func select(_ id: String, in keychain: WindowKeychain) throws(KeychainError) -> [String: KeychainValue] {
        guard id.utf8.count <= 128, let reference = Hexadecimal.bytes(id).map({ Data($0) }), let parsed = try? PersistentReference(data: reference) else {
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
}

/// The formats File > Export Items offers for a certificate.
enum ExportFormat: String, CaseIterable, Sendable {
    case cer, pem, p12

    var title: String {
        switch self {
        case .cer: "Certificate (.cer)"
        case .pem: "Privacy Enhanced Mail (.pem)"
        case .p12: "Personal Information Exchange (.p12)"
        }
    }

    var mediaType: String {
        switch self {
        case .cer: "application/pkix-cert"
        case .pem: "application/x-pem-file"
        case .p12: "application/x-pkcs12"
        }
    }
}

/// A certificate's trust settings as the window shows them: one choice for every policy,
/// one for each policy securityd evaluates, and the constraints it does not show.
struct CertificateTrust: Sendable, Equatable {
    /// The policies a choice can be made for, by `add-trusted-cert -p` name, with Keychain
    /// Access's titles: those securityd's evaluation knows (docs/ARCHITECTURE.md).
    static let policies: [(name: String, title: String)] = [
        ("ssl", "Secure Sockets Layer (SSL)"), ("codeSign", "Code Signing"), ("basic", "X.509 Basic Policy"),
    ]

    var overall = TrustChoice.systemDefaults
    var policies: [String: TrustChoice] = [:]
    var kept: [TrustUsageConstraint] = []

    init(overall: TrustChoice = .systemDefaults, policies: [String: TrustChoice] = [:]) {
        self.overall = overall
        self.policies = policies
    }

    /// The usage constraints that say this, as `add-trusted-cert` writes them: one per policy,
    /// then the one for every policy, then the kept ones — after the window's own, so that what
    /// the window shows is what the evaluation decides (the first constraint that applies does,
    /// and securityd's evaluation does not tell applications, allowed errors or key usages
    /// apart); nil for no settings at all.
    func constraints(selfSigned: Bool) -> [TrustUsageConstraint]? {
        func constraint(_ policy: String?, _ choice: TrustChoice) -> TrustUsageConstraint {
            TrustUsageConstraint(policy: policy, result: choice == .neverTrust ? .deny : (selfSigned ? .trustRoot : .trustAsRoot))
        }
        var constraints: [TrustUsageConstraint] = []
        for (policy, _) in Self.policies {
            if let choice = policies[policy], choice != .systemDefaults { constraints.append(constraint(policy, choice)) }
        }
        if constraints.isEmpty, kept.isEmpty, overall == .alwaysTrust, selfSigned { return [] }  // a root for everything, as Apple writes it
        if overall != .systemDefaults { constraints.append(constraint(nil, overall)) }
        constraints += kept
        return constraints.isEmpty ? nil : constraints
    }

    /// Reads a record's constraints in their order: the first plain one for every policy is
    /// the overall choice, the first plain one for each of ``policies`` that policy's; any
    /// other — not plain, another policy, or one an earlier constraint already decides for —
    /// is kept, in order.
    init(_ constraints: [TrustUsageConstraint]) {
        guard !constraints.isEmpty else {
            overall = .alwaysTrust
            return
        }
        var decided = false  // a constraint for every policy came: nothing after it decides
        for constraint in constraints {
            let plain = constraint.policyString == nil && constraint.allowedError == nil && constraint.keyUsage == nil && constraint.application == nil
            let choice: TrustChoice? =
                switch constraint.result ?? .trustRoot {
                case .trustRoot, .trustAsRoot: .alwaysTrust
                case .deny: .neverTrust
                case .unspecified: nil
                }
            if !decided, plain, let choice, constraint.policy == nil, kept.isEmpty {
                overall = choice
                decided = true
            } else if !decided, plain, let choice, let policy = constraint.policy, Self.policies.contains(where: { $0.name == policy }),
                policies[policy] == nil, kept.isEmpty
            {
                policies[policy] = choice
            } else {
                kept.append(constraint)
                if constraint.policy == nil { decided = true }
            }
        }
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
