import FoundationEssentials

extension ItemQuery {
    /// Validates a `SecItem` dictionary for `operation`.
    ///
    /// - Throws: `errSecParam` (-50) for a missing class, a value of the wrong type, an
    ///   internal attribute or an option the operation does not take;
    ///   `errSecNoSuchClass` (-25306) for an unknown class; `errSecNoSuchAttr` (-25303)
    ///   for an attribute the class does not have.
    public init(_ dictionary: [String: KeychainValue], for operation: ItemOperation) throws {
        var reference: PersistentReference?
        if let value = dictionary[QueryKey.valuePersistentRef] {
            guard operation != .add else {
                throw KeychainError.param("kSecValuePersistentRef cannot be used to add an item")
            }
            guard case .data(let bytes) = value else {
                throw KeychainError.param("kSecValuePersistentRef expects data, not a \(value.typeName)")
            }
            reference = try PersistentReference(data: bytes)
        }

        let itemClass: ItemClass
        switch dictionary[QueryKey.itemClass] {
        case nil:
            guard let reference else { throw KeychainError.param("the query has no kSecClass") }
            itemClass = reference.itemClass
        case .string(let name)?:
            guard let known = ItemClass(rawValue: name) else {
                throw KeychainError(status: OSStatusCode.noSuchClass, message: "unknown item class \(name)")
            }
            itemClass = known
        case let other?:
            throw KeychainError.param("kSecClass expects a string, not a \(other.typeName)")
        }
        if let reference, reference.itemClass != itemClass {
            throw KeychainError.param("the persistent reference is not of class \(itemClass.rawValue)")
        }
        if itemClass == .identity, operation == .add || operation == .update {
            throw KeychainError.param("identities are added and updated as a certificate and a private key")
        }

        self.init(itemClass: itemClass)
        self.persistentReference = reference
        if operation == .delete { limit = .all }

        var namesAttribute = false
        // One allocation for the attributes, however many the query names.
        attributes.reserveCapacity(dictionary.count)
        // In key order, so that the first bad key reported is always the same one.
        for (key, value) in dictionary.sorted(by: { $0.key < $1.key }) {
            if Self.isAttributeName(key) {
                try setAttribute(key, value, for: operation)
                // kSecAttrSynchronizable says which items a reference may name (without
                // it, local ones only, as every query): the one attribute it may carry.
                if key != ItemSchema.Name.synchronizable { namesAttribute = true }
                continue
            }
            switch key {
            case QueryKey.itemClass, QueryKey.valuePersistentRef, QueryKey.useDataProtectionKeychain, QueryKey.useKeychain, QueryKey.matchSearchList:
                continue
            case QueryKey.matchLimit:
                try parseMatchLimit(value, for: operation)
            case QueryKey.returnData, QueryKey.returnAttributes, QueryKey.returnRef, QueryKey.returnPersistentRef:
                try parseReturnType(key, value, for: operation)
            case QueryKey.valueData:
                // A search ignores v_Data, as Apple's does.
                if operation == .add { data = try Self.secret(from: value) }
            case QueryKey.valueRef:
                throw KeychainError(status: OSStatusCode.unimplemented,
                                    message: "kSecValueRef is not supported yet")
            case QueryKey.accessControl:
                guard operation == .add else { throw KeychainError.param("kSecAttrAccessControl cannot be searched for") }
                accessControl = try Self.accessControl(from: value)
            case QueryKey.authenticationContext:
                guard case .data(let id) = value, id.count == Self.authenticationContextSize else {
                    throw KeychainError.param("kSecUseAuthenticationContext must be an LAContext")
                }
                authentication.context = id
            case QueryKey.authenticationUI:
                switch value {
                case .string(QueryKey.authenticationUIAllow): authentication.interaction = .allow
                case .string(QueryKey.authenticationUIFail): authentication.interaction = .fail
                case .string(QueryKey.authenticationUISkip) where operation == .copyMatching: authentication.interaction = .skip
                default: throw KeychainError.param("kSecUseAuthenticationUI must be Allow, Fail, or Skip (for searches)")
                }
            case QueryKey.noAuthenticationUI:
                guard let flag = value.boolValue else { throw KeychainError.param("kSecUseNoAuthenticationUI expects a boolean") }
                if flag { authentication.interaction = .fail }
            case QueryKey.useTombstones:
                guard operation == .delete, let flag = value.boolValue else {
                    throw KeychainError.param("kSecUseTombstones is a boolean that only delete takes")
                }
                useTombstones = flag
            default:
                if key.hasPrefix("m_") {
                    guard operation == .copyMatching else {
                        throw KeychainError.param("match option \(key) is not supported by this operation")
                    }
                    guard QueryKey.unimplementedMatchOptions.contains(key) else {
                        throw KeychainError.param("unknown match option \(key)")
                    }
                    throw KeychainError(status: OSStatusCode.unimplemented, message: "match option \(key) is not supported yet")
                } else if key.hasPrefix("r_") || key.hasPrefix("v_") {
                    throw KeychainError.param("unknown query key \(key)")
                } else if key.hasPrefix("u_") {
                    // kSecUseAuthenticationUI, kSecUseOperationPrompt, ...: options for
                    // user presence, which items without an ACL never need.
                    continue
                } else {
                    // A key with an underscore but no option's prefix (a key without one
                    // was taken as an attribute's above): setAttribute says it is unknown.
                    try setAttribute(key, value, for: operation)
                    namesAttribute = true
                }
            }
        }
        if reference != nil, namesAttribute {
            throw KeychainError.param("a persistent reference cannot be combined with attributes")
        }
        if let accessControl {
            try Self.check(accessControl, protection: protection, synchronizable: synchronizable == .yes)
            protection = accessControl.protection
        }
    }

