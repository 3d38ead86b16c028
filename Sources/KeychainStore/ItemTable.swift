import KeychainModel

/// The SQLite layout of one stored item class: a table named after the class, plaintext
/// identity columns, a keyed token column per searchable attribute, and the two blobs.
struct ItemTable: Sendable {
    let itemClass: ItemClass
    let schema: ItemSchema
    /// The attributes that have a token column, in catalogue order.
    let tokenAttributes: [AttributeDescriptor]

    init(_ itemClass: ItemClass) {
        precondition(itemClass != .identity, "identities are a join of certificates and keys")
        self.itemClass = itemClass
        self.schema = ItemSchema.of(itemClass)
        self.tokenAttributes = schema.attributes.filter {
            $0.isIndexed && $0.name != ItemSchema.Name.accessGroup
        }
    }

    var name: String { itemClass.rawValue }

    static func tokenColumn(_ attribute: String) -> String { "t_\(attribute)" }

    func hasTokenColumn(_ attribute: String) -> Bool {
        tokenAttributes.contains { $0.name == attribute }
    }

    /// The token columns worth an index: primary-key attributes (the lookups apps make),
    /// the label, and the certificate's public-key hash (the identity join).
    var indexedTokenColumns: [String] {
        tokenAttributes
            .filter { $0.isPrimaryKey || $0.name == "labl" || $0.name == "pkhh" }
            .map { Self.tokenColumn($0.name) }
    }

    /// The column definitions, in order.
    private var columnDefinitions: [String] {
        let tokens = tokenAttributes.map { "\(Self.tokenColumn($0.name)) INTEGER" }
        return [
            "rowid INTEGER PRIMARY KEY",
            "uuid BLOB NOT NULL UNIQUE",
            "agrp TEXT NOT NULL",
            "pdmn TEXT NOT NULL",
            "sync INTEGER NOT NULL",
            "tomb INTEGER NOT NULL",
            "pk BLOB NOT NULL UNIQUE",
        ] + tokens + ["meta BLOB NOT NULL", "secret BLOB NOT NULL"]
    }

    /// The columns' names and declared types, as `PRAGMA table_info` reports them.
    var expectedColumns: [String] {
        columnDefinitions.map { $0.split(separator: " ").prefix(2).joined(separator: " ") }
    }

    /// The statements that create the table and its indexes.
    var creationSQL: [String] {
        let columns = columnDefinitions
        var statements = ["CREATE TABLE \(name) (\(columns.joined(separator: ", ")))"]
        for column in indexedTokenColumns {
            statements.append("CREATE INDEX \(name)_\(column) ON \(name)(\(column))")
        }
        return statements
    }

    /// The two token columns lookups of this class name together, the more selective
    /// first (as Apple's UNIQUE constraints lead with them): one index on both finds the
    /// one matching row, where a single-column index on the other (every account of one
    /// service) walks all the rows sharing it.
    var lookupPair: (String, String)? {
        switch itemClass {
        case .genericPassword: (Self.tokenColumn("acct"), Self.tokenColumn("svce"))
        case .internetPassword: (Self.tokenColumn("acct"), Self.tokenColumn("srvr"))
        case .certificate: (Self.tokenColumn("slnr"), Self.tokenColumn("issr"))
        case .key: (Self.tokenColumn("atag"), Self.tokenColumn("klbl"))
        case .identity: nil
        }
    }

    /// Schema v2: the pair index replaces the single-column index on its first column
    /// (which it answers as well).
    var lookupIndexSQL: [String] {
        guard let (first, second) = lookupPair else { return [] }
        return [
            "DROP INDEX IF EXISTS \(name)_\(first)",
            "CREATE INDEX \(name)_\(first)_\(second) ON \(name)(\(first), \(second))",
        ]
    }

    static let all: [ItemClass: ItemTable] = Dictionary(
        uniqueKeysWithValues: ItemClass.stored.map { ($0, ItemTable($0)) })

    static func of(_ itemClass: ItemClass) -> ItemTable {
        all[itemClass]!  // every stored class has a table; identity callers are routed before this
    }
}
