import FoundationEssentials
import KeychainCallers
public import KeychainModel
import SyncProtocol

/// The plaintext of an item's sync record: the item as a set of fields, each stamped with
/// the hybrid logical clock value and device of the write that last set it (a
/// last-writer-wins register per field), and the stamp of its latest deletion. The item is
/// deleted when no field was set after that deletion; a deleted item's record keeps its
/// fields but never its secret's value, so that a concurrent edit made after the deletion
/// brings the whole item back, the same on every device (``ItemMerge``).
///
/// Fields are the item's catalogue attributes, its access group (`agrp`) and protection
/// class (`pdmn`); the secret is a field of its own, kept in zeroing storage. A field whose
/// value is nil was removed by the write that stamped it. `sync`, `tomb`, the persistent
/// reference and an access control are not fields: a received item is synchronizable, live
/// or a tombstone by its record, a new item here by its uuid, and an item with an access
/// control never syncs.
public struct SyncItemPayload: Sendable, Equatable {
    /// Who set a field, and when: ordered by clock, then by device id (the tiebreak).
    public struct Stamp: Sendable, Hashable, Comparable {
        public var clock: HybridLogicalClock
        public var writer: String

        public init(clock: HybridLogicalClock, writer: String) {
            self.clock = clock
            self.writer = writer
        }

        public static func < (lhs: Stamp, rhs: Stamp) -> Bool {
            (lhs.clock, lhs.writer) < (rhs.clock, rhs.writer)
        }
    }

    /// One attribute's value (nil: removed) and its stamp. Of two, the later stamp wins; at
    /// the same stamp a value wins over none (a deleted item's record drops its secret).
    public struct Field: Sendable, Equatable {
        public var value: KeychainValue?
        public var stamp: Stamp

        public init(_ value: KeychainValue?, _ stamp: Stamp) {
            self.value = value
            self.stamp = stamp
        }
    }

    /// The secret (`v_Data`; nil: none) and its stamp.
    public struct SecretField: Sendable, Equatable {
        public var value: SecretBytes?
        public var stamp: Stamp

        public init(_ value: SecretBytes?, _ stamp: Stamp) {
            self.value = value
            self.stamp = stamp
        }

        /// Whether two secrets are the same bytes (compared in constant time) or both none.
        public static func same(_ a: SecretBytes?, _ b: SecretBytes?) -> Bool {
            switch (a, b) {
            case (nil, nil): true
            case let (a?, b?): a.isEqual(to: b)
            default: false
            }
        }

        public static func == (lhs: SecretField, rhs: SecretField) -> Bool {
            lhs.stamp == rhs.stamp && same(lhs.value, rhs.value)
        }
    }

    public var itemClass: ItemClass
    /// Catalogue attributes, `agrp` and `pdmn`, by name.
    public var fields: [String: Field]
    public var secret: SecretField?
    /// The latest deletion's stamp, if it was ever deleted.
    public var deletion: Stamp?

    public init(itemClass: ItemClass, fields: [String: Field], secret: SecretField?, deletion: Stamp? = nil) {
        self.itemClass = itemClass
        self.fields = fields
        self.secret = secret
        self.deletion = deletion
    }

    /// The record of `item` (nil: one never synced) deleted at `stamp`: its fields, its
    /// secret's stamp without the secret.
    public static func tombstone(of item: SyncItemPayload?, _ itemClass: ItemClass, _ stamp: Stamp) -> SyncItemPayload {
        var deleted = item ?? SyncItemPayload(itemClass: itemClass, fields: [:], secret: nil)
        deleted.deletion = max(deleted.deletion ?? stamp, stamp)
        deleted.secret?.value = nil
        return deleted
    }

    /// Whether the item is deleted: no field was set after its latest deletion.
    public var isDeleted: Bool {
        guard let deletion else { return false }
        return latestEdit.map { $0 <= deletion } ?? true
    }

    /// The field names that are not catalogue attributes.
    public enum Name {
        public static let accessGroup = "agrp"
        public static let protection = "pdmn"
    }

    /// The latest stamp of any field or the secret.
    public var latestEdit: Stamp? {
        ([secret?.stamp] + fields.values.map(\.stamp)).compactMap { $0 }.max()
    }

    /// The latest clock value of any stamp, the deletion's included: what a device that
    /// receives the record has seen.
    public var latestClock: HybridLogicalClock {
        max(latestEdit?.clock ?? HybridLogicalClock(rawValue: 0), deletion?.clock ?? HybridLogicalClock(rawValue: 0))
    }

    /// The item's access group; nil when the record holds no fields.
    public var accessGroup: String? { fields[Name.accessGroup]?.value?.stringValue }

    /// The item's protection class; nil when the record holds no fields.
    public var protection: ProtectionClass? { fields[Name.protection]?.value?.stringValue.flatMap(ProtectionClass.init(rawValue:)) }

    /// The catalogue attributes with a value.
    public var attributes: [String: KeychainValue] {
        var attributes: [String: KeychainValue] = [:]
        for (name, field) in fields where name != Name.accessGroup && name != Name.protection {
            if let value = field.value { attributes[name] = value }
        }
        return attributes
    }
}

// MARK: - Bytes

extension SyncItemPayload {
    static let format: UInt8 = 1
    /// More fields than any class's catalogue has, with room to grow.
    static let maximumFields = 128

    /// Stored classes by their number in the payload (never reused).
    static let classNumbers: [(ItemClass, UInt8)] = [(.genericPassword, 1), (.internetPassword, 2), (.certificate, 3), (.key, 4)]