    /// Whether `key` names an attribute (acct, svce, …), not an option: the option keys are
    /// prefixed (`m_`, `r_`, `v_`, `u_`) but for three. The switch of the options compares
    /// a key with each of them in turn, each a global's access and a string comparison:
    /// for a find's attributes that was a third of parsing its query.
    static func isAttributeName(_ key: String) -> Bool {
        !key.utf8.contains(UInt8(ascii: "_")) && key != QueryKey.itemClass && key != QueryKey.useDataProtectionKeychain
            && key != QueryKey.accessControl
    }

    /// The size of an authentication context id.
    public static let authenticationContextSize = 16

    static func accessControl(from value: KeychainValue) throws -> AccessControl {
        guard case .data(let bytes) = value else {
            throw KeychainError.param("kSecAttrAccessControl expects a SecAccessControl")
        }
        let access: AccessControl
        do {
            access = try AccessControl(encoded: bytes)
        } catch let error as KeychainError {
            throw KeychainError.param("kSecAttrAccessControl is malformed: \(error.message)")
        }
        guard access.enrollment.isEmpty, access.passwordSalt.isEmpty else {
            throw KeychainError.param("kSecAttrAccessControl carries values only the keychain sets")
        }
        return access
    }

    /// What an item with `access` may not be: synchronizable, of another class than its
    /// access control, or protected by what Linux lacks.
    static func check(_ access: AccessControl, protection: ProtectionClass?, synchronizable: Bool) throws {
        try ItemRules.check(synchronizable: synchronizable, protection: nil, constrainedAccess: !access.flags.isEmpty)
        if let protection, protection != access.protection {
            throw KeychainError.param("kSecAttrAccessible and kSecAttrAccessControl disagree")
        }
        if access.flags.contains(.privateKeyUsage) {
            throw KeychainError.param("kSecAccessControlPrivateKeyUsage applies to private keys")
        }
        if access.factors.contains(.companion) {
            throw KeychainError(status: OSStatusCode.unimplemented, message: "companion devices are not available on Linux")
        }
    }

    private mutating func parseMatchLimit(_ value: KeychainValue, for operation: ItemOperation) throws {
        let parsed = try MatchLimit(value)
        switch operation {
        case .copyMatching:
            limit = parsed
        case .add:
            // Apple's server parses and ignores a limit on add.
            break
        case .delete:
            // Delete removes every match: kSecMatchLimitAll says so (wrapper libraries send it
            // on their macOS code path), a finite limit is errSecMatchLimitUnsupported (= -50).
            guard parsed == .all else { throw KeychainError.param("match limit not supported by delete") }
        case .update:
            throw KeychainError.param("kSecMatchLimit is not supported by update")
        }
    }

    private mutating func parseReturnType(_ key: String, _ value: KeychainValue, for operation: ItemOperation) throws {
        guard operation == .copyMatching || operation == .add else {
            throw KeychainError.param("\(key) is not valid for this operation")
        }
        guard let flag = value.boolValue else {
            throw KeychainError.param("\(key) expects a boolean, not a \(value.typeName)")
        }
        let type: ReturnTypes =
            switch key {
            case QueryKey.returnData: .data
            case QueryKey.returnAttributes: .attributes
            case QueryKey.returnRef: .ref
            default: .persistentRef
            }
        if flag { returnTypes.insert(type) } else { returnTypes.remove(type) }
    }

    private mutating func setAttribute(_ name: String, _ value: KeychainValue, for operation: ItemOperation) throws {
        let descriptor = try Self.descriptor(name, in: itemClass)
        switch descriptor.access {
        case .internal:
            throw KeychainError.param("attribute \(name) is internal to the keychain")
        case .queryOnly where operation == .add:
            throw KeychainError.param("attribute \(name) is set by the keychain")
        default:
            break
        }
        switch name {
        case ItemSchema.Name.accessGroup:
            accessGroup = try Self.accessGroup(from: value)
        case ItemSchema.Name.accessible:
            protection = try Self.protection(from: value)
        case ItemSchema.Name.synchronizable:
            if case .string(QueryKey.synchronizableAny) = value, operation != .add {
                synchronizable = .any
            } else {
                synchronizable = try Self.synchronizable(from: value) ? .yes : .no
            }
        case ItemSchema.Name.tombstone:
            guard let flag = value.boolValue else { throw KeychainError.param("attribute tomb expects a boolean") }
            tombstone = flag
        default:
            attributes[name] = try descriptor.coerce(value)
        }
    }

