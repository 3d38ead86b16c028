import KeychainModel
import KeychainStore
import KeychainCallers

extension RequestDispatcher {
    /// What a SecItem request does to items, for deciding how far the caller reaches.
    enum ItemAccess {
        case add(attributes: [String: KeychainValue])
        /// A search; `returnsData` when it reads secrets.
        case search(query: [String: KeychainValue], returnsData: Bool)
        /// An update or delete of the items `query` selects.
        case change(query: [String: KeychainValue])
    }

    /// The groups a SecItem request of `caller` may touch. An application has its
    /// entitled groups. The `security` tool has its own group; it lists every item's
    /// attributes; reading another group's secret or changing another group's item needs
    /// the user's presence (see ``requirePresenceOnceAPasscodeIsSet(_:)``). The local
    /// developer root's key, the trust settings and the profiles' records are beyond
    /// everyone's reach (they change through their own requests). Items a configuration
    /// profile installed are read like any other group's but changed by no one: removing
    /// the profile removes them (errSecWrPerm, naming the profile).
    func reach(of caller: Caller, for access: ItemAccess, presence: Bool) throws -> AccessGroups {
        if SystemKeychainPolicy.readsPublicCertificates(caller, scope: scope), case .search = access {
            // The policy let only certificate searches through: the System keychain's are
            // every user's, whichever group root's program put them in.
            return Self.everything
        }
        guard caller.role.hasSecurityToolReach else { return caller.accessGroups }
        let everything = Self.everything
        switch access {
        case .add(let added):
            guard case .string(let group)? = added["agrp"], group != Caller.securityToolGroup else { return caller.accessGroups }
            if ProfileStore.isProfileGroup(group) { throw Self.profileItem(group) }
            if !presence { try requirePresenceOnceAPasscodeIsSet("adding to another application's group") }
            return everything
        case .search(let query, let returnsData):
            guard returnsData, !presence else { return everything }
            guard try matchesOutsideOwnGroup(query, everything) else { return caller.accessGroups }
            try requirePresenceOnceAPasscodeIsSet("another application's item")
            return everything
        case .change(let query):
            let groups = try matchedGroups(query, everything)
            if let group = groups.first(where: ProfileStore.isProfileGroup) { throw Self.profileItem(group) }
            guard groups.contains(where: { $0 != Caller.securityToolGroup }) else { return caller.accessGroups }
            if !presence { try requirePresenceOnceAPasscodeIsSet("another application's item") }
            return everything
        }
    }

    private static let everything = AccessGroups.securityToolView

    private static func profileItem(_ group: String) -> KeychainError {
        let identifier = group.dropFirst(ProfileStore.itemGroupPrefix.count)
        return KeychainError(
            status: OSStatusCode.wrPerm,
            message: "the item was installed by configuration profile \(identifier); removing the profile removes it (security profiles remove \(identifier))")
    }

    /// Whether the query's selection, over every group, includes another group's item.
    private func matchesOutsideOwnGroup(_ query: [String: KeychainValue], _ everything: AccessGroups) throws -> Bool {
        try matchedGroups(query, everything).contains { $0 != Caller.securityToolGroup }
    }

    /// The groups of the items the query's selection, over every group, includes.
    private func matchedGroups(_ query: [String: KeychainValue], _ everything: AccessGroups) throws -> Set<String> {
        var listing = query.filter { !$0.key.hasPrefix("r_") && $0.key != "m_Limit" }
        listing["r_Attributes"] = .bool(true)
        listing["m_Limit"] = .string("m_LimitAll")
        let found: KeychainValue?
        do {
            found = try store.copyMatching(listing, caller: everything)
        } catch let error as KeychainError where error.status == OSStatusCode.itemNotFound {
            return []
        }
        guard case .array(let items)? = found else { return [] }
        return Set(items.map { item in
            guard case .dictionary(let attributes) = item, case .string(let group)? = attributes["agrp"] else { return "" }
            return group
        })
    }
}
