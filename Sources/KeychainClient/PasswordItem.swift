public import KeychainModel

/// A kind of keychain item named by its primary key: ``GenericPassword`` or
/// ``InternetPassword``.
public protocol PasswordItem: Hashable, Sendable {
    /// The item class (`kSecClass`) of this kind.
    static var itemClass: ItemClass { get }
    /// The attributes that name the item, by Apple's four-letter names.
    var namingAttributes: [String: KeychainValue] { get }
    /// The item named in a result's attributes, or nil when they name none of this kind.
    init?(attributes: [String: KeychainValue])
}

/// A generic password (`kSecClassGenericPassword`): a secret an application keeps for an
/// account of a service.
public struct GenericPassword: PasswordItem {
    public static let itemClass = ItemClass.genericPassword
    /// `kSecAttrService`.
    public var service: String
    /// `kSecAttrAccount`.
    public var account: String

    public init(service: String, account: String) {
        self.service = service
        self.account = account
    }

    public var namingAttributes: [String: KeychainValue] {
        ["svce": .string(service), "acct": .string(account)]
    }

    public init?(attributes: [String: KeychainValue]) {
        self.init(service: attributes["svce"]?.stringValue ?? "", account: attributes["acct"]?.stringValue ?? "")
    }
}

/// An internet password (`kSecClassInternetPassword`): an account's password on a server.
/// Unset parts match any value in a search and are stored empty.
public struct InternetPassword: PasswordItem {
    public static let itemClass = ItemClass.internetPassword
    /// `kSecAttrServer`.
    public var server: String
    /// `kSecAttrAccount`.
    public var account: String
    /// `kSecAttrProtocol`.
    public var `protocol`: InternetProtocol?
    /// `kSecAttrPort`.
    public var port: Int?
    /// `kSecAttrPath`.
    public var path: String?
    /// `kSecAttrAuthenticationType`.
    public var authenticationType: AuthenticationType?
    /// `kSecAttrSecurityDomain`.
    public var securityDomain: String?

    public init(
        server: String, account: String, protocol: InternetProtocol? = nil, port: Int? = nil, path: String? = nil,
        authenticationType: AuthenticationType? = nil, securityDomain: String? = nil
    ) {
        self.server = server
        self.account = account
        self.protocol = `protocol`
        self.port = port
        self.path = path
        self.authenticationType = authenticationType
        self.securityDomain = securityDomain
    }

    public var namingAttributes: [String: KeychainValue] {
        var attributes: [String: KeychainValue] = ["srvr": .string(server), "acct": .string(account)]
        attributes["ptcl"] = self.protocol.map { .string($0.rawValue) }
        attributes["port"] = port.map { .number(Int64($0)) }
        attributes["path"] = path.map { .string($0) }
        attributes["atyp"] = authenticationType.map { .string($0.rawValue) }
        attributes["sdmn"] = securityDomain.map { .string($0) }
        return attributes
    }

    public init?(attributes: [String: KeychainValue]) {
        guard let server = attributes["srvr"]?.stringValue else { return nil }
        self.init(
            server: server, account: attributes["acct"]?.stringValue ?? "",
            protocol: attributes["ptcl"]?.stringValue.map(InternetProtocol.init(rawValue:)),
            port: attributes["port"]?.numberValue.map { Int($0) },
            path: attributes["path"]?.stringValue,
            authenticationType: attributes["atyp"]?.stringValue.map(AuthenticationType.init(rawValue:)),
            securityDomain: attributes["sdmn"]?.stringValue)
    }
}

/// `kSecAttrProtocol`: Apple's four-character protocol codes.
public struct InternetProtocol: RawRepresentable, Hashable, Sendable {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let http = InternetProtocol(rawValue: "http")
    public static let https = InternetProtocol(rawValue: "htps")
    public static let ftp = InternetProtocol(rawValue: "ftp ")
    public static let ftps = InternetProtocol(rawValue: "ftps")
    public static let ssh = InternetProtocol(rawValue: "ssh ")
    public static let imap = InternetProtocol(rawValue: "imap")
    public static let imaps = InternetProtocol(rawValue: "imps")
    public static let smtp = InternetProtocol(rawValue: "smtp")
    public static let pop3 = InternetProtocol(rawValue: "pop3")
    public static let ldap = InternetProtocol(rawValue: "ldap")
    public static let socks = InternetProtocol(rawValue: "sox ")
}

/// `kSecAttrAuthenticationType`: Apple's four-character authentication-type codes.
public struct AuthenticationType: RawRepresentable, Hashable, Sendable {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let `default` = AuthenticationType(rawValue: "dflt")
    public static let htmlForm = AuthenticationType(rawValue: "form")
    public static let httpBasic = AuthenticationType(rawValue: "http")
    public static let httpDigest = AuthenticationType(rawValue: "httd")
    public static let ntlm = AuthenticationType(rawValue: "ntlm")
}
