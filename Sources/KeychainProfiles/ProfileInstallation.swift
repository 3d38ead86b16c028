import Crypto
public import FoundationEssentials
import KeychainCertificates
import KeychainKeys
public import KeychainModel
import KeychainPKCS12
import KeychainProtocol
import SwiftASN1

/// What installing a profile puts in a keychain: the items of its payloads, with the
/// protection Apple gives profile items, the certificates its root payloads make trust
/// anchors, and what each payload came to. Computed whole before anything is written, so a
/// payload that fails fails the profile (``init(_:)`` throws) and nothing is installed.
///
/// Protection (Apple Platform Security, "Keychain data protection"): items a profile
/// installs are AfterFirstUnlock and non-migratory (`cku`); certificates — not identities —
/// are always available (`dku`), as is an identity that a `com.apple.mdm` payload names in
/// `IdentityCertificateUUID`.
public struct ProfileInstallation: Sendable {
    /// Item attribute dictionaries (`class`, attributes, `v_Data`, `pdmn`), without a group.
    public var items: [[String: KeychainValue]] = []
    /// Certificates of `com.apple.security.root` payloads (DER): anchors for the scope.
    public var anchors: [Data] = []
    public var payloads: [ProfilePayloadRecord] = []

    /// The payload types that carry keychain items and are installed.
    public static let supportedTypes: Set<String> = [
        rootType, "com.apple.security.pkcs1", "com.apple.security.pem", pkcs12Type, "com.apple.wifi.managed", "com.apple.vpn.managed",
        "com.apple.security.certificatepreference", "com.apple.security.identitypreference", mdmType,
    ]
    static let rootType = "com.apple.security.root"
    static let pkcs12Type = "com.apple.security.pkcs12"
    static let mdmType = "com.apple.mdm"

    /// The item's service of the keychain entry Trousseau keeps for a Wi-Fi network's
    /// password, as macOS's ("AirPort", the SSID as account).
    public static let wifiService = "AirPort"

    public init(_ profile: ConfigurationProfile) throws(KeychainError) {
        // The identities an MDM payload names stay available while locked.
        var alwaysAvailable = Set<String>()
        for payload in profile.payloads where payload.type == Self.mdmType {
            if let uuid = try Fields(payload.content, in: Self.place(payload)).string("IdentityCertificateUUID") { alwaysAvailable.insert(uuid) }
        }
        let byUUID = Dictionary(profile.payloads.map { ($0.uuid, $0) }, uniquingKeysWith: { first, _ in first })
        var certificatesSeen = Set<Data>()
        for payload in profile.payloads {
            let before = items.count
            let supported = Self.supportedTypes.contains(payload.type)
            if supported {
                try install(payload, alwaysAvailable: alwaysAvailable.contains(payload.uuid), byUUID: byUUID, seen: &certificatesSeen)
            }
            payloads.append(
                ProfilePayloadRecord(
                    type: payload.type, identifier: payload.identifier, uuid: payload.uuid, displayName: payload.displayName.map(Self.clipped),
                    supported: supported, items: items.count - before))
        }
    }

    private mutating func install(
        _ payload: ConfigurationPayload, alwaysAvailable: Bool, byUUID: [String: ConfigurationPayload], seen: inout Set<Data>
    ) throws(KeychainError) {
        let fields = Fields(payload.content, in: Self.place(payload))
        switch payload.type {
        case Self.rootType, "com.apple.security.pkcs1":
            let der = try fields.requiredData("PayloadContent")
            let certificate = try Self.certificate(der, in: payload)
            if payload.type == Self.rootType { anchors.append(der) }
            addCertificate(certificate, protection: .alwaysThisDeviceOnly, seen: &seen)
        case "com.apple.security.pem":
            for certificate in try Self.pemCertificates(try fields.requiredData("PayloadContent"), in: payload) {
                addCertificate(certificate, protection: .alwaysThisDeviceOnly, seen: &seen)
            }
        case Self.pkcs12Type:
            try addIdentity(payload, fields, alwaysAvailable: alwaysAvailable, seen: &seen)
        case "com.apple.wifi.managed":
            let ssid = try fields.requiredString("SSID_STR")
            if let password = try fields.string("Password") {
                addPassword(service: Self.wifiService, account: ssid, label: ssid, description: "AirPort network password", password)
            }
            if let eap = try fields.dictionary("EAPClientConfiguration"), let password = try eap.string("UserPassword") {
                addPassword(
                    service: "com.apple.network.eap.user.item.profileid.\(payload.uuid)", account: try eap.string("UserName") ?? "", label: ssid,
                    description: "802.1X Password", password)
            }
        case "com.apple.vpn.managed":
            try addVPNPasswords(payload, fields)
        case "com.apple.security.certificatepreference", "com.apple.security.identitypreference":
            try addPreference(payload, fields, byUUID: byUUID)
        default:
            // com.apple.mdm: only IdentityCertificateUUID is carried out (above); it installs nothing itself.
            break
        }
    }

