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

    /// Records a refusal of `caller`. The request's name is made only for a recorded status:
    /// the dispatcher calls this for every failure (an item not found is one), and the
    /// first `String(describing:)` of a type scans the binary's conformances (4.8 M
    /// instructions in a first call that failed, 6,800 in every later one).
    func record(_ request: @autoclosure () -> String, caller: Caller, status: OSStatusCode) {
        guard Self.recorded.contains(status) else { return }
        record(request(), program: caller.executable, pid: caller.pid, status: status)
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
