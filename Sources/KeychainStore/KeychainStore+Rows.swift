import FoundationEssentials
import GRDB
import KeychainCrypto
import KeychainModel

/// A decrypted row that matched a query.
struct Match {
    let row: StoredRow
    var item: KeychainItem
}

/// The matches of a search, and whether a candidate could not be read (errSecDecode)
/// and was skipped, so that an otherwise empty result reports the damage.
struct SearchOutcome {
    var matches: [Match] = []
    var skippedUnreadable = false

    /// - Throws: errSecDecode when nothing matched but a candidate was unreadable,
    ///   errSecItemNotFound when nothing matched.
    func requireMatches() throws -> [Match] {
        if matches.isEmpty {
            throw skippedUnreadable
                ? KeychainError.decode("the matching item could not be decrypted") : KeychainError.itemNotFound
        }
        return matches
    }
}

/// An item sealed for storage: its identity, blobs and token column values.
struct SealedRow {
    let identity: RowIdentity
    let metadata: Data
    let secret: Data
    let tokens: [(column: String, value: Int64?)]
    /// A Secret Service item's attribute tokens (`genp_attribute`), nil for other items.
    var attributeTokens: [Int64]? = nil
}

extension KeychainStore {
    /// The SELECT of candidate rows: plaintext columns and token equality only.
    func selectStatement(_ criteria: SearchCriteria) -> (String, [any DatabaseValueConvertible]) {
        let table = ItemTable.of(criteria.itemClass)
        let tokenAttributes = criteria.attributes.keys.filter(table.hasTokenColumn).sorted()
        let shape = SelectShape(criteria, tokenAttributes: tokenAttributes)
        // The SQL depends on the shape alone: built once per shape, not per request.
        let sql = statements.selectSQL(for: shape)
        // Bound by the store itself (`Statement.forEachRow`), each through GRDB's binding for its type.
        var arguments: [any DatabaseValueConvertible] = []
        arguments.reserveCapacity(criteria.groups.count + (criteria.excludedGroups?.count ?? 0) + tokenAttributes.count + 3)
        for group in criteria.excludedGroups ?? criteria.groups { arguments.append(group) }
        arguments.append(criteria.tombstone ? 1 : 0)
        if let protection = criteria.protection { arguments.append(protection.rawValue) }
        if let uuid = criteria.uuid { arguments.append(uuid.storedBytes) }
        for name in tokenAttributes {
            // A value's presence under the name was established by the filter above.
            arguments.append(blindIndex.token(criteria.itemClass, attribute: name, value: criteria.attributes[name]!))
        }
        return (sql, arguments)
    }

    /// Candidate rows by plaintext columns and tokens (an indexed lookup when the query names
    /// a primary-key attribute), each decrypted and confirmed, in insertion order.
    ///
    /// With data, an item whose access control the query's context has not satisfied is
    /// left out when the query says `kSecUseAuthenticationUISkip`, and stops the search otherwise.
    func search(
        _ criteria: SearchCriteria, in db: Database, limit: Int?, withData: Bool, keys: OperationKeys,
        authentication: ItemQuery.Authentication = .init()
    ) throws -> SearchOutcome {
        let (sql, arguments) = selectStatement(criteria)
        var outcome = SearchOutcome()
        let statement = try statements.cachedSelect(sql, in: db)
        assert(Array(statement.columnNames.prefix(9)) == StoredRow.columnNames, "not a SELECT of StoredRow.columns")
        try statement.forEachRow(binding: arguments) { row in
            do {
                let stored = try StoredRow(row, itemClass: criteria.itemClass)
                let associatedData = stored.identity.associatedData(for: .metadata)
                var item = try openMetadata(stored, keys: keys, associatedData: associatedData)
                guard criteria.accepts(item) else { return true }
                if withData {
                    do {
                        (item.data, item.accessControl) = try openSecret(
                            stored, authentication: authentication,
                            associatedData: RowIdentity.associatedData(associatedData, as: .secret))
                    } catch let error as KeychainError where error == .authNeeded && authentication.interaction == .skip {
                        return true
                    }
                }
                outcome.matches.append(Match(row: stored, item: item))
                if let limit, outcome.matches.count >= limit { return false }
            } catch let error as KeychainError where error == .decode {
                // One damaged row must not hide the others.
                outcome.skippedUnreadable = true
            }
            return true
        }
        return outcome
    }

