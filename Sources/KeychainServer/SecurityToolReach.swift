import KeychainModel
import KeychainStore

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
    /// developer root's key and the trust settings are beyond everyone's reach (trust
    /// settings change through their own requests).
    func reach(of caller: Caller, for access: ItemAccess, presence: Bool) throws -> AccessGroups {
        if SystemKeychainPolicy.readsPublicCertificates(caller, scope: scope), case .search = access {
            // The policy let only certificate searches through: the System keychain's are
            // every user's, whichever group root's program put them in.
            return AccessGroups.every(own: Caller.securityToolGroup, except: [LocalDeveloperRoot.accessGroup, TrustSettingsStore.accessGroup])
        }
        guard caller.role == .securityTool else { return caller.accessGroups }
        let everything = AccessGroups.every(own: Caller.securityToolGroup, except: [LocalDeveloperRoot.accessGroup, TrustSettingsStore.accessGroup])
        if presence { return everything }
        let query: [String: KeychainValue]
        switch access {
        case .add(let added):
            guard case .string(let group)? = added["agrp"], group != Caller.securityToolGroup else { return caller.accessGroups }
            try requirePresenceOnceAPasscodeIsSet("adding to another application's group")
            return everything
        case .search(let searched, let returnsData):
            guard returnsData else { return everything }
            query = searched
        case .change(let searched):
            query = searched
        }
        guard try matchesOutsideOwnGroup(query, everything) else { return caller.accessGroups }
        try requirePresenceOnceAPasscodeIsSet("another application's item")
        return everything
    }

    /// Whether the query's selection, over every group, includes another group's item.
    private func matchesOutsideOwnGroup(_ query: [String: KeychainValue], _ everything: AccessGroups) throws -> Bool {
        var listing = query.filter { !$0.key.hasPrefix("r_") && $0.key != "m_Limit" }
        listing["r_Attributes"] = .bool(true)
        listing["m_Limit"] = .string("m_LimitAll")
        let found: KeychainValue?
        do {
            found = try store.copyMatching(listing, caller: everything)
        } catch let error as KeychainError where error.status == OSStatusCode.itemNotFound {
            return false
        }
        guard case .array(let items)? = found else { return false }
        return items.contains { item in
            guard case .dictionary(let attributes) = item else { return true }
            return attributes["agrp"] != .string(Caller.securityToolGroup)
        }
    }
}
