import FoundationEssentials

/// One attribute of an item class: its four-letter name, type, and role.
public struct AttributeDescriptor: Sendable, Hashable {
    /// Who may name the attribute.
    public enum Access: Sendable, Hashable {
        /// Callers set it on add and update and name it in queries.
        case settable
        /// Callers name it in queries; the store sets it (cdat, mdat, tomb).
        case queryOnly
        /// Only the store uses it; a caller naming it gets errSecParam.
        case `internal`
    }

    /// Apple's raw attribute name, for example `acct` (`kSecAttrAccount`).
    public let name: String
    public let type: AttributeType
    public let access: Access
    /// Whether the attribute is part of the class's primary key.
    public let isPrimaryKey: Bool

    public init(_ name: String, _ type: AttributeType, access: Access = .settable, primaryKey: Bool = false) {
        self.name = name
        self.type = type
        self.access = access
        self.isPrimaryKey = primaryKey
    }

    /// The value a missing primary-key attribute takes before uniqueness is decided:
    /// '' for strings, empty data, 0 for numbers, false for booleans, the reference date for dates.
    public var defaultValue: KeychainValue {
        switch type {
        case .string: .string("")
        case .data: .data(Data())
        case .number: .number(0)
        case .bool: .bool(false)
        case .date: .date(Date(timeIntervalSinceReferenceDate: 0))
        }
    }

    /// Whether the store keeps a keyed token for the attribute, so equality queries
    /// can find candidates without decrypting rows.
    public var isIndexed: Bool {
        access != .internal && (type == .string || type == .data)
    }

    /// The text attributes Apple's schema declares as blobs (SecItemSchema.c): a caller may
    /// give them as `String` or as `Data`.
    public static let blobAttributes: Set<String> = [
        SecName.kSecAttrAccount, SecName.kSecAttrService, SecName.kSecAttrLabel, SecName.kSecAttrDescription,
        SecName.kSecAttrComment, SecName.kSecAttrServer, SecName.kSecAttrSecurityDomain, SecName.kSecAttrPath,
    ]

    /// The largest string or data value an attribute may hold, in bytes.
    public static let maximumValueSize = 64 * 1024

    /// Converts a caller's value to this attribute's type the way CoreFoundation-based
    /// keychain code expects: a CFNumber or CFBoolean for a boolean, a decimal string for a
    /// number (`kSecAttrKeyClassPrivate` is "1"), a string for data (its UTF-8 bytes).
    ///
    /// - Throws: `errSecParam` when the value has another type, `errSecDataTooLarge` when
    ///   it exceeds ``maximumValueSize``. The message names the attribute, never the value.
    public func coerce(_ value: KeychainValue) throws -> KeychainValue {
        let coerced: KeychainValue?
        switch (type, value) {
        case (.string, .string): coerced = value
        // Apple's "blob" attributes keep the type they were given: a Data account is stored,
        // matched and returned as Data (and is another key than the String of its bytes).
        case (.string, .data) where Self.blobAttributes.contains(name): coerced = value
        case (.data, .data): coerced = value
        case (.data, .string(let s)): coerced = .data(Data(s.utf8))
        case (.number, .number): coerced = value
        case (.number, .bool(let b)): coerced = .number(b ? 1 : 0)
        case (.number, .string(let s)): coerced = Int64(s).map(KeychainValue.number)
        case (.date, .date): coerced = value
        case (.bool, .bool): coerced = value
        case (.bool, .number(let n)): coerced = .bool(n != 0)
        default: coerced = nil
        }
        guard let coerced else {
            throw KeychainError.param("attribute \(name) expects a \(type) value, not a \(value.typeName)")
        }
        let size: Int =
            switch coerced {
            case .string(let s): s.utf8.count
            case .data(let d): d.count
            default: 0
            }
        guard size <= Self.maximumValueSize else {
            throw KeychainError(status: OSStatusCode.dataTooLarge, message: "attribute \(name) is larger than \(Self.maximumValueSize) bytes")
        }
        return coerced
    }
}
