import FoundationEssentials
import KeychainModel
import KeychainProtocol

#if canImport(Glibc)
import Glibc
#endif

/// `security sync …` (Trousseau's; macOS has no command for iCloud Keychain): turns sync
/// with the user's other devices on and off, runs a round, says where it stands.
enum SyncCommands {
    static let usage = """
        enable --server URL | pair [--approve] | join --server URL CODE|- | status | devices | now
            | history -a account -s service [-w] | remove-device ID | recovery-key create
            | recover --server URL KEY|- | disable
            enable   Found a sync circle on the trousseau-syncd server at URL with this device as its
                     first member (https://, or http:// to this machine's loopback); then send every
                     synchronizable item. With a keychain password set, that is needed.
            pair     Show a code for a new device to join this device's circle, wait (up to ten
                     minutes) for the device that types it, and ask whether to add it; --approve
                     adds it without asking (for scripts). A wrong code ends the pairing.
            join     Join the circle of the device showing CODE (- reads it from standard input),
                     through the server at URL; waits for that device's approval, then syncs.
            status   Say whether sync is on, with which server and account, this device's id, the
                     circle's devices, changes waiting to be sent, and the last round's outcome.
            devices  List the circle's devices, this one marked with *.
            now      Run a round now (receive, merge, send) and say what it did. securityd runs
                     rounds by itself too: soon after a change here, when the server tells it
                     another device changed something, and every minute.
            history  The values of a synchronizable generic password that lost a merge with another
                     device's change (none is overwritten silently): who wrote each and when, its
                     attributes, and with -w its password.
            remove-device
                     Remove the device ID (as `devices` lists it) from the circle, from any other
                     device: its server credential is revoked and the circle's keys are replaced,
                     so nothing written from now on opens with the keys it kept. Its items stay
                     on every device. Needs the keychain password when one is set.
            recovery-key create
                     Add a recovery key to the circle and print it, once: 32 letters and digits
                     to keep apart from the devices (on paper). With it a new device can join
                     when every device is lost. Replace one by removing it (remove-device) first.
            recover  Join, as a new device, the circle on the server at URL whose recovery key is
                     KEY (- reads it from standard input), and sync every item back.
            disable  Stop syncing: revoke this device's credential on the server, forget the account,
                     the keys, the queues and the history; every item stays. Another device's
                     remove-device then takes it out of the circle and changes the keys.
        Items sync when they are synchronizable (kSecAttrSynchronizable, or --synchronizable on
        add-generic-password and add-internet-password) and not ThisDeviceOnly.
        """

    static func sync(_ arguments: [String], _ session: ToolSession) -> Int32 {
        guard arguments.count >= 2, let parsed = try? OptionParser("a:s:wh", longOptions: ["server": true, "approve": false]).parse(arguments.dropFirst(2)) else {
            return ToolCommand.showUsage
        }
        let server = parsed.options.last { $0.name == "server" }?.value
        let approve = parsed.options.contains { $0.name == "approve" }
        let account = parsed.options.last { $0.name == "a" }?.value
        let service = parsed.options.last { $0.name == "s" }?.value
        let withSecrets = parsed.options.contains { $0.name == "w" }
        guard (account == nil && service == nil && !withSecrets) || arguments[1] == "history" else { return ToolCommand.showUsage }
        guard parsed.operands.count == (["join", "remove-device", "recovery-key", "recover"].contains(arguments[1]) ? 1 : 0),
            server == nil || ["enable", "join", "recover"].contains(arguments[1]),
            !approve || arguments[1] == "pair"
        else { return ToolCommand.showUsage }
        do {
            switch arguments[1] {
            case "enable":
                guard let server else { return ToolCommand.showUsage }
                ToolOutput.print(describe(try session.call(Service.EnableSync(server: server), purpose: "turn on sync")))
            case "pair":
                try pair(approve: approve, session)
            case "join":
                guard let server else { return ToolCommand.showUsage }
                var code = parsed.operands[0]
                if code == "-" { code = (readLine(strippingNewline: true) ?? "").split(whereSeparator: \.isWhitespace).joined() }
                ToolOutput.error("waiting for the other device to approve this one…\n")
                ToolOutput.print(describe(try session.call(Service.JoinSync(server: server, code: code), purpose: "turn on sync")))
            case "history":
                guard let account, let service else { return ToolCommand.showUsage }
                let history = try session.call(
                    Service.CopySyncHistory(account: account, service: service, withSecrets: withSecrets), purpose: "read the item's sync history")
                ToolOutput.print(describe(history, account: account, service: service))
            case "remove-device":
                let removed = try session.call(Service.RemoveSyncDevice(device: parsed.operands[0]), purpose: "remove a device from sync")
                ToolOutput.print(
                    "removed device \(removed.device); the circle's keys were replaced (\(removed.resealed) of its records sealed again)\n"
                        + "devices: \(removed.members.joined(separator: ", "))")
            case "recovery-key":
                guard parsed.operands[0] == "create" else { return ToolCommand.showUsage }
                let made = try session.call(Service.CreateSyncRecoveryKey(), purpose: "make a sync recovery key")
                ToolOutput.print(
                    "recovery key: \(String(decoding: made.key.withUnsafeBytes { Data($0) }, as: UTF8.self))\n"
                        + "Write it down and keep it apart from your devices: it is shown only this once. If every device is lost,\n"
                        + "`security sync recover --server URL -` on a new one, given this key, brings every synced item back.\n")
            case "recover":
                guard let server else { return ToolCommand.showUsage }
                var key = parsed.operands[0]
                if key == "-" { key = readLine(strippingNewline: true) ?? "" }
                let secret = SecretBytes(Data(key.utf8))
                key = ""
                ToolOutput.print(describe(try session.call(Service.RecoverSync(server: server, key: secret), purpose: "turn on sync")))
            case "status":
                ToolOutput.print(describe(try session.call(Service.CopySyncStatus())))
            case "devices":
                let status = try session.call(Service.CopySyncStatus())
                guard status.enabled else { throw KeychainError(status: OSStatusCode.itemNotFound, message: "sync is not on for this keychain") }
                ToolOutput.print(
                    status.members.map { ($0 == status.device ? "* " : "  ") + $0 + "\n" }.joined() + (status.recovery.map { "  \($0) (the recovery key)\n" } ?? ""))
            case "now":
                let report = try session.call(Service.SyncNow())
                ToolOutput.print(
                    "received \(report.received), sent \(report.sent), merged \(report.conflicts) conflict(s), refused \(report.refused), waiting for unlock \(report.waiting)\n")
            case "disable":
                try session.call(Service.DisableSync(), purpose: "turn off sync")
                ToolOutput.print(
                    "sync is off; every item stays in this keychain. This device's credential is revoked; to take it out of the circle's device list"
                        + " (and change the keys it held), run `security sync remove-device` with its id on another device of the circle\n")
            default:
                return ToolCommand.showUsage
            }
            return 0
        } catch {
            // Sync has no Apple words of its own: why it failed (a refused URL, the server
            // unreachable) is said after them, as the tool says why there is no keychain.
            let failure = KeychainError.from(error)
            let status = ToolOutput.failure("sync \(arguments[1])", failure)
            if failure.status != .notAvailable, !failure.message.isEmpty, getenv("TROUSSEAU_DEBUG") == nil { ToolOutput.report(failure.message) }
            return status
        }
    }

