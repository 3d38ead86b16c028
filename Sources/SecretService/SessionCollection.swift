import FoundationEssentials
import KeychainModel
import KeychainStore

/// The `session` collection (libsecret's `SECRET_COLLECTION_SESSION`): items kept in
/// securityd's memory only, per scope, gone when it stops — as gnome-keyring keeps its own.
/// Their secrets are ``SecretBytes``, zeroed when dropped. Touched only by the bus thread.
final class SessionCollection {
    private struct Entry {
        var item: SecretServiceItem
        var secret: SecretBytes
    }

    /// owner (the scope's default group) → its items, oldest first.
    private var entries: [String: [Entry]] = [:]
    /// Labels set on it, by owner.
    var labels: [String: String] = [:]
    let created = Date()

    /// The access group the items report: a created collection's, named `session`.
    static func group(of owner: String) -> String {
        SecretServiceCollection.itemGroup(owner: owner, name: SecretServiceCollection.session)
    }

    func items(of owner: String, matching attributes: [String: String]) -> [SecretServiceItem] {
        (entries[owner] ?? []).map(\.item).filter { item in attributes.allSatisfy { item.attributes[$0.key] == $0.value } }
    }

    func item(_ id: String, of owner: String) -> SecretServiceItem? {
        entries[owner]?.first { $0.item.id == id }?.item
    }

    func secret(_ id: String, of owner: String) throws -> (SecretBytes, SecretServiceItem) {
        guard let entry = entries[owner]?.first(where: { $0.item.id == id }) else { throw KeychainError.itemNotFound }
        return (entry.secret, entry.item)
    }

    /// `CreateItem`: a new item, or with `replace` the first whose attributes are exactly
    /// `attributes` given this label, secret and content type. Returns it and whether it is new.
    func create(
        of owner: String, label: String, attributes: [String: String], secret: SecretBytes, contentType: String, replace: Bool
    ) throws -> (SecretServiceItem, created: Bool) {
        try KeychainStore.checkSecretServiceAttributes(attributes)
        if replace, let existing = entries[owner]?.first(where: { $0.item.attributes == attributes }) {
            return (try update(existing.item.id, of: owner, label: label, secret: secret, contentType: contentType), false)
        }
        guard (entries[owner]?.count ?? 0) < Self.capacity else {
            throw KeychainError(status: OSStatusCode.allocate, message: "the session collection holds at most \(Self.capacity) items")
        }
        let now = Date()
        let item = SecretServiceItem(
            id: SecretServiceItem.id(of: UUID()), label: label, attributes: attributes, contentType: contentType, created: now,
            modified: now, accessGroup: Self.group(of: owner))
        entries[owner, default: []].append(Entry(item: item, secret: secret))
        return (item, true)
    }

    /// An item in memory cannot be paged out of securityd's limits: a bound on how many one
    /// scope keeps (a careless client's loop ends with an error, not the daemon's memory).
    static let capacity = 10_000

    @discardableResult
    func update(
        _ id: String, of owner: String, label: String? = nil, attributes: [String: String]? = nil, secret: SecretBytes? = nil,
        contentType: String? = nil
    ) throws -> SecretServiceItem {
        if let attributes { try KeychainStore.checkSecretServiceAttributes(attributes) }
        guard let index = entries[owner]?.firstIndex(where: { $0.item.id == id }) else { throw KeychainError.itemNotFound }
        var entry = entries[owner]![index]
        if let label { entry.item.label = label }
        if let attributes { entry.item.attributes = attributes }
        if let contentType { entry.item.contentType = contentType }
        if let secret { entry.secret = secret }
        entry.item.modified = Date()
        entries[owner]![index] = entry
        return entry.item
    }

    func delete(_ id: String, of owner: String) throws {
        guard let index = entries[owner]?.firstIndex(where: { $0.item.id == id }) else { throw KeychainError.itemNotFound }
        entries[owner]!.remove(at: index)
    }

    /// Deletes every item of `owner`'s; returns their ids.
    func deleteAll(of owner: String) -> [String] {
        defer { entries[owner] = nil }
        return (entries[owner] ?? []).map(\.item.id)
    }
}
