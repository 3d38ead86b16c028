public import FoundationEssentials

/// What a `SecItem` call asks for, validated against the class's catalogue.
///
/// Built from a caller's dictionary by ``init(_:for:)``; every key is either understood
/// or rejected with Apple's status, so the store never sees an unvalidated attribute.
public struct ItemQuery: Sendable {
    /// Which items `sync` selects.
    public enum Synchronizable: Sendable, Hashable {
        /// Only non-synchronizable items: the default when a query does not name `sync`.
        case no
        case yes
        /// `kSecAttrSynchronizableAny`.
        case any
    }

    /// How many matches to return (`kSecMatchLimit`).
    public enum MatchLimit: Sendable, Hashable {
        case one
        case all
        case count(Int)

        /// Whether results come as an array rather than a single value.
        public var returnsArray: Bool {
            if case .one = self { return false }
            if case .count(1) = self { return false }
            return true
        }

        public var maximum: Int? {
            switch self {
            case .one: 1
            case .all: nil
            case .count(let n): n
            }
        }
    }

    /// The `kSecReturn*` flags.
    public struct ReturnTypes: OptionSet, Sendable, Hashable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        public static let data = ReturnTypes(rawValue: 1)
        public static let attributes = ReturnTypes(rawValue: 2)
        public static let ref = ReturnTypes(rawValue: 4)
        public static let persistentRef = ReturnTypes(rawValue: 8)
    }

    public var itemClass: ItemClass
    /// Validated catalogue attributes (not agrp, pdmn, sync, tomb), by name.
    public var attributes: [String: KeychainValue]
    public var accessGroup: String?
    public var protection: ProtectionClass?
    public var synchronizable: Synchronizable
    /// `tomb` as named in a query; nil means live items only.
    public var tombstone: Bool?
    public var limit: MatchLimit
    public var returnTypes: ReturnTypes
    /// `v_Data`, for add.
    public var data: SecretBytes?
    public var persistentReference: PersistentReference?
    /// `kSecUseTombstones`, for delete; nil means "tombstones for synchronizable items".
    public var useTombstones: Bool?
    /// `kSecAttrAccessControl`, for add.
    public var accessControl: AccessControl?
    /// `kSecUseAuthenticationContext` and `kSecUseAuthenticationUI`.
    public var authentication = Authentication()

    /// How an operation may authenticate the user for items with an access control.
    public struct Authentication: Sendable, Hashable {
        /// `kSecUseAuthenticationUI`.
        public enum Interaction: Sendable, Hashable {
            /// Ask the caller to authenticate (errSecAuthNeeded with what is needed).
            case allow
            /// errSecInteractionNotAllowed instead.
            case fail
            /// Leave items that need authentication out of the results.
            case skip
        }

        /// The id of the caller's authentication context, whose proofs the enclave holds.
        public var context: Data?
        public var interaction: Interaction = .allow

        public init() {}
    }

    public init(itemClass: ItemClass) {
        self.itemClass = itemClass
        self.attributes = [:]
        self.synchronizable = .no
        self.limit = .one
        self.returnTypes = []
    }
}

/// The attributes and data a `SecItemUpdate` changes.
public struct ItemChanges: Sendable {
    public var attributes: [String: KeychainValue] = [:]
    public var accessGroup: String?
    public var protection: ProtectionClass?
    public var synchronizable: Bool?
    public var data: SecretBytes?
    /// A new `kSecAttrAccessControl` (its protection class is in ``protection``).
    public var accessControl: AccessControl?

    public init() {}

    public var isEmpty: Bool {
        attributes.isEmpty && accessGroup == nil && protection == nil && synchronizable == nil && data == nil
            && accessControl == nil
    }
}

/// The `SecItem` call a dictionary is validated for.
public enum ItemOperation: Sendable {
    case add
    case copyMatching
    case update
    case delete
}
