import FoundationEssentials

// The D-Bus specification's interfaces on every object: Introspectable (generated from the
// interface tables) and Peer (sd-bus answers Peer itself before a call reaches the core;
// these serve a core driven without a bus). Properties is in PropertiesInterface.swift.

extension SecretServiceCore {
    static let introspectableInterface = BusInterface(
        "org.freedesktop.DBus.Introspectable",
        methods: [
            BusMethod("Introspect", out: ["data": "s"]) { core, call in
                [.string(introspection(of: interfaces(of: call.object), children: try core.children(of: call.object, call.connection)))]
            }
        ])

    static let peerInterface = BusInterface(
        "org.freedesktop.DBus.Peer",
        methods: [
            BusMethod("Ping") { _, _ in [] },
            BusMethod("GetMachineId", out: ["machine_uuid": "s"]) { _, _ in
                guard let id = try? String(contentsOfFile: "/etc/machine-id", encoding: .utf8) else { throw BusError.failed("no machine id") }
                return [.string(id.trimmingCharacters(in: .whitespacesAndNewlines))]
            },
        ])

    /// The child nodes an object shows the caller.
    private func children(of object: SecretObjectPath, _ caller: Connection?) throws -> [String] {
        guard let caller else { return [] }
        switch object {
        case .service: return ["collection", "aliases"]
        case .node("collection"): return (try? collections(caller).map(\.name)) ?? []
        case .node("aliases"): return (try? aliases(caller).keys.sorted()) ?? []
        case .node("session"): return caller.sessions.keys.sorted()
        case .node("prompt"): return caller.prompts.keys.sorted()
        case .collection(let place):
            return (try? collection(place, caller, path: "")).flatMap { try? itemIDs(in: $0, matching: [:]) } ?? []
        default: return []
        }
    }
}
