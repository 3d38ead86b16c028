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

extension Service.RemoveSyncDevice: ServedRequest {
    static func handle(_ authorized: Authorized<Self>, in daemon: RequestDispatcher) throws -> Response {
        try daemon.sync.removeDevice(authorized.request.device)
    }
}

extension Service.CreateSyncRecoveryKey: ServedRequest {
    static func handle(_ authorized: Authorized<Self>, in daemon: RequestDispatcher) throws -> Response {
        try daemon.sync.createRecoveryKey()
    }
}

extension Service.RecoverSync: ServedRequest {
    static func handle(_ authorized: Authorized<Self>, in daemon: RequestDispatcher) throws -> Response {
        try daemon.sync.recover(server: authorized.request.server, key: authorized.request.key)
    }
}

extension Service.JoinSync: ServedRequest {
    static func handle(_ authorized: Authorized<Self>, in daemon: RequestDispatcher) throws -> Response {
        try daemon.sync.join(server: authorized.request.server, code: authorized.request.code)
    }
}

extension Service.CopySyncHistory: ServedRequest {
    static func handle(_ authorized: Authorized<Self>, in daemon: RequestDispatcher) throws -> Response {
        let request = authorized.request
        guard try daemon.store.syncAccount() != nil else { throw SyncService.off }
        // The item is found as the tool finds it (its reach; the secret's with -w), then its
        // lost values are opened in the enclave.
        let query: [String: KeychainValue] = [
            "class": .string("genp"), "acct": .string(request.account), "svce": .string(request.service), "sync": .bool(true),
            "r_PersistentRef": .bool(true), "r_Data": .bool(request.withSecrets),
        ]
        let groups = try daemon.reach(of: authorized.caller, for: .search(query: query, returnsData: request.withSecrets), presence: authorized.presence != nil)
        guard case .dictionary(let found)? = try daemon.store.copyMatching(query.merging(["r_Attributes": .bool(true)]) { $1 }, caller: groups),
            case .data(let reference)? = found["v_PersistentRef"]
        else { throw KeychainError.itemNotFound }
        return SyncHistoryList(entries: try daemon.sync.history(of: try PersistentReference(data: reference).uuid, withSecrets: request.withSecrets))
    }
}
