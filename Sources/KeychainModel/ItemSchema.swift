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
        public static let accessGroup = "agrp"
        public static let accessible = "pdmn"
        public static let synchronizable = "sync"
        public static let tombstone = "tomb"
        public static let creationDate = "cdat"
        public static let modificationDate = "mdat"
    }

    private static func common(_ own: [AttributeDescriptor]) -> [AttributeDescriptor] {
        [
            AttributeDescriptor("cdat", .date, access: .queryOnly),
            AttributeDescriptor("mdat", .date, access: .queryOnly),
        ] + own + [
            AttributeDescriptor("agrp", .string, primaryKey: true),
            AttributeDescriptor("pdmn", .string),
            AttributeDescriptor("sync", .bool, primaryKey: true),
            AttributeDescriptor("tomb", .bool, access: .queryOnly),
            AttributeDescriptor("vwht", .string),
            AttributeDescriptor("tkid", .string),
            AttributeDescriptor("accc", .data, access: .internal),
            AttributeDescriptor("musr", .data, access: .internal),
            AttributeDescriptor("sha1", .data, access: .internal),
            AttributeDescriptor("UUID", .string, access: .internal),
            AttributeDescriptor("persistref", .data, access: .internal),
            AttributeDescriptor("v_pk", .data, access: .internal),
        ]
    }

    /// Attributes that generic and internet passwords share.
    private static let passwordAttributes: [AttributeDescriptor] = [
        AttributeDescriptor("desc", .string),
        AttributeDescriptor("icmt", .string),
        AttributeDescriptor("crtr", .number),
        AttributeDescriptor("type", .number),
        AttributeDescriptor("scrp", .number),
        AttributeDescriptor("labl", .string),
        AttributeDescriptor("alis", .data),
        AttributeDescriptor("invi", .bool),
        AttributeDescriptor("nega", .bool),
        AttributeDescriptor("cusi", .bool),
        AttributeDescriptor("prot", .data),
        AttributeDescriptor("acct", .string, primaryKey: true),
    ]

    static let genericPassword = ItemSchema(
        .genericPassword,
        common(
            passwordAttributes + [
                AttributeDescriptor("svce", .string, primaryKey: true),
                AttributeDescriptor("gena", .data),
            ]
        )
    )

    static let internetPassword = ItemSchema(
        .internetPassword,
        common(
            passwordAttributes + [
                AttributeDescriptor("sdmn", .string, primaryKey: true),
                AttributeDescriptor("srvr", .string, primaryKey: true),
                // Apple's protocol and authentication-type constants are four-character
                // strings ("htps", "dflt"), kept as strings as Apple's schema keeps them.
                AttributeDescriptor("ptcl", .string, primaryKey: true),
                AttributeDescriptor("atyp", .string, primaryKey: true),
                AttributeDescriptor("port", .number, primaryKey: true),
                AttributeDescriptor("path", .string, primaryKey: true),
            ]
        )
    )

    static let certificate = ItemSchema(
        .certificate,
        common([
            AttributeDescriptor("ctyp", .number, primaryKey: true),
            AttributeDescriptor("cenc", .number),
            AttributeDescriptor("labl", .string),
            AttributeDescriptor("alis", .data),
            AttributeDescriptor("subj", .data),
            AttributeDescriptor("issr", .data, primaryKey: true),
            AttributeDescriptor("slnr", .data, primaryKey: true),
            AttributeDescriptor("skid", .data),
            AttributeDescriptor("pkhh", .data),
        ])
    )

    static let key = ItemSchema(
        .key,
        common([
            AttributeDescriptor("kcls", .number, primaryKey: true),
            AttributeDescriptor("labl", .string),
            AttributeDescriptor("alis", .data),
            AttributeDescriptor("perm", .bool),
            AttributeDescriptor("priv", .bool),
            AttributeDescriptor("modi", .bool),
            AttributeDescriptor("klbl", .data, primaryKey: true),
            AttributeDescriptor("atag", .data, primaryKey: true),
            AttributeDescriptor("crtr", .number, primaryKey: true),
            AttributeDescriptor("type", .number, primaryKey: true),
            AttributeDescriptor("bsiz", .number, primaryKey: true),
            AttributeDescriptor("esiz", .number, primaryKey: true),
            AttributeDescriptor("sdat", .date, primaryKey: true),
            AttributeDescriptor("edat", .date, primaryKey: true),
            AttributeDescriptor("sens", .bool),
            AttributeDescriptor("asen", .bool),
            AttributeDescriptor("extr", .bool),
            AttributeDescriptor("next", .bool),
            AttributeDescriptor("encr", .bool),
            AttributeDescriptor("decr", .bool),
            AttributeDescriptor("drve", .bool),
            AttributeDescriptor("sign", .bool),
            AttributeDescriptor("vrfy", .bool),
            AttributeDescriptor("snrc", .bool),
            AttributeDescriptor("vyrc", .bool),
            AttributeDescriptor("wrap", .bool),
            AttributeDescriptor("unwp", .bool),
        ])
    )
}

extension ItemSchema {
    /// `kSecAttrKeyClassPrivate`'s value in `kcls`.
    public static let keyClassPrivate: Int64 = 1
}
