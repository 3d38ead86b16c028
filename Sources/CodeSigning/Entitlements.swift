public import FoundationEssentials
import KeychainModel

/// The entitlements a signature grants an executable: the three that decide its keychain
/// access groups. Other keys of an entitlements file are not signed and grant nothing.
public struct Entitlements: Sendable, Hashable {
    /// `application-identifier`: "TEAMID.bundle.id".
    public var applicationIdentifier: String?
    /// `keychain-access-groups`, in order: element 0 is where adds go by default.
    public var keychainAccessGroups: [String]
    /// `com.apple.security.application-groups`: groups shared across a team's apps.
    public var applicationGroups: [String]

    public static let applicationIdentifierKey = "application-identifier"
    public static let keychainAccessGroupsKey = "keychain-access-groups"
    public static let applicationGroupsKey = "com.apple.security.application-groups"

    public init(applicationIdentifier: String? = nil, keychainAccessGroups: [String] = [], applicationGroups: [String] = []) {
        self.applicationIdentifier = applicationIdentifier
        self.keychainAccessGroups = keychainAccessGroups
        self.applicationGroups = applicationGroups
    }

    /// The caller's access groups in iOS order: keychain-access-groups, then
    /// application-identifier, then application groups, without repeats.
    public var accessGroups: [String] {
        var seen = Set<String>()
        return (keychainAccessGroups + (applicationIdentifier.map { [$0] } ?? []) + applicationGroups)
            .filter { seen.insert($0).inserted }
    }

    /// Why a team may not claim these entitlements, or nil when it may: every group must be
    /// in the team's namespace, except application groups its certificate lists.
    public func violation(team: TeamIdentifier, registeredApplicationGroups: [String]) -> String? {
        if let identifier = applicationIdentifier, !team.owns(identifier) {
            return "application-identifier \(identifier) is not in team \(team)'s namespace"
        }
        if let group = keychainAccessGroups.first(where: { !team.owns($0) }) {
            return "keychain access group \(group) is not in team \(team)'s namespace"
        }
        if let group = applicationGroups.first(where: { !team.owns($0) && !registeredApplicationGroups.contains($0) }) {
            return "application group \(group) is neither in team \(team)'s namespace nor registered to it by its root"
        }
        return nil
    }

    // MARK: - Files

    /// Reads an entitlements file: an XML property list or a JSON object.
    ///
    /// Binary property lists are refused: Foundation's binary reader traps on some malformed
    /// ones (the `profile` fuzzer's `string-length-past-the-end`), and CoreFoundation's parser,
    /// which securityd reads profiles with, would link libFoundation into the `security` tool
    /// for every command. `plutil -convert xml1` makes the XML form.
    ///
    /// - Throws: `errSecParam` for anything else, or a value of the wrong type.
    public init(file contents: Data) throws {
        guard !contents.starts(with: Array("bplist".utf8)) else {
            throw KeychainError(
                status: OSStatusCode.param,
                message: "the entitlements are a binary property list; give them as XML (plutil -convert xml1) or JSON")
        }
        let decoded: Document
        do {
            let first = contents.first(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) })
            if first == UInt8(ascii: "{") {
                decoded = try JSONDecoder().decode(Document.self, from: contents)
            } else {
                decoded = try PropertyListDecoder().decode(Document.self, from: contents)
            }
        } catch {
            throw KeychainError(status: OSStatusCode.param, message: "the entitlements are not a property list or JSON object of strings and string arrays: \(error)")
        }
        self.init(
            applicationIdentifier: decoded.applicationIdentifier,
            keychainAccessGroups: decoded.keychainAccessGroups ?? [],
            applicationGroups: decoded.applicationGroups ?? [])
    }

    private struct Document: Decodable {
        var applicationIdentifier: String?
        var keychainAccessGroups: [String]?
        var applicationGroups: [String]?

        enum CodingKeys: String, CodingKey {
            case applicationIdentifier = "application-identifier"
            case keychainAccessGroups = "keychain-access-groups"
            case applicationGroups = "com.apple.security.application-groups"
        }
    }

    // MARK: - Signed form

    /// The form inside a signature: a KeychainValue dictionary of the keys present.
    public var encoded: Data {
        var dictionary: [String: KeychainValue] = [
            Self.keychainAccessGroupsKey: .array(keychainAccessGroups.map { .string($0) }),
            Self.applicationGroupsKey: .array(applicationGroups.map { .string($0) }),
        ]
        if let applicationIdentifier { dictionary[Self.applicationIdentifierKey] = .string(applicationIdentifier) }
        var out = Data()
        KeychainValue.dictionary(dictionary).encode(to: &out)
        return out
    }

    /// - Throws: `errSecDecode` when `data` is not the signed form.
    public init(encoded data: Data) throws {
        var reader = ByteReader(data)
        guard case .dictionary(let dictionary) = try KeychainValue.decode(from: &reader), reader.isAtEnd else {
            throw KeychainError.decode("entitlements are not a dictionary")
        }
        func strings(_ key: String) throws -> [String] {
            guard case .array(let values)? = dictionary[key] else { throw KeychainError.decode("entitlement \(key) missing") }
            return try values.map {
                guard case .string(let string) = $0 else { throw KeychainError.decode("entitlement \(key) holds a non-string") }
                return string
            }
        }
        var identifier: String?
        if let value = dictionary[Self.applicationIdentifierKey] {
            guard case .string(let string) = value else { throw KeychainError.decode("application-identifier is not a string") }
            identifier = string
        }
        self.init(
            applicationIdentifier: identifier, keychainAccessGroups: try strings(Self.keychainAccessGroupsKey),
            applicationGroups: try strings(Self.applicationGroupsKey))
    }
}
