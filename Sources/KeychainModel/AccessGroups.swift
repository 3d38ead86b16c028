/// The access groups a caller may use, in the order of its entitlements:
/// element 0 is the group an add without `agrp` goes to.
public struct AccessGroups: Sendable, Hashable {
    public let groups: [String]

    /// - Precondition: `groups` is not empty; an unsigned caller still has its implicit group.
    public init(_ groups: [String]) {
        precondition(!groups.isEmpty, "a caller always has at least its implicit access group")
        self.groups = groups
    }

    /// The group an add without `kSecAttrAccessGroup` goes to.
    public var defaultGroup: String { groups[0] }

    public func contains(_ group: String) -> Bool { groups.contains(group) }

    /// Checks an explicitly named group.
    ///
    /// - Throws: `errSecMissingEntitlement` when the caller is not entitled to `group`.
    public func authorize(_ group: String) throws {
        guard contains(group) else {
            throw KeychainError(status: OSStatusCode.missingEntitlement,
                                message: "the caller is not entitled to access group \(group)")
        }
    }
}
