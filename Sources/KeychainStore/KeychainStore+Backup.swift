import FoundationEssentials
import GRDB
public import KeychainCrypto
public import KeychainModel
public import EnclaveProtocol

/// What a backup held and left out.
public struct BackupReport: Sendable, Hashable {
    /// Rows written to the archive, tombstones included.
    public var backedUp = 0
    /// WhenPasscodeSetThisDeviceOnly items: never backed up.
    public var passcodeSetItems = 0
    /// Items with an application password, whose key cannot be re-wrapped without it.
    public var applicationPasswordItems = 0
    /// Rows that failed authentication (errSecDecode) and were left out.
    public var unreadable = 0

    public init() {}
}

/// What a restore did with each record.
public struct RestoreReport: Sendable, Hashable {
    /// Records written as new rows.
    public var restored = 0
    /// Records that replaced an older item with the same primary key.
    public var replaced = 0
    /// Records left out because an item with the same primary key is as new or newer.
    public var keptExisting = 0
    /// ThisDeviceOnly records from another device: their keys do not open here.
    public var otherDeviceOnly = 0
    /// Records bound to the biometric enrollment of another device (biometryCurrentSet
    /// with no other way in): they could never be read here.
    public var otherDeviceEnrollment = 0

    public init() {}
}

extension KeychainStore {
    /// Every row but WhenPasscodeSetThisDeviceOnly ones (tombstones too) as backup records:
    /// attributes sealed under the backup's metadata keys, secrets re-sealed by the enclave.
    ///
    /// - Throws: `errSecInteractionNotAllowed` when a class is not available now (the
    ///   keychain is locked): a backup is all or nothing.
    public func backupRecords(archive: UUID, keys: any BackupKeys) throws -> ([BackupArchive.Record], BackupReport) {
        var report = BackupReport()
        var records: [BackupArchive.Record] = []
        let deviceKeys = OperationKeys(keybag)
        let backupKeys = OperationKeys(keys)
        try read { db in
            for itemClass in ItemClass.stored {
                let rows = try Row.fetchCursor(db, sql: "SELECT \(StoredRow.columns) FROM \(itemClass.rawValue) ORDER BY rowid")
                while let row = try rows.next() {
                    do {
                        let stored = try StoredRow(row, itemClass: itemClass)
                        let identity = stored.identity
                        if identity.protection == .whenPasscodeSetThisDeviceOnly {
                            report.passcodeSetItems += 1
                            continue
                        }
                        let attributes = try MetadataBlob.open(
                            stored.metadata, key: deviceKeys.metadataKey(for: identity.protection), identity: identity)
                        var record = BackupArchive.Record(
                            itemClass: itemClass, uuid: identity.uuid, accessGroup: identity.accessGroup,
                            protection: identity.protection, synchronizable: identity.synchronizable, tombstone: identity.tombstone)
                        record.metadata = try MetadataBlob.seal(
                            attributes, key: backupKeys.metadataKey(for: identity.protection),
                            associatedData: record.associatedData(for: .metadata, archive: archive))
                        record.secret = try keys.exportSecret(
                            stored.secret, protection: identity.protection, rowAssociatedData: identity.associatedData(for: .secret),
                            recordAssociatedData: record.associatedData(for: .secret, archive: archive))
                        records.append(record)
                        report.backedUp += 1
                    } catch let error as KeychainError where error == .authNeeded {
                        report.applicationPasswordItems += 1
                    } catch let error as KeychainError where error == .decode {
                        report.unreadable += 1
                    }
                }
            }
        }
        return (records, report)
    }

    /// Writes an archive's records into this keychain in one transaction: any failure
    /// (a record that does not decrypt, a class locked now) writes nothing.
    ///
    /// A record whose primary key an item here already has replaces it only when its
    /// modification date is newer; on a tie the item here stays, so restoring twice is a
    /// no-op. A record keeps its persistent reference unless another item here has it.
    ///
    /// - Parameters:
    ///   - available: the backup classes whose keys opened (ThisDeviceOnly ones only on
    ///     the device that made the backup); records of others are counted, not written.
    ///   - sameDevice: whether this device made the backup.
    public func restore(
        _ records: [BackupArchive.Record], archive: UUID, keys: any BackupKeys, available: Set<ProtectionClass>, sameDevice: Bool
    ) throws -> RestoreReport {
        try write { db in
            var report = RestoreReport()
            let deviceKeys = OperationKeys(keybag)
            let backupKeys = OperationKeys(keys)
            for record in records {
                guard available.contains(record.protection), record.protection != .whenPasscodeSetThisDeviceOnly else {
                    report.otherDeviceOnly += 1
                    continue
                }
                if !sameDevice, let access = try SecretBlob.accessControl(of: record.secret), !access.survivesEnrollmentChange {
                    report.otherDeviceEnrollment += 1
                    continue
                }
                let attributes = try MetadataBlob.open(
                    record.metadata, key: backupKeys.metadataKey(for: record.protection),
                    associatedData: record.associatedData(for: .metadata, archive: archive))
                var item = KeychainItem(
                    itemClass: record.itemClass, attributes: attributes, accessGroup: record.accessGroup,
                    protection: record.protection, synchronizable: record.synchronizable, tombstone: record.tombstone,
                    persistentReference: PersistentReference(itemClass: record.itemClass, uuid: record.uuid), data: nil)

                let table = record.itemClass.rawValue
                if let existing = try Row.fetchOne(
                    db, sql: "SELECT \(StoredRow.columns) FROM \(table) WHERE pk = ?", arguments: [primaryKeyToken(of: item)])
                {
                    let stored = try StoredRow(existing, itemClass: record.itemClass)
                    // An item here that no longer decrypts is no reason to keep it.
                    let current = try? MetadataBlob.open(
                        stored.metadata, key: deviceKeys.metadataKey(for: stored.identity.protection), identity: stored.identity)
                    if let current, !Self.isNewer(attributes, than: current) {
                        report.keptExisting += 1
                        continue
                    }
                    try deleteRow(stored.rowID, of: record.itemClass, in: db)
                    let replaced = stored.identity
                    if Self.syncs(replaced), replaced.uuid != item.persistentReference.uuid {
                        try journal(.tombstone, uuid: replaced.uuid, of: record.itemClass, at: Date(), in: db)
                    }
                    report.replaced += 1
                } else {
                    report.restored += 1
                }
                if try Bool.fetchOne(db, sql: "SELECT 1 FROM \(table) WHERE uuid = ?", arguments: [record.uuid.storedBytes]) == true {
                    item.persistentReference = PersistentReference(itemClass: record.itemClass, uuid: UUID())
                }
                let sealed = try seal(item, keys: deviceKeys) { identity in
                    try keys.importSecret(
                        record.secret, protection: record.protection,
                        recordAssociatedData: record.associatedData(for: .secret, archive: archive),
                        rowAssociatedData: identity.associatedData(for: .secret))
                }
                try insert(sealed, in: db)
                if Self.syncs(item) { try journal(.upsert, uuid: item.persistentReference.uuid, of: item.itemClass, at: Date(), in: db) }
            }
            return report
        }
    }

    /// Whether `attributes` were modified after `other` (a missing date is the oldest).
    static func isNewer(_ attributes: [String: KeychainValue], than other: [String: KeychainValue]) -> Bool {
        func modified(_ attributes: [String: KeychainValue]) -> Date {
            guard case .date(let date)? = attributes[ItemSchema.Name.modificationDate] else { return .distantPast }
            return date
        }
        return modified(attributes) > modified(other)
    }
}
