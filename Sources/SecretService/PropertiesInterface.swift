import FoundationEssentials
import KeychainModel

// org.freedesktop.DBus.Properties on every object: the values each interface's table
// declares, as the caller sees them.

extension SecretServiceCore {
    static let propertiesInterface = BusInterface(
        "org.freedesktop.DBus.Properties",
        methods: [
            BusMethod("Get", in: ["interface": "s", "property": "s"], out: ["value": "v"]) { core, call in
                let name = try call.arguments[1].string()
                let values = try core.propertyValues(call.object, interface: try call.arguments[0].string(), call.connection, only: name)
                guard let value = values.first(where: { $0.0 == name })?.1 else { throw BusError.unknownProperty(name) }
                return [.variant(value)]
            },
            BusMethod("GetAll", in: ["interface": "s"], out: ["properties": "a{sv}"]) { core, call in
                [.properties(try core.propertyValues(call.object, interface: try call.arguments[0].string(), call.connection))]
            },
            BusMethod("Set", in: ["interface": "s", "property": "s", "value": "v"], signalsFirst: true) { try $0.setProperty($1) },
        ],
        signals: [BusSignal("PropertiesChanged", ["interface": "s", "changed_properties": "a{sv}", "invalidated_properties": "as"])])

    /// The properties of `interface` at `object`; with `only`, at least that one if it
    /// exists — a collection's `Label`, `Locked` or `Created` then without listing its items,
    /// which reads every item's metadata (python's keyring asks for `Locked` before every
    /// call: it must not cost the collection's size).
    private func propertyValues(
        _ object: SecretObjectPath, interface: String, _ connection: Connection?, only name: String? = nil
    ) throws -> [(String, BusValue)] {
        if case .portal = object, [SecretPortal.interface.name, ""].contains(interface) { return SecretPortal.properties }
        guard let caller = connection else { throw BusError.invalidArgs("No interface \(interface) here") }
        switch (object, interface) {
        case (.service, Self.serviceInterface.name), (.service, ""):
            return [("Collections", .objectPaths(try collections(caller).map(\.path)))]
        case (.collection(let place), Self.collectionInterface.name), (.collection(let place), ""):
            let collection = try collection(place, caller, path: "")
            let locked = isLocked(collection)
            if let name, name != "Items", name != "Modified" {
                return [("Label", .string(collection.label)), ("Locked", .bool(locked)), ("Created", .uint64(Self.seconds(collection.created)))]
            }
            let all = locked ? [] : try items(in: collection, matching: [:])
            let modified = ([collection.modified] + all.map(\.modified)).map(Self.seconds).max() ?? 0
            let ids = locked ? try itemIDs(in: collection, matching: [:]) : all.map(\.id)
            return [
                ("Items", .objectPaths(ids.map { collection.itemPath($0) })), ("Label", .string(collection.label)), ("Locked", .bool(locked)),
                ("Created", .uint64(Self.seconds(collection.created))), ("Modified", .uint64(modified)),
            ]
        case (.item(let place, let id), Self.itemInterface.name), (.item(let place, let id), ""):
            let collection = try collection(place, caller, path: "")
            guard !isLocked(collection) else {
                // Its label and attributes are encrypted until the keychain is unlocked.
                return [("Locked", .bool(true)), ("Attributes", .attributes([:])), ("Label", .string("")), ("Created", .uint64(0)), ("Modified", .uint64(0))]
            }
            guard let item = try item(id, in: collection) else { throw BusError.noSuchObject(collection.itemPath(id)) }
            return [
                ("Locked", .bool(false)), ("Attributes", .attributes(item.attributes)), ("Label", .string(item.label)),
                ("Created", .uint64(Self.seconds(item.created))), ("Modified", .uint64(Self.seconds(item.modified))),
            ]
        case (.session, Self.sessionInterface.name), (.prompt, Self.promptInterface.name), (.node, _), (.session, ""), (.prompt, ""):
            return []
        default:
            throw BusError.invalidArgs("No interface \(interface) here")
        }
    }

    private static func seconds(_ date: Date) -> UInt64 { UInt64(max(0, date.timeIntervalSince1970)) }

    private func setProperty(_ call: BusInvocation) throws -> [BusValue] {
        let name = try call.arguments[1].string()
        let object = call.object
        guard try propertyValues(object, interface: try call.arguments[0].string(), call.connection, only: name).contains(where: { $0.0 == name }) else {
            throw BusError.unknownProperty(name)
        }
        let caller = try call.caller
        let value = try call.arguments[2].variantContents()
        switch (object, name) {
        case (.item(let place, let id), "Label"):
            guard case .string(let label) = value else { throw BusError.invalidArgs("Label is a string") }
            let collection = try collection(place, caller, path: "")
            try update(id, in: collection, label: label)
            emit("ItemChanged", item: collection.itemPath(id), in: collection, scope: caller.scope)
        case (.item(let place, let id), "Attributes"):
            guard case .array("{ss}", _) = value else { throw BusError.invalidArgs("Attributes is an a{ss}") }
            let collection = try collection(place, caller, path: "")
            try update(id, in: collection, attributes: try value.stringDictionary())
            emit("ItemChanged", item: collection.itemPath(id), in: collection, scope: caller.scope)
        case (.collection(let place), "Label"):
            guard case .string(let label) = value else { throw BusError.invalidArgs("Label is a string") }
            let collection = try collection(place, caller, path: "")
            // Each scope's collection labels are its own: another scope's login is another row.
            if collection.isSession {
                sessionItems.labels[collection.owner] = label
            } else {
                try storeCall {
                    try store.setSecretServiceCollectionLabel(owner: caller.scope, name: collection.name, label: label, created: collection.created)
                }
            }
            forgetCollections(of: collection.owner)
            announce([("Label", .string(label))], of: collection, scope: caller.scope)
        default:
            throw BusError.propertyReadOnly(name)
        }
        return []
    }
}
