// org.freedesktop.Secret.Prompt, at /org/freedesktop/secrets/prompt/ID: a connection's own,
// asking the user through the unlocker (the agent or terminal of PresenceFrontEnd).

extension SecretServiceCore {
    static let promptInterface = BusInterface(
        "org.freedesktop.Secret.Prompt",
        methods: [
            BusMethod("Prompt", in: ["window-id": "s"]) { try $0.prompt($1) },
            BusMethod("Dismiss") { core, call in
                guard case .prompt(let id) = call.object else { throw BusError.unknownObject(call.call.path) }
                core.finish(id, of: call.call.sender, confirmed: false)
                return []
            },
        ],
        signals: [BusSignal("Completed", ["dismissed": "b", "result": "v"])])

    private func prompt(_ call: BusInvocation) throws -> [BusValue] {
        let caller = try call.caller
        guard case .prompt(let id) = call.object, var prompt = caller.prompts[id] else { throw BusError.unknownObject(call.call.path) }
        guard !prompt.asking else { return [] }
        let reason: String
        switch prompt.action {
        case .unlock(let objects):
            let needsUser = store.secretServiceIsLocked()
                || objects.contains { path in (try? collection(containing: path, caller)).map { isLockedByRequest($0) } ?? false }
            guard unlocker != nil, needsUser else {
                // Nothing to ask (no one can be asked here, or it was unlocked meanwhile).
                finish(id, of: call.call.sender, confirmed: !needsUser)
                return []
            }
            reason = "Unlock the keychain for the Secret Service (\(caller.scope))"
        case .delete(let name):
            guard unlocker != nil else {
                finish(id, of: call.call.sender, confirmed: false)
                return []
            }
            reason = "Delete every item of the collection \(name) of the Secret Service (\(caller.scope))"
        }
        guard let unlocker else { return [] }
        prompt.asking = true
        caller.prompts[id] = prompt
        ask(reason, prompt: id, of: call.call.sender, using: unlocker)
        return []
    }
}
