import KeychainModel

// org.freedesktop.Secret.Item, at a collection's path and the item's id.

extension SecretServiceCore {
    static let itemInterface = BusInterface(
        "org.freedesktop.Secret.Item",
        methods: [
            BusMethod("Delete", out: ["Prompt": "o"]) { try $0.deleteItem($1) },
            BusMethod("GetSecret", in: ["session": "o"], out: ["secret": "(oayays)"], sensitiveReply: true) { try $0.getSecret($1) },
            BusMethod("SetSecret", in: ["secret": "(oayays)"]) { try $0.setSecret($1) },
        ],
        properties: [
            BusProperty(name: "Locked", type: "b"), BusProperty(name: "Attributes", type: "a{ss}", writable: true),
            BusProperty(name: "Label", type: "s", writable: true), BusProperty(name: "Created", type: "t"), BusProperty(name: "Modified", type: "t"),
        ])

    /// The item a call's path names, and its collection.
    private func item(of call: BusInvocation) throws -> (id: String, collection: ScopedCollection) {
        guard case .item(let place, let id) = call.object else { throw BusError.noSuchObject(call.call.path) }
        return (id, try collection(place, try call.caller, path: call.call.path))
    }

    private func getSecret(_ call: BusInvocation) throws -> [BusValue] {
        let (id, collection) = try item(of: call)
        let session = try session(try call.arguments[0].objectPath(), try call.caller)
        let (secret, item) = try secret(id, in: collection)
        return [secretStruct(secret, contentType: item.contentType, session: session)]
    }

    private func setSecret(_ call: BusInvocation) throws -> [BusValue] {
        let caller = try call.caller
        let (id, collection) = try item(of: call)
        let (secret, type) = try secret(from: call.arguments[0], caller)
        try update(id, in: collection, secret: secret, contentType: type)
        emit("ItemChanged", item: collection.itemPath(id), in: collection, scope: caller.scope)
        return []
    }

    private func deleteItem(_ call: BusInvocation) throws -> [BusValue] {
        let caller = try call.caller
        let (id, collection) = try item(of: call)
        try requireUnlocked(collection)
        if collection.isSession {
            try storeCall { try sessionItems.delete(id, of: collection.owner) }
        } else {
            try storeCall { try store.deleteSecretServiceItem(id: id, in: collection.reach) }
        }
        emit("ItemDeleted", item: collection.itemPath(id), in: collection, scope: caller.scope)
        return [.objectPath(SecretObjectPath.noPrompt)]
    }
}
