public import FoundationEssentials
public import KeychainModel

extension Service {
    /// `SecItemAdd`: the item's attributes and value; the result is what its `r_…` keys ask for.
    public struct Add: ServiceRequest, Codable {
        public typealias Response = KeychainValue?
        public static let authorization = Authorization.anyCaller
        public var attributes: [String: KeychainValue]

        public init(_ attributes: [String: KeychainValue]) { self.attributes = attributes }
        public func inContext(_ context: Data) -> Self { Self(attributes.inContext(context)) }
        public var operationPrompt: String? { attributes[QueryKey.operationPrompt]?.stringValue }
    }

    /// `SecItemCopyMatching`: data, attributes or references of the matching items.
    public struct CopyMatching: ServiceRequest, Codable {
        public typealias Response = KeychainValue?
        public static let authorization = Authorization.anyCaller
        public var query: [String: KeychainValue]

        public init(_ query: [String: KeychainValue]) { self.query = query }
        public func inContext(_ context: Data) -> Self { Self(query.inContext(context)) }
        public var operationPrompt: String? { query[QueryKey.operationPrompt]?.stringValue }
    }

    /// `SecItemUpdate`: changes every matching item.
    public struct Update: ServiceRequest, Codable {
        public static let authorization = Authorization.anyCaller
        public var query: [String: KeychainValue]
        public var attributes: [String: KeychainValue]

        public init(_ query: [String: KeychainValue], attributes: [String: KeychainValue]) {
            self.query = query
            self.attributes = attributes
        }

        public func inContext(_ context: Data) -> Self { Self(query.inContext(context), attributes: attributes) }
        public var operationPrompt: String? { query[QueryKey.operationPrompt]?.stringValue }
    }

    /// `SecItemDelete`: deletes every matching item.
    public struct Delete: ServiceRequest, Codable {
        public static let authorization = Authorization.anyCaller
        public var query: [String: KeychainValue]

        public init(_ query: [String: KeychainValue]) { self.query = query }
    }
}

extension Dictionary where Key == String, Value == KeychainValue {
    /// The query with `kSecUseAuthenticationContext` set to `context` where it has none.
    func inContext(_ context: Data) -> Self {
        var query = self
        if query[QueryKey.authenticationContext] == nil { query[QueryKey.authenticationContext] = .data(context) }
        return query
    }
}
