import KeychainCallers
import KeychainModel

// org.freedesktop.Secret.Service, at /org/freedesktop/secrets.

extension SecretServiceCore {
    static let serviceInterface = BusInterface(
        "org.freedesktop.Secret.Service",
        methods: [
            BusMethod("OpenSession", in: ["algorithm": "s", "input": "v"], out: ["output": "v", "result": "o"]) { try $0.openSession($1) },
            BusMethod("CreateCollection", in: ["properties": "a{sv}", "alias": "s"], out: ["collection": "o", "prompt": "o"]) { try $0.createCollection($1) },
            BusMethod("SearchItems", in: ["attributes": "a{ss}"], out: ["unlocked": "ao", "locked": "ao"]) { core, call in
                let (unlocked, locked) = try core.search(try call.caller, try call.arguments[0].stringDictionary())
                return [.objectPaths(unlocked), .objectPaths(locked)]
            },
            BusMethod("Unlock", in: ["objects": "ao"], out: ["unlocked": "ao", "prompt": "o"]) { try $0.unlock($1) },
            BusMethod("Lock", in: ["objects": "ao"], out: ["locked": "ao", "Prompt": "o"], signalsFirst: true) { try $0.lock($1) },
            BusMethod("GetSecrets", in: ["items": "ao", "session": "o"], out: ["secrets": "a{o(oayays)}"], sensitiveReply: true) { try $0.getSecrets($1) },
            BusMethod("ReadAlias", in: ["name": "s"], out: ["collection": "o"]) { core, call in
                let path = try core.aliases(try call.caller)[try call.arguments[0].string()].map(SecretObjectPath.collectionPath)
                return [.objectPath(path ?? SecretObjectPath.noPrompt)]
            },
            BusMethod("SetAlias", in: ["name": "s", "collection": "o"]) { try $0.setAlias($1) },
        ],
        properties: [BusProperty(name: "Collections", type: "ao")],
        signals: [
            BusSignal("CollectionCreated", ["collection": "o"]), BusSignal("CollectionDeleted", ["collection": "o"]),
            BusSignal("CollectionChanged", ["collection": "o"]),
        ])

    private func openSession(_ call: BusInvocation) throws -> [BusValue] {
        let algorithm = try call.arguments[0].string()
        var input: [UInt8] = []
        switch try call.arguments[1].variantContents() {
        case .bytes(let bytes): input = bytes.withUnsafeBytes { Array($0) }  // a public key
        case .string: break  // what clients send for plain
        default:
            guard algorithm != SecretSession.Algorithm.dhAES.rawValue else {
                throw BusError.invalidArgs("the input of \(algorithm) is the client's public key, an ay")
            }
        }
        let (session, output): (SecretSession, [UInt8])
        do {
            (session, output) = try SecretSession.open(algorithm: algorithm, input: input)
        } catch {
            throw Self.busError(error)
        }
        let id = nextID("s")
        try call.caller.sessions[id] = session
        let sent: BusValue = session.algorithm == .plain ? .string("") : .bytes(SecretBytes(output))
        return [.variant(sent), .objectPath(SecretObjectPath.sessionPath(id))]
    }

    private func createCollection(_ call: BusInvocation) throws -> [BusValue] {
        let caller = try call.caller
        let properties = try call.arguments[0].properties()
        let alias = try call.arguments[1].string()
        let label = try properties.string(Self.collectionInterface.name + ".Label") ?? ""
        guard alias.isEmpty || SecretServiceCollection.isValidName(alias) else {
            throw BusError.invalidArgs("an alias is 1 to 64 letters, digits or _")
        }
        // An alias that names a collection already answers with it (the specification).
        if !alias.isEmpty, let name = try aliases(caller)[alias], let existing = try collections(caller).first(where: { $0.name == name }) {
            return [.objectPath(existing.path), .objectPath(SecretObjectPath.noPrompt)]
        }
        // A scope makes its collections without a prompt: a new collection holds only
        // what its maker stores there, and nothing else can be deleted through it.
        guard try collections(caller).count < Self.collectionLimit else {
            throw BusError.failed("a scope has at most \(Self.collectionLimit) collections; delete one first")
        }
        let created = try storeCall { try store.createSecretServiceCollection(owner: caller.scope, label: label) }
        if !alias.isEmpty {
            try storeCall { try store.setSecretServiceAlias(owner: caller.scope, alias: alias, name: created.name) }
        }
        forgetCollections(of: caller.scope.defaultGroup)
        let path = SecretObjectPath.collectionPath(created.name)
        afterReply { self.announceCollections("CollectionCreated", path, caller) }
        return [.objectPath(path), .objectPath(SecretObjectPath.noPrompt)]
    }

    private func lock(_ call: BusInvocation) throws -> [BusValue] {
        let caller = try call.caller
        var locked: [String] = []
        for path in try call.arguments[0].objectPaths() {
            guard (try? exists(path, caller)) == true, let collection = try? collection(containing: path, caller) else { continue }
            if lockedCollections.insert(lockKey(collection)).inserted {
                announce([("Locked", .bool(true))], of: collection, scope: caller.scope)
            }
            locked.append(path)
        }
        return [.objectPaths(locked), .objectPath(SecretObjectPath.noPrompt)]
    }