    /// Decrypts a row's attributes; `associatedData` is the row's for its metadata, when the
    /// caller has built it already.
    func openMetadata(_ stored: StoredRow, keys: OperationKeys, associatedData: Data? = nil) throws -> KeychainItem {
        let identity = stored.identity
        let key = try keys.metadataKey(for: identity.protection)
        let attributes = try MetadataBlob.open(
            stored.metadata, key: key, associatedData: associatedData ?? identity.associatedData(for: .metadata))
        return KeychainItem(
            itemClass: identity.itemClass, attributes: attributes, accessGroup: identity.accessGroup,
            protection: identity.protection, synchronizable: identity.synchronizable,
            tombstone: identity.tombstone,
            persistentReference: PersistentReference(itemClass: identity.itemClass, uuid: identity.uuid),
            data: nil)
    }

    /// Decrypts a row's secret through the keybag, which checks its access control against
    /// the query's authentication context. `associatedData` is the row's for its secret, when the caller has built it already.
    func openSecret(
        _ stored: StoredRow, authentication: ItemQuery.Authentication = .init(), associatedData built: Data? = nil
    ) throws -> (SecretBytes?, AccessControl?) {
        let protection = stored.identity.protection
        var access: AccessControl?
        let rowAssociatedData = built ?? stored.identity.associatedData(for: .secret)
        let secret = try SecretBlob.open(stored.secret, associatedData: rowAssociatedData) { wrapped, associatedData, stored in
            access = stored
            do {
                return try keybag.unwrapItemKey(
                    wrapped, for: protection, associatedData: associatedData, access: stored, context: authentication.context)
            } catch let error as KeychainError where error == .authNeeded {
                guard let stored else { throw error }
                throw Self.authenticationError(error, access: stored, associatedData: associatedData, authentication)
            }
        }
        return (secret, access)
    }

    /// errSecAuthNeeded as the caller sees it: with what to prove and the operation to bind
    /// the proof to, or errSecInteractionNotAllowed when the query said not to ask.
    static func authenticationError(
        _ error: KeychainError, access: AccessControl, associatedData: Data, _ authentication: ItemQuery.Authentication,
        storing: Bool = false
    ) -> KeychainError {
        if authentication.interaction == .fail {
            return KeychainError(
                status: OSStatusCode.interactionNotAllowed,
                message: "the item needs the user's authentication, and the query does not allow asking")
        }
        var requirement = AuthenticationRequirement(access, operation: AccessBinding.operation(associatedData: associatedData))
        if storing {
            requirement.factors = []
            requirement.requiredFactors = 0
        }
        return KeychainError(status: error.status, message: error.message, details: requirement.details)
    }

    /// Encrypts `item` for its row: tokens, the primary-key token, and both blobs.
    func seal(_ item: KeychainItem, keys: OperationKeys, authentication: ItemQuery.Authentication = .init()) throws -> SealedRow {
        try seal(item, keys: keys) { identity in
            try SecretBlob.seal(item.data, identity: identity, access: item.accessControl) { itemKey, associatedData, access in
                do {
                    return try keybag.wrapItemKey(
                        itemKey, for: item.protection, associatedData: associatedData, access: access, context: authentication.context)
                } catch let error as KeychainError where error == .authNeeded {
                    guard let access else { throw error }
                    // Storing needs only the application password, never the user's presence.
                    throw Self.authenticationError(error, access: access, associatedData: associatedData, authentication, storing: true)
                }
            }
        }
    }

    /// The primary-key token of `item`: equal for items that are duplicates of each other.
    func primaryKeyToken(of item: KeychainItem) -> Data {
        let primaryKey = ItemTable.of(item.itemClass).schema.primaryKey.map { attribute in
            (name: attribute.name, value: item.value(of: attribute.name) ?? attribute.defaultValue)
        }
        return blindIndex.primaryKeyToken(item.itemClass, values: primaryKey)
    }

    /// Encrypts `item`'s attributes for its row and computes its tokens; `secret` makes the
    /// secret blob for the row's identity.
    func seal(_ item: KeychainItem, keys: OperationKeys, secret: (RowIdentity) throws -> Data) throws -> SealedRow {
        let table = ItemTable.of(item.itemClass)
        let identity = RowIdentity(
            itemClass: item.itemClass, uuid: item.persistentReference.uuid, accessGroup: item.accessGroup,
            protection: item.protection, synchronizable: item.synchronizable, tombstone: item.tombstone,
            primaryKeyToken: primaryKeyToken(of: item))
        let metadata = try MetadataBlob.seal(
            item.attributes, key: keys.metadataKey(for: item.protection), identity: identity)
        let secret = try secret(identity)
        let tokens = table.tokenAttributes.map { attribute in
            (
                column: ItemTable.tokenColumn(attribute.name),
                value: item.attributes[attribute.name].map {
                    blindIndex.token(item.itemClass, attribute: attribute.name, value: $0)
                }
            )
        }
        return SealedRow(identity: identity, metadata: metadata, secret: secret, tokens: tokens, attributeTokens: try secretServiceTokens(of: item))
    }

