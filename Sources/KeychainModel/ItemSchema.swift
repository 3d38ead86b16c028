/// The attribute catalogue of one item class, with Apple's four-letter names and types.
///
/// Attribute lists follow Apple's keychain schema (SecItemSchema): every class has the
/// common attributes (dates, access group, protection class, sync, tombstone, view hint,
/// token id) and its own; the primary key is the class's key plus `agrp` and `sync`.
public struct ItemSchema: Sendable {
    public let itemClass: ItemClass
    /// Every attribute, in catalogue order.
    public let attributes: [AttributeDescriptor]
    /// The primary-key attributes, in the fixed order the primary-key token hashes them.
    public let primaryKey: [AttributeDescriptor]
    private let byName: [String: AttributeDescriptor]

    init(_ itemClass: ItemClass, _ attributes: [AttributeDescriptor]) {
        self.itemClass = itemClass
        self.attributes = attributes
        self.primaryKey = attributes.filter(\.isPrimaryKey)
        self.byName = Dictionary(uniqueKeysWithValues: attributes.map { ($0.name, $0) })
    }

    /// The attribute named `name`, or nil when the class has none.
    public func attribute(named name: String) -> AttributeDescriptor? {
        byName[name]
    }

    /// The catalogue of `itemClass`. Identity has none of its own: its attributes are
    /// those of certificates and keys (``identityAttribute(named:)``).
    public static func of(_ itemClass: ItemClass) -> ItemSchema {
        switch itemClass {
        case .genericPassword: genericPassword
        case .internetPassword: internetPassword
        case .certificate: certificate
        case .key, .identity: key
        }
    }

    /// The attribute an identity query may name: a certificate's, else a key's.
    public static func identityAttribute(named name: String) -> (ItemClass, AttributeDescriptor)? {
        if let a = certificate.attribute(named: name) { return (.certificate, a) }
        if let a = key.attribute(named: name) { return (.key, a) }
        return nil
    }
}

extension ItemSchema {
    /// Attribute names the store treats specially (plaintext columns).
    public enum Name {
        public static let accessGroup = SecName.kSecAttrAccessGroup
        public static let accessible = SecName.kSecAttrAccessible
        public static let synchronizable = SecName.kSecAttrSynchronizable
        public static let tombstone = "tomb"
        public static let creationDate = SecName.kSecAttrCreationDate
        public static let modificationDate = SecName.kSecAttrModificationDate
    }

    private static func common(_ own: [AttributeDescriptor]) -> [AttributeDescriptor] {
        [
            AttributeDescriptor(SecName.kSecAttrCreationDate, .date, access: .queryOnly),
            AttributeDescriptor(SecName.kSecAttrModificationDate, .date, access: .queryOnly),
        ] + own + [
            AttributeDescriptor(SecName.kSecAttrAccessGroup, .string, primaryKey: true),
            AttributeDescriptor(SecName.kSecAttrAccessible, .string),
            AttributeDescriptor(SecName.kSecAttrSynchronizable, .bool, primaryKey: true),
            AttributeDescriptor("tomb", .bool, access: .queryOnly),
            AttributeDescriptor(SecName.kSecAttrSyncViewHint, .string),
            AttributeDescriptor(SecName.kSecAttrTokenID, .string),
            AttributeDescriptor(SecName.kSecAttrAccessControl, .data, access: .internal),
            AttributeDescriptor("musr", .data, access: .internal),
            AttributeDescriptor("sha1", .data, access: .internal),
            AttributeDescriptor("UUID", .string, access: .internal),
            AttributeDescriptor(SecName.kSecAttrPersistentReference, .data, access: .internal),
            AttributeDescriptor("v_pk", .data, access: .internal),
        ]
    }

    /// Attributes that generic and internet passwords share.
    private static let passwordAttributes: [AttributeDescriptor] = [
        AttributeDescriptor(SecName.kSecAttrDescription, .string),
        AttributeDescriptor(SecName.kSecAttrComment, .string),
        AttributeDescriptor(SecName.kSecAttrCreator, .number),
        AttributeDescriptor(SecName.kSecAttrType, .number),
        AttributeDescriptor("scrp", .number),
        AttributeDescriptor(SecName.kSecAttrLabel, .string),
        AttributeDescriptor("alis", .data),
        AttributeDescriptor(SecName.kSecAttrIsInvisible, .bool),
        AttributeDescriptor(SecName.kSecAttrIsNegative, .bool),
        AttributeDescriptor("cusi", .bool),
        AttributeDescriptor("prot", .data),
        AttributeDescriptor(SecName.kSecAttrAccount, .string, primaryKey: true),
    ]