    private func unlock(_ call: BusInvocation) throws -> [BusValue] {
        let caller = try call.caller
        let objects = try call.arguments[0].objectPaths()
        let mine = objects.filter { (try? exists($0, caller)) == true }
        // A prompt when the keychain is locked, or any collection asked for is.
        let needsUser = store.secretServiceIsLocked()
            || mine.contains { path in (try? collection(containing: path, caller)).map { isLockedByRequest($0) } ?? false }
        guard !needsUser else { return [.objectPaths([]), .objectPath(newPrompt(.unlock(objects), caller))] }
        // Every object of the caller's that exists is unlocked (python keyring asks for
        // an already unlocked item every time; Chromium needs the collection back).
        return [.objectPaths(mine), .objectPath(SecretObjectPath.noPrompt)]
    }

    private func getSecrets(_ call: BusInvocation) throws -> [BusValue] {
        let caller = try call.caller
        let paths = try call.arguments[0].objectPaths()
        let session = try session(try call.arguments[1].objectPath(), caller)
        var secrets: [BusValue] = []
        for path in paths {
            guard case .item(let place, let id)? = SecretObjectPath(path), let collection = try? collection(place, caller, path: path),
                let (secret, item) = try? secret(id, in: collection)
            else { continue }
            secrets.append(.dictEntry(.objectPath(path), secretStruct(secret, contentType: item.contentType, session: session)))
        }
        return [.array(element: "{o(oayays)}", secrets)]
    }

    private func setAlias(_ call: BusInvocation) throws -> [BusValue] {
        let caller = try call.caller
        let name = try call.arguments[0].string()
        let path = try call.arguments[1].objectPath()
        guard SecretServiceCollection.isValidName(name) else { throw BusError.invalidArgs("an alias is 1 to 64 letters, digits or _") }
        let target: String?
        if path == SecretObjectPath.noPrompt {
            target = nil
        } else {
            guard case .collection(let place)? = SecretObjectPath(path) else { throw BusError.noSuchObject(path) }
            target = try collection(place, caller, path: path).name
        }
        // The session and login collections keep the names they are known by.
        if let fixed = Self.fixedAliases[name] {
            guard target == fixed else { throw BusError.notSupported("the alias \(name) always names the \(fixed) collection") }
            return []
        }
        try storeCall { try store.setSecretServiceAlias(owner: caller.scope, alias: name, name: target) }
        forgetCollections(of: caller.scope.defaultGroup)
        return []
    }

    /// The caller's items matching `attributes` in every collection: those of unlocked
    /// collections, and the paths whose tokens match in locked ones (confirmed once they are
    /// unlocked): (unlocked, locked). The keychain's collections are one statement.
    private func search(_ caller: Connection, _ attributes: [String: String]) throws -> ([String], [String]) {
        let all = try collections(caller)
        let keychainLocked = store.secretServiceIsLocked()
        var unlocked: [String] = []
        var locked: [String] = []
        var byGroup: [String: ScopedCollection] = [:]
        var openReaches: [AccessGroups] = []
        var closedReaches: [AccessGroups] = []
        for collection in all where !collection.isSession {
            for group in collection.groups { byGroup[group] = collection }
            if isLocked(collection, keychainLocked: keychainLocked) { closedReaches.append(collection.reach) } else { openReaches.append(collection.reach) }
        }
        let (openGroups, closedGroups) = (AccessGroups.union(openReaches), AccessGroups.union(closedReaches))
        if !openGroups.groups.isEmpty {
            for item in try storeCall({ try store.secretServiceItems(in: openGroups, matching: attributes) }) {
                if let collection = byGroup[item.accessGroup] { unlocked.append(collection.itemPath(item.id)) }
            }
        }
        if !closedGroups.groups.isEmpty {
            for (id, group) in try storeCall({ try store.secretServiceItemIDs(in: closedGroups, matching: attributes) }) {
                if let collection = byGroup[group] { locked.append(collection.itemPath(id)) }
            }
        }
        if let session = all.first(where: \.isSession) {
            let paths = sessionItems.items(of: session.owner, matching: attributes).map { session.itemPath($0.id) }
            if isLocked(session, keychainLocked: keychainLocked) { locked += paths } else { unlocked += paths }
        }
        return (unlocked, locked)
    }

    /// Whether `path` is an existing collection or item of the caller's.
    func exists(_ path: String, _ caller: Connection) throws -> Bool {
        switch SecretObjectPath(path) {
        case .collection(let place)?: return (try? collection(place, caller, path: path)) != nil
        case .item(let place, let id)?:
            guard let collection = try? collection(place, caller, path: path) else { return false }
            return try itemExists(id, in: collection)
        default: return false
        }
    }
}
