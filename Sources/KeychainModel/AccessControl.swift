public import FoundationEssentials

/// An item's access control (`kSecAttrAccessControl`): its protection class and what must
/// happen before its secret is released — Apple's `SecAccessControlCreateFlags`, validated
/// by Apple's rules, plus what the enclave binds when the item is stored (the biometric
/// enrollment for `biometryCurrentSet`, the salt of an application password).
///
/// Encoded (``encoded``) it travels in queries as `accc` and is stored in clear in the
/// item's secret blob; the enclave authenticates those bytes with the item key's wrapping,
/// so an edited access control makes the item undecodable, never unprotected.
public struct AccessControl: Sendable, Hashable {
    /// Apple's `SecAccessControlCreateFlags`, with Apple's bit values.
    public struct Flags: OptionSet, Sendable, Hashable {
        public let rawValue: UInt64

        public init(rawValue: UInt64) {
            self.rawValue = rawValue
        }

        public static let userPresence = Flags(rawValue: 1 << 0)
        public static let biometryAny = Flags(rawValue: 1 << 1)
        public static let biometryCurrentSet = Flags(rawValue: 1 << 3)
        public static let devicePasscode = Flags(rawValue: 1 << 4)
        public static let companion = Flags(rawValue: 1 << 5)
        public static let or = Flags(rawValue: 1 << 14)
        public static let and = Flags(rawValue: 1 << 15)
        public static let privateKeyUsage = Flags(rawValue: 1 << 30)
        public static let applicationPassword = Flags(rawValue: 1 << 31)

        static let known: Flags = [
            .userPresence, .biometryAny, .biometryCurrentSet, .devicePasscode, .companion, .or, .and, .privateKeyUsage,
            .applicationPassword,
        ]
    }

    /// A way for the user to show presence, checked by the enclave.
    public enum Factor: String, Sendable, Hashable, CaseIterable {
        /// The keychain passcode.
        case passcode
        /// A finger (or face) enrolled now.
        case biometryAny
        /// A finger enrolled when the item was stored, with no enrollment changed since.
        case biometryCurrentSet
        /// A paired companion device: not available on Linux.
        case companion
    }

    public let protection: ProtectionClass
    public let flags: Flags
    /// The enclave's digest of the biometric enrollment when the item was stored
    /// (`biometryCurrentSet` only); empty until the enclave binds it.
    public var enrollment: Data
    /// The salt of the application password's key (`applicationPassword` only); empty until bound.
    public var passwordSalt: Data

    /// Validates `flags` as `SecAccessControlCreateWithFlags` does.
    ///
    /// - Throws: `errSecParam` with Apple's message for unknown flags, `.or` with `.and`, both
    ///   biometry flags, or `.userPresence` with a constraint other than
    ///   `.applicationPassword` and `.privateKeyUsage`.
    public init(protection: ProtectionClass, flags: Flags) throws {
        guard flags.isSubset(of: Flags.known) else {
            throw KeychainError.param("SecAccessControl: unknown flags \(flags.subtracting(Flags.known).rawValue)")
        }
        if flags.isSuperset(of: [.or, .and]) {
            throw KeychainError.param("only one logical operation can be set")
        }
        if flags.isSuperset(of: [.biometryAny, .biometryCurrentSet]) {
            throw KeychainError.param("only one bio constraint can be set")
        }
        if flags.contains(.userPresence),
            !flags.isSubset(of: [.userPresence, .applicationPassword, .privateKeyUsage])
        {
            throw KeychainError.param(
                "kSecAccessControlUserPresence can be combined only with kSecAccessControlApplicationPassword and kSecAccessControlPrivateKeyUsage")
        }
        self.protection = protection
        self.flags = flags
        enrollment = Data()
        passwordSalt = Data()
    }

    /// The factors of the constraint: userPresence is passcode or biometry.
    public var factors: [Factor] {
        if flags.contains(.userPresence) { return [.passcode, .biometryAny] }
        var factors: [Factor] = []
        if flags.contains(.devicePasscode) { factors.append(.passcode) }
        if flags.contains(.biometryAny) { factors.append(.biometryAny) }
        if flags.contains(.biometryCurrentSet) { factors.append(.biometryCurrentSet) }
        if flags.contains(.companion) { factors.append(.companion) }
        return factors
    }

    /// How many of ``factors`` must be shown: one for userPresence and `.or`, all otherwise
    /// (Apple's k-of-n constraint).
    public var requiredFactors: Int {
        let count = factors.count
        return flags.isDisjoint(with: [.userPresence, .or]) ? count : min(1, count)
    }

    /// Whether the secret is released only with an application password.
    public var requiresApplicationPassword: Bool { flags.contains(.applicationPassword) }

    /// Whether reading the secret needs anything beyond the protection class.
    public var requiresAuthentication: Bool { !factors.isEmpty || requiresApplicationPassword }

    /// Whether the factors `shown` satisfy the constraint.
    public func isSatisfied(by shown: Set<Factor>) -> Bool {
        factors.filter { shown.contains($0) }.count >= requiredFactors
    }

    /// Whether the constraint can still be met once `biometryCurrentSet` never can (the
    /// enrollment changed).
    public var survivesEnrollmentChange: Bool {
        var others = Set(factors)
        others.remove(.biometryCurrentSet)
        return isSatisfied(by: others)
    }

    // MARK: - Encoding

    static let encodingVersion: UInt8 = 1
    /// The longest encoding accepted (two 32-byte fields and the header, with room).
    public static let maximumEncodedSize = 256

    /// `version(1) || flags(u64) || protection || enrollment || passwordSalt`, each
    /// variable field length-prefixed.
    public var encoded: Data {
        var out = Data([Self.encodingVersion])
        out.appendInteger(flags.rawValue)
        out.appendLengthPrefixed(Data(protection.rawValue.utf8))
        out.appendLengthPrefixed(enrollment)
        out.appendLengthPrefixed(passwordSalt)
        return out
    }

    /// Parses and validates an encoded access control.
    ///
    /// - Throws: `errSecParam` for flags Apple refuses, `errSecDecode` for malformed bytes.
    public init(encoded data: Data) throws {
        guard data.count <= Self.maximumEncodedSize else { throw KeychainError.decode("the access control is too long") }
        var reader = ByteReader(data)
        guard try reader.byte() == Self.encodingVersion else { throw KeychainError.decode("unknown access control version") }
        let flags = Flags(rawValue: try reader.integer(UInt64.self))
        let name = String(decoding: try reader.lengthPrefixed(limit: 8), as: UTF8.self)
        guard let protection = ProtectionClass(rawValue: name) else {
            throw KeychainError.param("SecAccessControl: invalid protection: \(name)")
        }
        try self.init(protection: protection, flags: flags)
        enrollment = try reader.lengthPrefixed(limit: 64)
        passwordSalt = try reader.lengthPrefixed(limit: 64)
        guard reader.isAtEnd else { throw KeychainError.decode("trailing bytes in the access control") }
    }
}
