import KeychainModel
import KeychainProtocol

// Backups and escrow keybags.

extension Service.CreateBackup: ServedRequest {
    static func handle(_ authorized: Authorized<Self>, in daemon: RequestDispatcher) throws -> Response {
        let request = authorized.request
        let report = try BackupService(store: daemon.store, enclave: daemon.enclave)
            .create(at: request.path, password: request.password, passcode: authorized.presence)
        return Response(
            backedUp: UInt32(clamping: report.backedUp), passcodeSetItems: UInt32(clamping: report.passcodeSetItems),
            applicationPasswordItems: UInt32(clamping: report.applicationPasswordItems), unreadable: UInt32(clamping: report.unreadable))
    }
}

extension Service.RestoreBackup: ServedRequest {
    static func handle(_ authorized: Authorized<Self>, in daemon: RequestDispatcher) throws -> Response {
        let request = authorized.request
        let (report, sameDevice) = try BackupService(store: daemon.store, enclave: daemon.enclave)
            .restore(from: request.path, password: request.password)
        return Response(
            restored: UInt32(clamping: report.restored), replaced: UInt32(clamping: report.replaced),
            keptExisting: UInt32(clamping: report.keptExisting), otherDeviceOnly: UInt32(clamping: report.otherDeviceOnly),
            otherDeviceEnrollment: UInt32(clamping: report.otherDeviceEnrollment), sameDevice: sameDevice)
    }
}

extension Service.CreateEscrow: ServedRequest {
    static func handle(_ authorized: Authorized<Self>, in daemon: RequestDispatcher) throws -> Response {
        let (id, secret) = try daemon.enclave.createEscrow(passcode: authorized.presence)
        return Response(id: id, secret: secret)
    }
}

extension Service.UnlockWithEscrow: ServedRequest {
    static func handle(_ authorized: Authorized<Self>, in daemon: RequestDispatcher) throws -> NoResult {
        try daemon.enclave.unlockWithEscrow(id: authorized.request.id, secret: authorized.request.secret)
        return NoResult()
    }
}

extension Service.RevokeEscrow: ServedRequest {
    static func handle(_ authorized: Authorized<Self>, in daemon: RequestDispatcher) throws -> NoResult {
        try daemon.enclave.revokeEscrow(id: authorized.request.id)
        return NoResult()
    }
}