    /// The plaintext to seal, in zeroing storage (it holds the secret).
    ///
    ///     u8  format (1)
    ///     u8  item class (1 genp, 2 inet, 3 cert, 4 keys)
    ///     u8  0/1 deletion, then its stamp
    ///     u16 field count, then per field (by name): u8 name length, name, stamp,
    ///         u8 0/1 present, KeychainValue (wire encoding) when present
    ///     u8  0/1 secret field, then stamp, u8 0/1 present, lp secret when present
    ///     stamp: i64 clock, u8 writer length, writer
    public var encoded: SecretBytes {
        var out = ByteWriter(capacity: 512 + (secret?.value?.count ?? 0))
        defer { out.zero() }
        out.append(Self.format)
        out.append(Self.classNumbers.first { $0.0 == itemClass }?.1 ?? 0)
        out.appendOptional(deletion) { deletion, out in Self.write(deletion, to: &out) }
        out.appendInteger(UInt16(fields.count))
        for name in fields.keys.sorted() {
            let field = fields[name]!  // a key of the dictionary
            out.append(UInt8(name.utf8.count))
            out.append(contentsOf: name.utf8)
            Self.write(field.stamp, to: &out)
            out.appendOptional(field.value) { value, out in value.encode(to: &out) }
        }
        out.appendOptional(secret) { secret, out in
            Self.write(secret.stamp, to: &out)
            out.appendOptionalSecret(secret.value)
        }
        return SecretBytes(out.bytes)
    }

    private static func write(_ stamp: Stamp, to out: inout ByteWriter) {
        out.appendInteger(stamp.clock.rawValue)
        out.append(UInt8(stamp.writer.utf8.count))
        out.append(contentsOf: stamp.writer.utf8)
    }

    /// Reads a record's plaintext and checks it is an item this device may take: a stored
    /// class, catalogue attributes only, scalar values, a group that may sync, a protection
    /// class that is not ThisDeviceOnly, writers that are device ids.
    ///
    /// - Parameter lostValues: the plaintext is a history entry — the fields that lost a
    ///   merge, not a whole item — so it need not name a group or a protection class.
    /// - Throws: `errSecDecode` naming what is wrong (never a value).
    public init(decoding plaintext: SecretBytes, lostValues: Bool = false) throws {
        var reader = ByteReader(plaintext)
        do {
            guard try reader.byte() == Self.format else { throw KeychainError.decode("unknown sync item format") }
            let number = try reader.byte()
            guard let itemClass = Self.classNumbers.first(where: { $0.1 == number })?.0 else {
                throw KeychainError.decode("a sync item of an unknown class")
            }
            self.itemClass = itemClass
            deletion = try reader.optional(Self.readStamp)
            let count = Int(try reader.integer(UInt16.self))
            guard count <= Self.maximumFields else { throw KeychainError.decode("a sync item has too many fields") }
            let names = Self.fieldNames(of: itemClass)
            var fields: [String: Field] = [:]
            var previous = ""
            for _ in 0..<count {
                let length = Int(try reader.byte())
                guard let name = try reader.utf8(length), name > previous else {
                    throw KeychainError.decode("a sync item's field names are not UTF-8 in order")
                }
                previous = name
                guard names.contains(name) else { throw KeychainError.decode("a sync item has a field that is not an attribute of its class") }
                let stamp = try Self.readStamp(&reader)
                let value = try reader.optional { reader in try KeychainValue.decode(from: &reader) }
                switch value {
                case .array?, .dictionary?: throw KeychainError.decode("a sync item's values are scalars")
                default: fields[name] = Field(value, stamp)
                }
            }
            self.fields = fields
            secret = try reader.optional { reader in
                let stamp = try Self.readStamp(&reader)
                return SecretField(try reader.optionalSecret(limit: SyncLimits.recordBody), stamp)
            }
            try reader.expectEnd("sync item")
        } catch let error as KeychainError {
            throw error
        } catch {
            throw KeychainError.decode("a sync item is truncated")
        }
        if isDeleted, fields.isEmpty { return }  // deleted before this device saw it
        if isDeleted, secret?.value != nil { throw KeychainError.decode("a deleted sync item carries a secret") }
        if lostValues { return }
        guard let group = accessGroup, AccessGroups.maySync(group) else {
            throw KeychainError.decode("a sync item names no access group, or one that does not sync")
        }
        guard let protection, !protection.isThisDeviceOnly else {
            throw KeychainError.decode("a sync item names no protection class, or a ThisDeviceOnly one")
        }
    }

    /// The names a payload of `itemClass` may hold: the group, the protection class, and the
    /// catalogue's attributes but the internal ones (an access control, the persistent
    /// reference…), `sync` and `tomb` (the record says those), and a token id (a token's
    /// keys stay with the token).
    public static func fieldNames(of itemClass: ItemClass) -> Set<String> {
        let excluded: Set<String> = [ItemSchema.Name.synchronizable, ItemSchema.Name.tombstone, SecName.kSecAttrTokenID]
        var names: Set<String> = [Name.accessGroup, Name.protection]
        for attribute in ItemSchema.of(itemClass).attributes where attribute.access != .internal && !excluded.contains(attribute.name) {
            names.insert(attribute.name)
        }
        return names
    }

    private static func readStamp(_ reader: inout ByteReader) throws -> Stamp {
        let clock = try reader.integer(Int64.self)
        let length = Int(try reader.byte())
        guard let writer = try reader.utf8(length), SyncIdentifier(writer) != nil else {
            throw KeychainError.decode("a sync item names an ill-formed writer")
        }
        return Stamp(clock: HybridLogicalClock(rawValue: clock), writer: writer)
    }
}
