import GRDB
import KeychainModel

/// What the SQL of a candidate lookup depends on: everything in ``SearchCriteria`` but the
/// values bound to it. Requests of one shape share one SQL text, built once (it was a
/// tenth of a find's instructions in securityd when every request built it again).
struct SelectShape: Hashable {
    var itemClass: ItemClass
    /// How many groups the lookup names, and whether it excludes them instead.
    var groups: Int
    var excludesGroups: Bool
    var synchronizable: ItemQuery.Synchronizable
    var protection: Bool
    var uuid: Bool
    /// The attributes compared by token, in the order their arguments are bound.
    var tokenAttributes: [String]

    init(_ criteria: SearchCriteria, tokenAttributes: [String]) {
        itemClass = criteria.itemClass
        excludesGroups = criteria.excludedGroups != nil
        groups = criteria.excludedGroups?.count ?? criteria.groups.count
        synchronizable = criteria.synchronizable
        protection = criteria.protection != nil
        uuid = criteria.uuid != nil
        self.tokenAttributes = tokenAttributes
    }

    /// The SELECT, with its arguments in this order: the groups, the tombstone flag, the
    /// protection class, the persistent reference's uuid, then the tokens.
    var sql: String {
        var clauses: [String] = []
        if excludesGroups {
            if groups > 0 { clauses.append("agrp NOT IN (\(databaseQuestionMarks(count: groups)))") }
        } else {
            clauses.append("agrp IN (\(databaseQuestionMarks(count: groups)))")
        }
        clauses.append("tomb = ?")
        switch synchronizable {
        case .no: clauses.append("sync = 0")
        case .yes: clauses.append("sync = 1")
        case .any: break
        }
        if protection { clauses.append("pdmn = ?") }
        if uuid { clauses.append("uuid = ?") }
        for name in tokenAttributes { clauses.append("\(ItemTable.tokenColumn(name)) = ?") }
        return "SELECT \(StoredRow.columns) FROM \(ItemTable.of(itemClass).name) WHERE \(clauses.joined(separator: " AND ")) ORDER BY rowid"
    }
}
