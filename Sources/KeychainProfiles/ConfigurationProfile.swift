public import FoundationEssentials
public import KeychainModel

/// A configuration profile (`.mobileconfig`): a property list (XML or binary) of
/// `PayloadType` "Configuration" whose `PayloadContent` is an array of payloads, optionally
/// signed (CMS SignedData around it) and with encrypted payloads (`EncryptedPayloadContent`,
/// CMS EnvelopedData of the payload array).
public struct ConfigurationProfile: Sendable {
    /// `PayloadIdentifier`: the profile's name for install, show and remove; a profile with
    /// the identifier of an installed one replaces it, as on macOS.
    public var identifier: String
    public var uuid: String
    public var displayName: String?
    public var description: String?
    public var organization: String?
    public var version: Int64
    public var removalDisallowed: Bool
    public var payloads: [ConfigurationPayload]
    /// The signer's certificate first, then the others the signature carries; empty when
    /// the profile is not signed.
    public var signerCertificates: [Data]
    /// `EncryptedPayloadContent` still to open (``openPayloads(with:)``), or nil.
    public var encryptedPayloads: Data?

    /// The most a profile file may be.
    public static let sizeLimit = 4 << 20

    /// Reads a profile file: a property list, or SignedData holding one.
    ///
    /// - Throws: `errSecInvalidSignature` for a signed profile changed after signing,
    ///   `errSecDecode` for anything that is not a profile, with what is wrong.
    public init(file: Data) throws(KeychainError) {
        guard file.count <= Self.sizeLimit else { throw KeychainError.decode("a profile of more than 4 MiB") }
        var plist = file
        var signers: [Data] = []
        if CMSMessage.looksLikeDER(file) {
            let signed = try CMSMessage.openSigned(file)
            plist = signed.content
            signers = signed.certificates
        }
        let top = try PropertyList.dictionary(plist, what: "the profile")
        try self.init(top, signers: signers)
    }

    init(_ top: [String: KeychainValue], signers: [Data]) throws(KeychainError) {
        let fields = Fields(top, in: "the profile")
        guard try fields.string("PayloadType") == "Configuration" else {
            throw KeychainError.decode("the profile's PayloadType is not Configuration")
        }
        identifier = try fields.identifier()
        uuid = try fields.requiredString("PayloadUUID")
        displayName = try fields.string("PayloadDisplayName")
        description = try fields.string("PayloadDescription")
        organization = try fields.string("PayloadOrganization")
        version = try fields.number("PayloadVersion") ?? 1
        removalDisallowed = try fields.bool("PayloadRemovalDisallowed") ?? false
        signerCertificates = signers
        if let encrypted = top["EncryptedPayloadContent"] {
            guard case .data(let data) = encrypted else { throw KeychainError.decode("the profile's EncryptedPayloadContent is not data") }
            encryptedPayloads = data
            payloads = []
        } else {
            encryptedPayloads = nil
            payloads = try Self.payloads(top["PayloadContent"] ?? .array([]))
        }
    }

    /// Opens `EncryptedPayloadContent` with `decrypt` (the keychain's identity that is its
    /// recipient) and reads the payloads inside.
    public mutating func openPayloads(with decrypt: (Data) throws(KeychainError) -> SecretBytes) throws(KeychainError) {
        guard let encrypted = encryptedPayloads else { return }
        let plaintext = try decrypt(encrypted)
        let array = try PropertyList.array(plaintext.withUnsafeBytes { Data($0) }, what: "the profile's encrypted payload content")
        payloads = try Self.payloads(.array(array))
        encryptedPayloads = nil
    }

    private static func payloads(_ value: KeychainValue) throws(KeychainError) -> [ConfigurationPayload] {
        guard case .array(let items) = value else { throw KeychainError.decode("the profile's PayloadContent is not an array") }
        var payloads: [ConfigurationPayload] = []
        var uuids = Set<String>()
        for (index, item) in items.enumerated() {
            guard case .dictionary(let content) = item else { throw KeychainError.decode("payload \(index + 1) is not a dictionary") }
            let payload = try ConfigurationPayload(content, index: index)
            guard uuids.insert(payload.uuid).inserted else { throw KeychainError.decode("two payloads have PayloadUUID \(payload.uuid)") }
            payloads.append(payload)
        }
        return payloads
    }
}

/// One payload of a profile: its common keys and the whole dictionary.
public struct ConfigurationPayload: Sendable {
    public var type: String
    public var identifier: String
    public var uuid: String
    public var displayName: String?
    /// Every key of the payload's dictionary, the common ones included.
    public var content: [String: KeychainValue]

    init(_ content: [String: KeychainValue], index: Int) throws(KeychainError) {
        let fields = Fields(content, in: "payload \(index + 1)")
        type = try fields.requiredString("PayloadType")
        identifier = try fields.identifier()
        uuid = try fields.requiredString("PayloadUUID")
        displayName = try fields.string("PayloadDisplayName")
        self.content = content
    }
}

/// Typed reads of a profile dictionary, each failure naming where it is.
struct Fields {
    let dictionary: [String: KeychainValue]
    let place: String

    init(_ dictionary: [String: KeychainValue], in place: String) {
        self.dictionary = dictionary
        self.place = place
    }

    func string(_ key: String) throws(KeychainError) -> String? {
        guard let value = dictionary[key] else { return nil }
        guard case .string(let string) = value else { throw wrongType(key, "a string") }
        return string
    }

    func number(_ key: String) throws(KeychainError) -> Int64? {
        guard let value = dictionary[key] else { return nil }
        guard case .number(let number) = value else { throw wrongType(key, "an integer") }
        return number
    }

    func bool(_ key: String) throws(KeychainError) -> Bool? {
        guard let value = dictionary[key] else { return nil }
        guard let boolean = value.boolValue else { throw wrongType(key, "a boolean") }
        return boolean
    }

    func data(_ key: String) throws(KeychainError) -> Data? {
        guard let value = dictionary[key] else { return nil }
        guard case .data(let data) = value else { throw wrongType(key, "data") }
        return data
    }

    func dictionary(_ key: String) throws(KeychainError) -> Fields? {
        guard let value = dictionary[key] else { return nil }
        guard case .dictionary(let inner) = value else { throw wrongType(key, "a dictionary") }
        return Fields(inner, in: "\(place) \(key)")
    }

    func requiredString(_ key: String) throws(KeychainError) -> String {
        guard let value = try string(key) else { throw missing(key) }
        return value
    }

    func requiredData(_ key: String) throws(KeychainError) -> Data {
        guard let value = try data(key) else { throw missing(key) }
        return value
    }

    private func missing(_ key: String) -> KeychainError {
        KeychainError.decode("\(place) has no \(key)")
    }

    /// `PayloadIdentifier`: non-empty, printable, at most 255 bytes (it names keychain
    /// groups and command arguments).
    func identifier() throws(KeychainError) -> String {
        guard let identifier = try string("PayloadIdentifier") else { throw KeychainError.decode("\(place) has no PayloadIdentifier") }
        guard !identifier.isEmpty, identifier.utf8.count <= 255,
            identifier.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value != 0x7F })
        else { throw KeychainError.decode("\(place)'s PayloadIdentifier is empty, too long or has spaces or control characters") }
        return identifier
    }

    private func wrongType(_ key: String, _ type: String) -> KeychainError {
        KeychainError.decode("\(place)'s \(key) is not \(type)")
    }
}
