import FoundationEssentials
import KeychainCallers
import KeychainLogging
import KeychainModel
import KeychainProtocol

/// securityd's recent refusals, in memory (the last ``capacity``), for Keychain Access's
/// activity view: a request answered with a denial, a wrong password or no interaction
/// allowed, by whom. Nothing of the request's values is kept.
final class SecurityActivity: Sendable {
    static let capacity = 200

    /// The statuses that are the user's business: someone was refused.
    static let recorded: Set<OSStatusCode> = [.missingEntitlement, .authFailed, .interactionNotAllowed, .interactionRequired]

    private let events = BlockingMutex<[Service.SecurityActivityEvent]>([])

    func record(_ request: String, caller: Caller, status: OSStatusCode, at date: Date = Date()) {
        record(request, program: caller.executable, pid: caller.pid, status: status, at: date)
    }

    func record(_ request: String, program: String, pid: Int32, status: OSStatusCode, at date: Date = Date()) {
        guard Self.recorded.contains(status) else { return }
        // What `journalctl -p warning` shows of a refusal: who, which request, which status.
        DaemonLog.logger.warning("refused \(request) of pid \(pid) (\(program)): OSStatus \(status.rawValue)")
        let event = Service.SecurityActivityEvent(
            time: Int64(date.timeIntervalSince1970), request: request, program: program, pid: pid, status: status.rawValue)
        events.withLock { events in
            events.append(event)
            if events.count > Self.capacity { events.removeFirst(events.count - Self.capacity) }
        }
    }

    /// Newest first.
    var recent: [Service.SecurityActivityEvent] { events.withLock { $0.reversed() } }
}

extension Service.CopySecurityActivity: ServedRequest {
    static func handle(_ authorized: Authorized<Self>, in daemon: RequestDispatcher) throws -> Service.SecurityActivityList {
        Service.SecurityActivityList(events: daemon.activity.recent)
    }
}