    /// The catalogue entry for `name` in `itemClass` (for identity: certificate, then key).
    static func descriptor(_ name: String, in itemClass: ItemClass) throws -> AttributeDescriptor {
        let found =
            itemClass == .identity
            ? ItemSchema.identityAttribute(named: name)?.1
            : ItemSchema.of(itemClass).attribute(named: name)
        guard let found else {
            throw KeychainError(status: OSStatusCode.noSuchAttr,
                                message: "attribute \(name) not found in class \(itemClass.rawValue)")
        }
        return found
    }

    static func accessGroup(from value: KeychainValue) throws -> String {
        guard case .string(let group) = value, !group.isEmpty, group.utf8.count <= 512 else {
            throw KeychainError.param("kSecAttrAccessGroup must be a non-empty string")
        }
        return group
    }

    static func protection(from value: KeychainValue) throws -> ProtectionClass {
        guard case .string(let name) = value, let protection = ProtectionClass(rawValue: name) else {
            throw KeychainError.param("kSecAttrAccessible must be one of Apple's kSecAttrAccessible constants")
        }
        return protection
    }

    static func synchronizable(from value: KeychainValue) throws -> Bool {
        guard let flag = value.boolValue else {
            throw KeychainError.param("kSecAttrSynchronizable expects a boolean")
        }
        return flag
    }

    /// The largest secret (`v_Data`) an item may hold, in bytes.
    public static let maximumDataSize = 1 << 20

    static func secret(from value: KeychainValue) throws -> SecretBytes {
        guard case .data(let bytes) = value else {
            throw KeychainError.param("kSecValueData expects data, not a \(value.typeName)")
        }
        guard bytes.count <= maximumDataSize else {
            throw KeychainError(status: OSStatusCode.dataTooLarge, message: "kSecValueData is larger than \(maximumDataSize) bytes")
        }
        return SecretBytes(bytes)
    }
}

extension ItemChanges {
    /// Validates the attributes-to-update dictionary of `SecItemUpdate`.
    ///
    /// - Throws: `errSecParam` for the class, a return, match or use key, an internal
    ///   attribute or a value of the wrong type; `errSecNoSuchAttr` for an attribute the
    ///   class does not have.
    public init(_ dictionary: [String: KeychainValue], for itemClass: ItemClass) throws {
        self.init()
        for key in dictionary.keys.sorted() {
            let value = dictionary[key]!  // key comes from the dictionary
            switch key {
            case QueryKey.useDataProtectionKeychain:
                continue
            case QueryKey.itemClass:
                throw KeychainError.param("kSecClass cannot be changed by an update")
            case QueryKey.valueData:
                data = try ItemQuery.secret(from: value)
            case QueryKey.accessControl:
                accessControl = try ItemQuery.accessControl(from: value)
            default:
                if key.hasPrefix("r_") || key.hasPrefix("m_") || key.hasPrefix("u_") || key.hasPrefix("v_") {
                    throw KeychainError.param("\(key) is not an attribute to update")
                }
                let descriptor = try ItemQuery.descriptor(key, in: itemClass)
                guard descriptor.access == .settable else {
                    throw KeychainError.param("attribute \(key) cannot be changed by an update")
                }
                switch key {
                case ItemSchema.Name.accessGroup: accessGroup = try ItemQuery.accessGroup(from: value)
                case ItemSchema.Name.accessible: protection = try ItemQuery.protection(from: value)
                case ItemSchema.Name.synchronizable: synchronizable = try ItemQuery.synchronizable(from: value)
                default: attributes[key] = try descriptor.coerce(value)
                }
            }
        }
        if let accessControl {
            try ItemQuery.check(accessControl, protection: protection, synchronizable: synchronizable == true)
            protection = accessControl.protection
        }
    }
}

extension ItemQuery.MatchLimit {
    /// A `kSecMatchLimit` value.
    ///
    /// - Throws: `errSecParam` for anything but kSecMatchLimitOne, kSecMatchLimitAll or a
    ///   positive number.
    public init(_ value: KeychainValue) throws {
        switch value {
        case .string(QueryKey.matchLimitOne): self = .one
        case .string(QueryKey.matchLimitAll): self = .all
        case .number(let n) where n > 0: self = n == 1 ? .one : .count(Int(clamping: n))
        default: throw KeychainError.param("kSecMatchLimit must be kSecMatchLimitOne, kSecMatchLimitAll or a positive number")
        }
    }
}
