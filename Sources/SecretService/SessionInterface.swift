// org.freedesktop.Secret.Session, at /org/freedesktop/secrets/session/ID: a connection's own.

extension SecretServiceCore {
    static let sessionInterface = BusInterface(
        "org.freedesktop.Secret.Session",
        methods: [
            BusMethod("Close") { core, call in
                guard case .session(let id) = call.object else { throw BusError.unknownObject(call.call.path) }
                try call.caller.sessions[id] = nil
                return []
            }
        ])
}
