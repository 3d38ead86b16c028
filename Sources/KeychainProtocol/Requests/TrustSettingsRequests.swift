public import FoundationEssentials
public import KeychainModel

/// Where trust settings live (`SecTrustSettingsDomain`, Apple's raw values).
public enum TrustSettingsDomain: UInt8, Sendable, Hashable {
    /// The user's, in the keychain's encrypted store.
    case user = 0
    /// The administrator's, for every user of the machine: written by root only.
    case admin = 1
    /// The operating system's CA bundle: read-only, every certificate trusted as a root.
    case system = 2
}

extension TrustSettingsDomain: WireLeaf {
    public init(from reader: inout ByteReader) throws {
        guard let domain = TrustSettingsDomain(rawValue: try reader.byte()) else { throw KeychainError.decode("unknown trust settings domain") }
        self = domain
    }

    public func encode(to writer: inout ByteWriter) { writer.append(rawValue) }
}

/// What a trust setting decides (`SecTrustSettingsResult`, Apple's raw values).
public enum TrustSettingsResult: UInt32, Sendable, Hashable {
    /// An anchor (only for a self-signed certificate).
    case trustRoot = 1
    /// An anchor though it is not self-signed.
    case trustAsRoot = 2
    /// Never trusted, whatever else says so.
    case deny = 3
    /// No decision: evaluation goes on as if there were no setting.
    case unspecified = 4
}

/// One usage constraint of a certificate's trust settings (a dictionary of Apple's array):
/// which policy it is for, with which string (an SSL host name), what it decides.
public struct TrustUsageConstraint: WireLeaf, Sendable, Hashable {
    /// The policy by the name `security add-trusted-cert -p` takes (`ssl`, `basic`,
    /// `codeSign`, …); nil: every policy.
    public var policy: String?
    /// `kSecTrustSettingsPolicyString`: for SSL, the host name it applies to.
    public var policyString: String?
    /// `kSecTrustSettingsAllowedError` (recorded; see docs/ARCHITECTURE.md).
    public var allowedError: Int32?
    /// `kSecTrustSettingsKeyUsage` (recorded).
    public var keyUsage: Int32?
    /// `kSecTrustSettingsApplication`'s path (recorded).
    public var application: String?
    /// `kSecTrustSettingsResult`; absent means trustRoot, as in Apple's dictionaries.
    public var result: TrustSettingsResult?

    public init(
        policy: String? = nil, policyString: String? = nil, allowedError: Int32? = nil, keyUsage: Int32? = nil, application: String? = nil,
        result: TrustSettingsResult? = nil
    ) {
        self.policy = policy
        self.policyString = policyString
        self.allowedError = allowedError
        self.keyUsage = keyUsage
        self.application = application
        self.result = result
    }

    /// The policies `-p` names, with the name `dump-trust-settings` prints for each
    /// (`oidToOidString` of Apple's tool).
    public static let policyNames: [String: String] = [
        "ssl": "SSL", "smime": "SMIME", "codeSign": "Code Signing", "IPSec": "IPSec", "iChat": "iChat", "basic": "Apple X509 Basic",
        "swUpdate": "SW Update Signing", "pkgSign": "Package Signing", "pkinitClient": "PKINIT Client", "pkinitServer": "PKINIT Server",
        "eap": "EAP", "macappstore": "Mac App Store", "appleID": "AppleID Sharing", "timestamping": "Timestamping",
    ]

    public init(from reader: inout ByteReader) throws {
        policy = try reader.byte() == 1 ? try reader.string(limit: 64) : nil
        if let policy, Self.policyNames[policy] == nil { throw KeychainError.decode("unknown trust settings policy") }
        policyString = try reader.byte() == 1 ? try reader.string(limit: 1024) : nil
        allowedError = try reader.byte() == 1 ? Int32(bitPattern: try reader.integer(UInt32.self)) : nil
        keyUsage = try reader.byte() == 1 ? Int32(bitPattern: try reader.integer(UInt32.self)) : nil
        application = try reader.byte() == 1 ? try reader.string(limit: 4096) : nil
        if try reader.byte() == 1 {
            guard let value = TrustSettingsResult(rawValue: try reader.integer(UInt32.self)) else {
                throw KeychainError.decode("unknown trust settings result")
            }
            result = value
        } else {
            result = nil
        }
    }

