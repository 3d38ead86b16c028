import KeychainModel
import KeychainProtocol

// Sync between a user's devices (SyncService).

extension Service.EnableSync: ServedRequest {
    static func handle(_ authorized: Authorized<Self>, in daemon: RequestDispatcher) throws -> Response {
        try daemon.sync.enable(server: authorized.request.server)
    }
}

extension Service.DisableSync: ServedRequest {
    static func handle(_ authorized: Authorized<Self>, in daemon: RequestDispatcher) throws -> NoResult {
        try daemon.sync.disable()
        return NoResult()
    }
}

extension Service.SyncNow: ServedRequest {
    static func handle(_ authorized: Authorized<Self>, in daemon: RequestDispatcher) throws -> Response {
        let report = try daemon.sync.syncNow()
        return SyncRoundReport(
            received: UInt32(clamping: report.received), refused: UInt32(clamping: report.refused), sent: UInt32(clamping: report.sent),
            conflicts: UInt32(clamping: report.conflicts), waiting: UInt32(clamping: report.waiting))
    }
}

extension Service.CopySyncStatus: ServedRequest {
    static func handle(_ authorized: Authorized<Self>, in daemon: RequestDispatcher) throws -> Response {
        try daemon.sync.status()
    }
}

extension Service.StartSyncPairing: ServedRequest {
    static func handle(_ authorized: Authorized<Self>, in daemon: RequestDispatcher) throws -> Response {
        try daemon.sync.startPairing()
    }
}

extension Service.AwaitSyncPairing: ServedRequest {
    static func handle(_ authorized: Authorized<Self>, in daemon: RequestDispatcher) throws -> Response {
        try daemon.sync.awaitPairing(authorized.request.nameplate)
    }
}

extension Service.ApproveSyncPairing: ServedRequest {
    static func handle(_ authorized: Authorized<Self>, in daemon: RequestDispatcher) throws -> NoResult {
        try daemon.sync.approvePairing(authorized.request.nameplate, approve: authorized.request.approve)
        return NoResult()
    }
}

extension Service.JoinSync: ServedRequest {
    static func handle(_ authorized: Authorized<Self>, in daemon: RequestDispatcher) throws -> Response {
        try daemon.sync.join(server: authorized.request.server, code: authorized.request.code)
    }
}
