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
    /// Apple's `SecAccessControlCreateFlags` bits.
    public enum Flag {
        public static let userPresence: UInt64 = 1 << 0
        public static let biometryAny: UInt64 = 1 << 1
        public static let biometryCurrentSet: UInt64 = 1 << 3
        public static let devicePasscode: UInt64 = 1 << 4
        public static let companion: UInt64 = 1 << 5
        public static let or: UInt64 = 1 << 14
        public static let and: UInt64 = 1 << 15
        public static let privateKeyUsage: UInt64 = 1 << 30
        public static let applicationPassword: UInt64 = 1 << 31

        static let known = userPresence | biometryAny | biometryCurrentSet | devicePasscode | companion | or | and
            | privateKeyUsage | applicationPassword
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
    public let flags: UInt64
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
    public init(protection: ProtectionClass, flags: UInt64) throws {
        guard flags & ~Flag.known == 0 else {
            throw KeychainError.param("SecAccessControl: unknown flags \(flags & ~Flag.known)")
        }
        if flags & Flag.or != 0, flags & Flag.and != 0 {
            throw KeychainError.param("only one logical operation can be set")
        }
        if flags & Flag.biometryAny != 0, flags & Flag.biometryCurrentSet != 0 {
            throw KeychainError.param("only one bio constraint can be set")
        }
        if flags & Flag.userPresence != 0,
            flags & ~(Flag.userPresence | Flag.applicationPassword | Flag.privateKeyUsage) != 0
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
        if flags & Flag.userPresence != 0 { return [.passcode, .biometryAny] }
        var factors: [Factor] = []
        if flags & Flag.devicePasscode != 0 { factors.append(.passcode) }
        if flags & Flag.biometryAny != 0 { factors.append(.biometryAny) }
        if flags & Flag.biometryCurrentSet != 0 { factors.append(.biometryCurrentSet) }
        if flags & Flag.companion != 0 { factors.append(.companion) }
        return factors
    }

    /// How many of ``factors`` must be shown: one for userPresence and `.or`, all otherwise
    /// (Apple's k-of-n constraint).
    public var requiredFactors: Int {
        let count = factors.count
        return flags & (Flag.userPresence | Flag.or) != 0 ? min(1, count) : count
    }

    /// Whether the secret is released only with an application password.
    public var requiresApplicationPassword: Bool { flags & Flag.applicationPassword != 0 }

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
        out.appendInteger(flags)
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
        let flags = try reader.integer(UInt64.self)
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