    private mutating func addCertificate(_ certificate: CertificateFields, protection: ProtectionClass, seen: inout Set<Data>) {
        // The same certificate in two payloads (a root and a chain) is one item.
        guard seen.insert(Data(certificate.der)).inserted else { return }
        var attributes = certificate.itemAttributes
        attributes[SecName.kSecAttrAccessible] = .string(protection.rawValue)
        items.append(attributes)
    }

    private mutating func addIdentity(
        _ payload: ConfigurationPayload, _ fields: Fields, alwaysAvailable: Bool, seen: inout Set<Data>
    ) throws(KeychainError) {
        let file = try fields.requiredData("PayloadContent")
        let password = SecretBytes(Array((try fields.string("Password") ?? "").utf8))
        let contents: Service.PKCS12Contents
        do {
            contents = try PKCS12Codec.decode(Service.DecodePKCS12(file: file, passphrase: password))
        } catch {
            let what = error.status == .authFailed ? "its Password does not open the PKCS#12 file" : "its PKCS#12 file cannot be read"
            throw KeychainError(status: error.status, message: "\(Self.place(payload)): \(what)")
        }
        guard let keyBytes = contents.privateKey, let leaf = contents.certificate else {
            throw KeychainError(status: .decode, message: "\(Self.place(payload)): the PKCS#12 file holds no identity (a key and its certificate)")
        }
        // As the tool's import opens a PKCS#12 key (ImportExportCommands).
        let key = try keyBytes.withUnsafeBytes { bytes in Result { () throws(KeychainError) in try AsymmetricKey(pkcs8: Data(bytes)) } }.get()
        let certificate = try Self.certificate(leaf, in: payload)
        let protection: ProtectionClass = alwaysAvailable ? .alwaysThisDeviceOnly : .afterFirstUnlockThisDeviceOnly
        var keyAttributes = key.attributes
        keyAttributes[SecName.kSecAttrLabel] = .string(Self.clipped(payload.displayName ?? certificate.subjectSummary ?? "Imported Private Key"))
        keyAttributes[SecName.kSecAttrAccessible] = .string(protection.rawValue)
        if try fields.bool("KeyIsExtractable") == false { keyAttributes[SecName.kSecAttrIsExtractable] = .bool(false) }
        items.append(keyAttributes)
        // The identity's certificate shares its key's protection: it is half of an identity.
        addCertificate(certificate, protection: protection, seen: &seen)
        for other in contents.otherCertificates {
            addCertificate(try Self.certificate(other, in: payload), protection: .alwaysThisDeviceOnly, seen: &seen)
        }
    }

    /// The VPN secrets macOS keeps in the keychain, one password item each, named as
    /// macOS's network configuration names them for a VPN service (the payload's UUID stands
    /// for the service's ID): the password under the ID, the shared secret under `ID.SS`, the
    /// XAuth password under `ID.XAUTH`, with the kinds "VPN Password", "PPP Password",
    /// "IPSec Shared Secret" and "IPSec XAuth Password" as description.
    private mutating func addVPNPasswords(_ payload: ConfigurationPayload, _ fields: Fields) throws(KeychainError) {
        let id = payload.uuid
        let label = try fields.string("UserDefinedName") ?? payload.displayName ?? payload.identifier
        let secrets: [(section: String, key: String, service: String, account: String?, description: String)] = [
            ("VPN", "Password", id, "AuthName", "VPN Password"),
            ("PPP", "AuthPassword", id, "AuthName", "PPP Password"),
            ("IPSec", "SharedSecret", id + ".SS", nil, "IPSec Shared Secret"),
            ("IPSec", "XAuthPassword", id + ".XAUTH", "XAuthName", "IPSec XAuth Password"),
            ("IKEv2", "SharedSecret", id + ".SS", nil, "IPSec Shared Secret"),
            ("IKEv2", "AuthPassword", id, "AuthName", "VPN Password"),
            ("IKEv2", "Password", id, "AuthName", "VPN Password"),
        ]
        for secret in secrets {
            guard let section = try fields.dictionary(secret.section), let value = try section.string(secret.key) else { continue }
            let account = try secret.account.flatMap { key throws(KeychainError) in try section.string(key) } ?? ""
            addPassword(service: secret.service, account: account, label: label, description: secret.description, value)
        }
    }