    public func encode(to writer: inout ByteWriter) {
        writer.appendOptional(policy) { $1.appendLengthPrefixed($0) }
        writer.appendOptional(policyString) { $1.appendLengthPrefixed($0) }
        writer.appendOptional(allowedError) { $1.appendInteger(UInt32(bitPattern: $0)) }
        writer.appendOptional(keyUsage) { $1.appendInteger(UInt32(bitPattern: $0)) }
        writer.appendOptional(application) { $1.appendLengthPrefixed($0) }
        writer.appendOptional(result) { $1.appendInteger($0.rawValue) }
    }
}

/// A certificate's trust settings in one domain: its usage constraints, in order (the
/// first that applies decides); none means trusted as a root for everything.
/// Its codec is also the form a keychain stores (with its parts): frozen, written by
/// hand, never synthesized, so that a keychain written by an earlier version reads.
public struct TrustSettingsRecord: WireLeaf, Sendable, Hashable {
    public var certificate: Data
    public var constraints: [TrustUsageConstraint]

    public init(certificate: Data, constraints: [TrustUsageConstraint]) {
        self.certificate = certificate
        self.constraints = constraints
    }

    public init(from reader: inout ByteReader) throws {
        certificate = try reader.lengthPrefixed(limit: Service.EvaluateTrust.certificateSize)
        let count = Int(try reader.integer(UInt16.self))
        guard count <= 64 else { throw KeychainError.decode("too many usage constraints") }
        constraints = try (0..<count).map { _ in try TrustUsageConstraint(from: &reader) }
    }

    public func encode(to writer: inout ByteWriter) {
        writer.appendLengthPrefixed(certificate)
        writer.appendInteger(UInt16(constraints.count))
        for constraint in constraints { constraint.encode(to: &writer) }
    }

    /// Records one after another (a domain's settings, as stored and sent).
    public static func decodeList(from reader: inout ByteReader) throws -> [TrustSettingsRecord] {
        let count = Int(try reader.integer(UInt32.self))
        guard count <= 100_000 else { throw KeychainError.decode("too many trust settings") }
        return try (0..<count).map { _ in try TrustSettingsRecord(from: &reader) }
    }

    public static func encode(_ records: [TrustSettingsRecord], to writer: inout ByteWriter) {
        writer.appendInteger(UInt32(records.count))
        for record in records { record.encode(to: &writer) }
    }
}

extension Service {
    /// Sets a certificate's trust settings in the user's or the administrator's domain
    /// (`security add-trusted-cert`). Only the security tool, with the user's presence once
    /// a keychain password is set: a trusted root lets its holder impersonate any site to
    /// every program (macOS asks for the user's password here too). The admin domain is
    /// for root only.
    public struct SetTrustSettings: ServiceRequest, Codable {
        public static let authorization = Authorization.securityToolWithPresence(operation: "changing trust settings")

        public var domain: TrustSettingsDomain
        public var record: TrustSettingsRecord

        public init(domain: TrustSettingsDomain, record: TrustSettingsRecord) {
            self.domain = domain
            self.record = record
        }
    }

    /// Removes a certificate's trust settings from a domain (`security remove-trusted-cert`);
    /// errSecItemNotFound when it has none there.
    public struct RemoveTrustSettings: ServiceRequest, Codable {
        public static let authorization = Authorization.securityToolWithPresence(operation: "changing trust settings")

        public var domain: TrustSettingsDomain
        public var certificate: Data

        public init(domain: TrustSettingsDomain, certificate: Data) {
            self.domain = domain
            self.certificate = certificate
        }
    }

    /// A domain's trust settings (`SecTrustSettingsCopyCertificates`, `security
    /// dump-trust-settings`): public information, any caller.
    public struct CopyTrustSettings: ServiceRequest, Codable {
        public typealias Response = TrustSettingsList
        public static let authorization = Authorization.anyCaller

        public var domain: TrustSettingsDomain

        public init(domain: TrustSettingsDomain) {
            self.domain = domain
        }
    }

    /// A domain's records.
    public struct TrustSettingsList: WireLeaf, Sendable {
        public var records: [TrustSettingsRecord]

        public init(records: [TrustSettingsRecord]) { self.records = records }
        public init(from reader: inout ByteReader) throws { records = try TrustSettingsRecord.decodeList(from: &reader) }
        public func encode(to writer: inout ByteWriter) { TrustSettingsRecord.encode(records, to: &writer) }
    }
}
