public import FoundationEssentials
public import KeychainModel

// Configuration profiles (`security profiles …`): installed, listed and removed by the
// security tool only, installing and removing with the user's presence once a passcode is
// set. securityd reads the profile itself (its signature, its payloads), so what is
// installed is what the file says (docs/ARCHITECTURE.md, "Configuration profiles").

extension Service {
    /// Installs a profile file (a property list, or one signed with CMS); one with the
    /// identifier of an installed profile replaces it.
    public struct InstallProfile: ServiceRequest, Codable {
        public typealias Response = ProfileRecord
        public static let authorization = Authorization.securityToolWithPresence(operation: "installing a configuration profile")
        public var file: Data

        public init(file: Data) {
            self.file = file
        }
    }

    /// Removes an installed profile and exactly the items it installed.
    public struct RemoveProfile: ServiceRequest, Codable {
        public static let authorization = Authorization.securityToolWithPresence(operation: "removing a configuration profile")
        public var identifier: String

        public init(identifier: String) {
            self.identifier = identifier
        }
    }

    /// The installed profiles, in the order of their identifiers.
    public struct CopyProfiles: ServiceRequest, Codable {
        public typealias Response = ProfileList
        public static let authorization = Authorization.securityTool(operation: "listing configuration profiles")

        public init() {}
    }

    public struct ProfileList: WireCodable, Sendable, Codable {
        public var profiles: [ProfileRecord]

        public init(profiles: [ProfileRecord]) {
            self.profiles = profiles
        }
    }
}

/// How a profile's signature was judged when it was installed.
public enum ProfileVerification: UInt8, Sendable, Hashable {
    /// Not signed.
    case unsigned = 0
    /// Signed, and the signer's chain is trusted (System Roots, trust settings).
    case verified = 1
    /// Signed, the signature verifies, but the signer is not trusted.
    case unverified = 2
}

/// An installed profile as securityd keeps and shows it: its identity, how it was verified,
/// when it was installed, and what each payload installed.
/// Its codec is also the form a keychain stores (with its parts): frozen, written by
/// hand, never synthesized, so that a keychain written by an earlier version reads.
public struct ProfileRecord: WireLeaf, Sendable, Hashable {
    static let identifierLimit = 255
    static let textLimit = 4096

    public var identifier: String
    public var uuid: String
    public var displayName: String?
    public var description: String?
    public var organization: String?
    public var version: Int64
    public var removalDisallowed: Bool
    public var verification: ProfileVerification
    /// The signer's subject summary, when signed.
    public var signer: String?
    public var encrypted: Bool
    public var installationDate: Date
    public var payloads: [ProfilePayloadRecord]

    public init(
        identifier: String, uuid: String, displayName: String?, description: String?, organization: String?, version: Int64,
        removalDisallowed: Bool, verification: ProfileVerification, signer: String?, encrypted: Bool, installationDate: Date,
        payloads: [ProfilePayloadRecord]
    ) {
        self.identifier = identifier
        self.uuid = uuid
        self.displayName = displayName
        self.description = description
        self.organization = organization
        self.version = version
        self.removalDisallowed = removalDisallowed
        self.verification = verification
        self.signer = signer
        self.encrypted = encrypted
        self.installationDate = installationDate
        self.payloads = payloads
    }

    public init(from reader: inout ByteReader) throws {
        identifier = try reader.string(limit: Self.identifierLimit)
        uuid = try reader.string(limit: Self.textLimit)
        displayName = try reader.byte() == 1 ? try reader.string(limit: Self.textLimit) : nil
        description = try reader.byte() == 1 ? try reader.string(limit: Self.textLimit) : nil
        organization = try reader.byte() == 1 ? try reader.string(limit: Self.textLimit) : nil
        version = Int64(bitPattern: try reader.integer(UInt64.self))
        removalDisallowed = try reader.byte() == 1
        guard let verification = ProfileVerification(rawValue: try reader.byte()) else { throw KeychainError.decode("unknown profile verification") }
        self.verification = verification
        signer = try reader.byte() == 1 ? try reader.string(limit: Self.textLimit) : nil
        encrypted = try reader.byte() == 1
        installationDate = Date(timeIntervalSince1970: TimeInterval(Int64(bitPattern: try reader.integer(UInt64.self))))
        let count = Int(try reader.integer(UInt16.self))
        payloads = try (0..<count).map { _ in try ProfilePayloadRecord(from: &reader) }
    }

    public func encode(to writer: inout ByteWriter) {
        writer.appendLengthPrefixed(identifier)
        writer.appendLengthPrefixed(uuid)
        writer.appendOptional(displayName) { $1.appendLengthPrefixed($0) }
        writer.appendOptional(description) { $1.appendLengthPrefixed($0) }
        writer.appendOptional(organization) { $1.appendLengthPrefixed($0) }
        writer.appendInteger(UInt64(bitPattern: version))
        writer.append(removalDisallowed ? 1 : 0)
        writer.append(verification.rawValue)
        writer.appendOptional(signer) { $1.appendLengthPrefixed($0) }
        writer.append(encrypted ? 1 : 0)
        writer.appendInteger(UInt64(bitPattern: Int64(installationDate.timeIntervalSince1970.rounded(.down))))
        writer.appendInteger(UInt16(payloads.count))
        for payload in payloads { payload.encode(to: &writer) }
    }
}

/// One payload of an installed profile: what it is and how many keychain items it installed;
/// `supported` false for a payload type Trousseau does not carry out (skipped, and said so).
public struct ProfilePayloadRecord: WireLeaf, Sendable, Hashable {
    public var type: String
    public var identifier: String
    public var uuid: String
    public var displayName: String?
    public var supported: Bool
    public var items: Int

    public init(type: String, identifier: String, uuid: String, displayName: String?, supported: Bool, items: Int) {
        self.type = type
        self.identifier = identifier
        self.uuid = uuid
        self.displayName = displayName
        self.supported = supported
        self.items = items
    }

    public init(from reader: inout ByteReader) throws {
        type = try reader.string(limit: ProfileRecord.textLimit)
        identifier = try reader.string(limit: ProfileRecord.textLimit)
        uuid = try reader.string(limit: ProfileRecord.textLimit)
        displayName = try reader.byte() == 1 ? try reader.string(limit: ProfileRecord.textLimit) : nil
        supported = try reader.byte() == 1
        items = Int(try reader.integer(UInt32.self))
    }

    public func encode(to writer: inout ByteWriter) {
        writer.appendLengthPrefixed(type)
        writer.appendLengthPrefixed(identifier)
        writer.appendLengthPrefixed(uuid)
        writer.appendOptional(displayName) { $1.appendLengthPrefixed($0) }
        writer.append(supported ? 1 : 0)
        writer.appendInteger(UInt32(clamping: items))
    }
}
