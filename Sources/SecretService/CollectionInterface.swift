import KeychainModel

// org.freedesktop.Secret.Collection, at /org/freedesktop/secrets/collection/NAME (or an
// alias's path).

extension SecretServiceCore {
    static let collectionInterface = BusInterface(
        "org.freedesktop.Secret.Collection",
        methods: [
            BusMethod("Delete", out: ["prompt": "o"], signalsFirst: true) { try $0.deleteCollection($1) },
            BusMethod("SearchItems", in: ["attributes": "a{ss}"], out: ["results": "ao"]) { try $0.searchCollection($1) },
            BusMethod("CreateItem", in: ["properties": "a{sv}", "secret": "(oayays)", "replace": "b"], out: ["item": "o", "prompt": "o"]) {
                try $0.createItem($1)
            },
        ],
        properties: [
            BusProperty(name: "Items", type: "ao"), BusProperty(name: "Label", type: "s", writable: true), BusProperty(name: "Locked", type: "b"),
            BusProperty(name: "Created", type: "t"), BusProperty(name: "Modified", type: "t"),
        ],
        signals: [BusSignal("ItemCreated", ["item": "o"]), BusSignal("ItemDeleted", ["item": "o"]), BusSignal("ItemChanged", ["item": "o"])])

    /// The collection a call's path names.
    private func collection(of call: BusInvocation) throws -> ScopedCollection {
        guard case .collection(let place) = call.object else { throw BusError.noSuchObject(call.call.path) }
        return try collection(place, try call.caller, path: call.call.path)
    }

    private func searchCollection(_ call: BusInvocation) throws -> [BusValue] {
        let collection = try collection(of: call)
        let attributes = try call.arguments[0].stringDictionary()
        let ids = isLocked(collection) ? try itemIDs(in: collection, matching: attributes) : try items(in: collection, matching: attributes).map(\.id)
        return [.objectPaths(ids.map { collection.itemPath($0) })]
    }

    private func createItem(_ call: BusInvocation) throws -> [BusValue] {
        let caller = try call.caller
        let collection = try collection(of: call)
        let properties = try call.arguments[0].properties()
        let replace = try call.arguments[2].bool()
        let label = try properties.string(Self.itemInterface.name + ".Label") ?? ""
        var attributes: [String: String] = [:]
        if let given = properties[Self.itemInterface.name + ".Attributes"] {
            guard case .attributes(let dictionary) = given else { throw BusError.invalidArgs("\(Self.itemInterface.name).Attributes is an a{ss}") }
            attributes = dictionary
        }
        let (secret, type) = try secret(from: call.arguments[1], caller)
        try requireUnlocked(collection)
        let (item, isNew): (SecretServiceItem, Bool)
        if collection.isSession {
            (item, isNew) = try storeCall {
                try sessionItems.create(of: collection.owner, label: label, attributes: attributes, secret: secret, contentType: type, replace: replace)
            }
        } else {
            (item, isNew) = try storeCall {
                try store.createSecretServiceItem(in: collection.reach, label: label, attributes: attributes, secret: secret, contentType: type, replace: replace)
            }
        }
        let path = collection.itemPath(item.id)
        emit(isNew ? "ItemCreated" : "ItemChanged", item: path, in: collection, scope: caller.scope)
        return [.objectPath(path), .objectPath(SecretObjectPath.noPrompt)]
    }

    private func deleteCollection(_ call: BusInvocation) throws -> [BusValue] {
        let caller = try call.caller
        let collection = try collection(of: call)
        // The login collection — or whichever the default alias names — holds what every
        // program of the scope stored: only the user deletes it, through a prompt.
        let isDefault = try aliases(caller)["default"] == collection.name
        if collection.isLogin || isDefault {
            return [.objectPath(newPrompt(.delete(collection.name), caller))]
        }
        try deleteCollection(collection, caller)
        return [.objectPath(SecretObjectPath.noPrompt)]
    }

    /// Deletes `collection` and exactly its items: a created collection's access group in one
    /// transaction; the session collection's items in memory; the login collection's items one
    /// by one (each deleted or intact, whenever securityd stops) — it stays, empty.
    func deleteCollection(_ collection: ScopedCollection, _ caller: Connection) throws {
        let owner = collection.owner
        if collection.isLogin {
            try requireUnlocked(collection)
            for (id, _) in try storeCall({ try store.secretServiceItemIDs(in: collection.reach, matching: [:]) }) {
                try storeCall { try store.deleteSecretServiceItem(id: id, in: collection.reach) }
                emit("ItemDeleted", item: collection.itemPath(id), in: collection, scope: caller.scope)
            }
            return
        }
        if collection.isSession {
            for id in sessionItems.deleteAll(of: owner) {
                emit("ItemDeleted", item: collection.itemPath(id), in: collection, scope: caller.scope)
            }
            return
        }
        try storeCall { try store.deleteSecretServiceCollection(owner: caller.scope, name: collection.name) }
        lockedCollections.remove(lockKey(collection))
        forgetCollections(of: owner)
        announceCollections("CollectionDeleted", collection.path, caller)
    }
}