    /// Inserts a sealed row.
    func insert(_ sealed: SealedRow, in db: Database) throws {
        let (columns, values) = columnValues(sealed)
        let sql = "INSERT INTO \(sealed.identity.itemClass.rawValue) (\(columns.joined(separator: ", "))) VALUES (\(databaseQuestionMarks(count: columns.count)))"
        try statements.statement(sql, in: db).execute(arguments: StatementArguments(values))
        if let attributeTokens = sealed.attributeTokens { try writeAttributeTokens(attributeTokens, of: db.lastInsertedRowID, in: db) }
    }

    /// Replaces the row `rowID` with a sealed row, keeping its rowid (insertion order).
    func replace(rowID: Int64, with sealed: SealedRow, in db: Database) throws {
        let (columns, values) = columnValues(sealed)
        let sql = "UPDATE \(sealed.identity.itemClass.rawValue) SET \(columns.map { "\($0) = ?" }.joined(separator: ", ")) WHERE rowid = ?"
        try statements.statement(sql, in: db).execute(arguments: StatementArguments(values + [rowID]))
        if sealed.identity.itemClass == .genericPassword {
            try statements.statement("DELETE FROM genp_attribute WHERE item = ?", in: db).execute(arguments: [rowID])
            if let attributeTokens = sealed.attributeTokens { try writeAttributeTokens(attributeTokens, of: rowID, in: db) }
        }
    }

    func deleteRow(_ rowID: Int64, of itemClass: ItemClass, in db: Database) throws {
        try statements.statement("DELETE FROM \(itemClass.rawValue) WHERE rowid = ?", in: db).execute(arguments: [rowID])
    }

    /// Makes room for a row with primary-key token `pk`: a tombstone there is removed; a live
    /// item other than `excluding` is a duplicate.
    func claimPrimaryKey(_ pk: Data, of itemClass: ItemClass, excluding: Int64?, in db: Database) throws {
        guard
            let row = try Row.fetchOne(
                statements.statement("SELECT rowid, tomb FROM \(itemClass.rawValue) WHERE pk = ?", in: db), arguments: [pk])
        else { return }
        let rowID: Int64 = row["rowid"]
        if rowID == excluding { return }
        guard (row["tomb"] as Int64) != 0 else { throw KeychainError.duplicateItem }
        try deleteRow(rowID, of: itemClass, in: db)
    }

    /// The tombstone a deleted or re-keyed synchronizable item leaves: its primary key,
    /// dates and identity columns, a new persistent reference, no secret.
    func tombstone(of item: KeychainItem, at now: Date) -> KeychainItem {
        let schema = ItemSchema.of(item.itemClass)
        var attributes: [String: KeychainValue] = [:]
        for attribute in schema.primaryKey {
            if let value = item.attributes[attribute.name] { attributes[attribute.name] = value }
        }
        attributes[ItemSchema.Name.creationDate] = item.attributes[ItemSchema.Name.creationDate]
        attributes[ItemSchema.Name.modificationDate] = .date(now)
        var tombstone = item
        tombstone.attributes = attributes
        tombstone.tombstone = true
        tombstone.data = nil
        tombstone.persistentReference = PersistentReference(itemClass: item.itemClass, uuid: UUID())
        return tombstone
    }

    private func columnValues(_ sealed: SealedRow) -> ([String], [(any DatabaseValueConvertible)?]) {
        let identity = sealed.identity
        var columns = ["uuid", "agrp", "pdmn", "sync", "tomb", "pk"]
        var values: [(any DatabaseValueConvertible)?] = [
            identity.uuid.storedBytes, identity.accessGroup, identity.protection.rawValue,
            identity.synchronizable ? 1 : 0, identity.tombstone ? 1 : 0, identity.primaryKeyToken,
        ]
        for token in sealed.tokens {
            columns.append(token.column)
            values.append(token.value)
        }
        columns += ["meta", "secret"]
        values += [sealed.metadata, sealed.secret]
        return (columns, values)
    }
}
