import GRDB
import KeychainModel

/// What the SQL of a Secret Service read depends on: how many groups it names, how many
/// tokens it probes, and whether it names one item. Reads of one shape share one SQL text,
/// built once (building it on every `SearchItems` and `GetSecret`, with the counts read
/// through GRDB's rows, was 9 % of securityd's time in a lookup: twice what decrypting the
/// found item's attributes cost).
enum SecretServiceShape: Hashable {
    /// The candidate rows of `groups` groups: item `byID`'s row, else the rows listed under
    /// the first token; each of the `probes` further tokens checked per row.
    case candidates(groups: Int, byID: Bool, probes: Int)
    /// How many rows carry each of `tokens` tokens, up to a bound.
    case selectivity(tokens: Int)

    /// The statement. Arguments, in order: for candidates, the groups, then the item's uuid
    /// or the first token, then the probed tokens; for selectivity, the tokens. Selectivity's
    /// rows are (the token's position, its count).
    var sql: String {
        switch self {
        case .candidates(let groups, let byID, let probes):
            var clauses = ["agrp IN (\(databaseQuestionMarks(count: groups)))", "tomb = 0"]
            clauses.append(byID ? "uuid = ?" : "rowid IN (SELECT item FROM genp_attribute WHERE token = ?)")
            for _ in 0..<probes {
                clauses.append("EXISTS (SELECT 1 FROM genp_attribute WHERE token = ? AND item = genp.rowid)")
            }
            return "SELECT \(StoredRow.columns) FROM genp WHERE \(clauses.joined(separator: " AND ")) ORDER BY rowid"
        case .selectivity(let tokens):
            return (0..<tokens).map { "SELECT \($0), count(*) FROM (SELECT 1 FROM genp_attribute WHERE token = ? LIMIT 64)" }
                .joined(separator: " UNION ALL ")
        }
    }
}