    static let genericPassword = ItemSchema(
        .genericPassword,
        common(
            passwordAttributes + [
                AttributeDescriptor(SecName.kSecAttrService, .string, primaryKey: true),
                AttributeDescriptor(SecName.kSecAttrGeneric, .data),
                // A Secret Service item's attributes and content type (SecretServiceItem).
                AttributeDescriptor(SecretServiceItem.attributeName, .data, access: .internal),
            ]
        )
    )

    static let internetPassword = ItemSchema(
        .internetPassword,
        common(
            passwordAttributes + [
                AttributeDescriptor(SecName.kSecAttrSecurityDomain, .string, primaryKey: true),
                AttributeDescriptor(SecName.kSecAttrServer, .string, primaryKey: true),
                // Apple's protocol and authentication-type constants are four-character
                // strings ("htps", "dflt"), kept as strings as Apple's schema keeps them.
                AttributeDescriptor(SecName.kSecAttrProtocol, .string, primaryKey: true),
                AttributeDescriptor(SecName.kSecAttrAuthenticationType, .string, primaryKey: true),
                AttributeDescriptor(SecName.kSecAttrPort, .number, primaryKey: true),
                AttributeDescriptor(SecName.kSecAttrPath, .string, primaryKey: true),
            ]
        )
    )

    static let certificate = ItemSchema(
        .certificate,
        common([
            AttributeDescriptor(SecName.kSecAttrCertificateType, .number, primaryKey: true),
            AttributeDescriptor(SecName.kSecAttrCertificateEncoding, .number),
            AttributeDescriptor(SecName.kSecAttrLabel, .string),
            AttributeDescriptor("alis", .data),
            AttributeDescriptor(SecName.kSecAttrSubject, .data),
            AttributeDescriptor(SecName.kSecAttrIssuer, .data, primaryKey: true),
            AttributeDescriptor(SecName.kSecAttrSerialNumber, .data, primaryKey: true),
            AttributeDescriptor(SecName.kSecAttrSubjectKeyID, .data),
            AttributeDescriptor(SecName.kSecAttrPublicKeyHash, .data),
        ])
    )

    static let key = ItemSchema(
        .key,
        common([
            AttributeDescriptor(SecName.kSecAttrKeyClass, .number, primaryKey: true),
            AttributeDescriptor(SecName.kSecAttrLabel, .string),
            AttributeDescriptor("alis", .data),
            AttributeDescriptor(SecName.kSecAttrIsPermanent, .bool),
            AttributeDescriptor("priv", .bool),
            AttributeDescriptor("modi", .bool),
            AttributeDescriptor(SecName.kSecAttrApplicationLabel, .data, primaryKey: true),
            AttributeDescriptor(SecName.kSecAttrApplicationTag, .data, primaryKey: true),
            AttributeDescriptor(SecName.kSecAttrCreator, .number, primaryKey: true),
            AttributeDescriptor(SecName.kSecAttrKeyType, .number, primaryKey: true),
            AttributeDescriptor(SecName.kSecAttrKeySizeInBits, .number, primaryKey: true),
            AttributeDescriptor(SecName.kSecAttrEffectiveKeySize, .number, primaryKey: true),
            AttributeDescriptor("sdat", .date, primaryKey: true),
            AttributeDescriptor("edat", .date, primaryKey: true),
            AttributeDescriptor(SecName.kSecAttrIsSensitive, .bool),
            AttributeDescriptor("asen", .bool),
            AttributeDescriptor(SecName.kSecAttrIsExtractable, .bool),
            AttributeDescriptor("next", .bool),
            AttributeDescriptor(SecName.kSecAttrCanEncrypt, .bool),
            AttributeDescriptor(SecName.kSecAttrCanDecrypt, .bool),
            AttributeDescriptor(SecName.kSecAttrCanDerive, .bool),
            AttributeDescriptor(SecName.kSecAttrCanSign, .bool),
            AttributeDescriptor(SecName.kSecAttrCanVerify, .bool),
            AttributeDescriptor("snrc", .bool),
            AttributeDescriptor("vyrc", .bool),
            AttributeDescriptor(SecName.kSecAttrCanWrap, .bool),
            AttributeDescriptor(SecName.kSecAttrCanUnwrap, .bool),
        ])
    )
}

extension ItemSchema {
    /// `kSecAttrKeyClassPrivate`'s value in `kcls`.
    public static let keyClassPrivate: Int64 = 1
}