    /// A preference names a certificate or identity payload of the same profile; the item
    /// (service: the name, e.g. a URL or e-mail address) holds that certificate's SHA-1.
    private mutating func addPreference(_ payload: ConfigurationPayload, _ fields: Fields, byUUID: [String: ConfigurationPayload]) throws(KeychainError) {
        let name = try fields.requiredString("Name")
        let target = try fields.requiredString("PayloadCertificateUUID")
        guard let named = byUUID[target] else {
            throw KeychainError.decode("\(Self.place(payload)): PayloadCertificateUUID \(target) names no payload of the profile")
        }
        let certificate: Data
        switch named.type {
        case Self.pkcs12Type:
            let file = try Fields(named.content, in: Self.place(named)).requiredData("PayloadContent")
            let password = SecretBytes(Array((try Fields(named.content, in: Self.place(named)).string("Password") ?? "").utf8))
            guard let leaf = (try? PKCS12Codec.decode(Service.DecodePKCS12(file: file, passphrase: password)))?.certificate else {
                throw KeychainError.decode("\(Self.place(payload)): the identity it names cannot be read")
            }
            certificate = leaf
        case Self.rootType, "com.apple.security.pkcs1":
            guard payload.type == "com.apple.security.certificatepreference" else {
                throw KeychainError.decode("\(Self.place(payload)): PayloadCertificateUUID names a certificate, not an identity")
            }
            certificate = try Fields(named.content, in: Self.place(named)).requiredData("PayloadContent")
        default:
            throw KeychainError.decode("\(Self.place(payload)): PayloadCertificateUUID names a \(named.type) payload")
        }
        let description = payload.type.hasSuffix("identitypreference") ? "identity preference" : "certificate preference"
        items.append([
            SecName.kSecClass: .string(SecName.kSecClassGenericPassword), SecName.kSecAttrService: .string(name),
            SecName.kSecAttrAccount: .string(""), SecName.kSecAttrLabel: .string(Self.clipped(name)),
            SecName.kSecAttrDescription: .string(description),
            SecName.kSecValueData: .data(Data(Insecure.SHA1.hash(data: certificate))),
            SecName.kSecAttrAccessible: .string(ProtectionClass.afterFirstUnlockThisDeviceOnly.rawValue),
        ])
    }

    private mutating func addPassword(service: String, account: String, label: String, description: String, _ password: String) {
        items.append([
            SecName.kSecClass: .string(SecName.kSecClassGenericPassword), SecName.kSecAttrService: .string(service),
            SecName.kSecAttrAccount: .string(account), SecName.kSecAttrLabel: .string(Self.clipped(label)),
            SecName.kSecAttrDescription: .string(description), SecName.kSecValueData: .data(Data(password.utf8)),
            SecName.kSecAttrAccessible: .string(ProtectionClass.afterFirstUnlockThisDeviceOnly.rawValue),
        ])
    }

    private static func certificate(_ der: Data, in payload: ConfigurationPayload) throws(KeychainError) -> CertificateFields {
        guard let certificate = try? CertificateFields(der: Array(der)) else {
            throw KeychainError.decode("\(place(payload)): its PayloadContent is not a DER certificate")
        }
        return certificate
    }

    private static func pemCertificates(_ data: Data, in payload: ConfigurationPayload) throws(KeychainError) -> [CertificateFields] {
        guard let text = String(data: data, encoding: .utf8), let documents = try? PEMDocument.parseMultiple(pemString: text),
            !documents.isEmpty, documents.allSatisfy({ $0.discriminator == "CERTIFICATE" })
        else { throw KeychainError.decode("\(place(payload)): its PayloadContent is not PEM certificates") }
        return try documents.map { document throws(KeychainError) in try certificate(Data(document.derBytes), in: payload) }
    }

    static func place(_ payload: ConfigurationPayload) -> String { "payload \(payload.identifier) (\(payload.type))" }

    /// Display text as records keep it (at most 1,024 characters).
    static func clipped(_ text: String) -> String { String(text.prefix(1024)) }
}