    /// `pair`: the code, the wait, the question, the answer.
    static func pair(approve: Bool, _ session: ToolSession) throws {
        let started = try session.call(Service.StartSyncPairing())
        ToolOutput.print("code: \(started.code)\n")
        ToolOutput.flush()  // a script reads the code while this waits
        ToolOutput.error("on the new device: security sync join --server URL \(started.code)\nwaiting for it (up to ten minutes)…\n")
        let request = try session.call(Service.AwaitSyncPairing(nameplate: started.nameplate))
        var approved = approve
        if !approve {
            ToolOutput.error("device \(request.device) typed the code. Add it to this keychain's sync circle? [y/N] ")
            approved = ["y", "yes"].contains(readLine(strippingNewline: true)?.lowercased() ?? "")
        }
        try session.call(Service.ApproveSyncPairing(nameplate: started.nameplate, approve: approved), purpose: "add a device to sync")
        ToolOutput.print(approved ? "device \(request.device) joined\n" : "device \(request.device) was not added; the code is dead\n")
    }

    /// `history`'s lines.
    static func describe(_ history: SyncHistoryList, account: String, service: String) -> String {
        var text = "\"\(account)\" at \"\(service)\": \(history.entries.count) value(s) lost a merge\n"
        for entry in history.entries {
            let when = Date(timeIntervalSinceReferenceDate: entry.written).formatted(.iso8601)
            text += "version \(entry.version): \(entry.deleted ? "a deletion" : "a change") by device \(entry.writer) at \(when)\n"
            for attribute in entry.attributes { text += "    \(attribute)\n" }
            if let secret = entry.secret { text += "    password: \(String(decoding: secret.withUnsafeBytes { Data($0) }, as: UTF8.self))\n" }
        }
        return text
    }

    /// `status`'s lines.
    static func describe(_ status: SyncStatusReport) -> String {
        guard status.enabled else { return "sync: off\n" }
        var lines = [
            status.alarm == nil ? "sync: on" : "sync: STOPPED — \(status.alarm!)", "server: \(status.server)", "account: \(status.account)", "this device: \(status.device)", "zone: \(status.zone)",
            "devices: \(status.members.count)", "pending: \(status.pending)", "synced: \(status.synced)", "waiting for unlock: \(status.waiting)",
            "history: \(status.history)", "signed heads agreeing: \(status.headsAgreed) of \(status.members.count - 1) other device(s)",
        ]
        if let last = status.lastSync {
            let when = Date(timeIntervalSinceReferenceDate: last).formatted(.iso8601)
            lines.append("last sync: \(when) " + (status.lastError.map { "failed: \($0)" } ?? "ok"))
        } else {
            lines.append("last sync: none since securityd started")
        }
        if status.refused > 0 {
            // What the server sent and this device would not take: a lying or broken server,
            // or a member's bad write. Nothing of it was applied; it is read again each round.
            lines.append("refused from the server since securityd started: \(status.refused) record(s)")
            if let at = status.lastRefused, let reason = status.lastRefusal {
                lines.append("last refused: \(Date(timeIntervalSinceReferenceDate: at).formatted(.iso8601)) \(reason)")
            }
        }
        if let recovery = status.recovery { lines.append("recovery key: \(recovery)") }
        lines += status.notices.map { "warning: " + $0 }
        if status.omitted > 0 {
            lines.append("left out by the server's feed since securityd started: \(status.omitted) record version(s) (it refused writes against them; the feed was read again)")
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
