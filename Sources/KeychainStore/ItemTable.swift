import KeychainModel

/// The SQLite layout of one stored item class: a table named after the class, plaintext
/// identity columns, a keyed token column per searchable attribute, and the two blobs.
/// The table is what the migrations made (``StoreSchema``); this only reads it.
struct ItemTable: Sendable {
    let itemClass: ItemClass
    let schema: ItemSchema
    /// The attributes that have a token column, in catalogue order. An attribute indexed in
    /// the catalogue whose column no migration has made yet has none: equality on it is
    /// checked on the decrypted attributes (as for every attribute without a token).
    let tokenAttributes: [AttributeDescriptor]

    init(_ itemClass: ItemClass) {
        precondition(itemClass != .identity, "identities are a join of certificates and keys")
        self.itemClass = itemClass
        self.schema = ItemSchema.of(itemClass)
        let columns = Set(FrozenSchema.current.columns[itemClass.rawValue] ?? [])
        self.tokenAttributes = schema.attributes.filter {
            $0.isIndexed && columns.contains(Self.tokenColumn($0.name))
        }
    }

    var name: String { itemClass.rawValue }

    static func tokenColumn(_ attribute: String) -> String { "t_\(attribute)" }

    func hasTokenColumn(_ attribute: String) -> Bool {
        tokenAttributes.contains { $0.name == attribute }
    }

    static let all: [ItemClass: ItemTable] = Dictionary(
        uniqueKeysWithValues: ItemClass.stored.map { ($0, ItemTable($0)) })

    static func of(_ itemClass: ItemClass) -> ItemTable {
        all[itemClass]!  // every stored class has a table; identity callers are routed before this
    }
}
