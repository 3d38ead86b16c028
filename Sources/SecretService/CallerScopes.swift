import CSystemd
public import KeychainCallers
import KeychainModel

/// Decides each bus connection's ``SecretScope`` once, from what the bus recorded when it
/// connected (its process and user): the bus says who; `KeychainCallers` decides what that
/// caller sees (``CallerIdentification/secretServiceScope(pid:uid:)``).
public struct CallerScopes: Sendable {
    private let identification: CallerIdentification
    private let portalExecutables: [String]

    /// - Parameter portalExecutables: where xdg-desktop-portal is (the only caller of the
    ///   portal back end).
    public init(identification: CallerIdentification, portalExecutables: [String] = CallerIdentification.portalExecutables) {
        self.identification = identification
        self.portalExecutables = portalExecutables
    }

    /// Whether the connection `name` is xdg-desktop-portal.
    func isPortal(_ name: String, bus: OpaquePointer) -> Bool {
        var pid: Int32 = 0
        var uid: UInt32 = 0
        guard trousseau_bus_peer(bus, name, &pid, &uid) >= 0, pid > 0 else { return false }
        return identification.isPortal(pid: pid, uid: uid, executables: portalExecutables)
    }

    /// The scope of the connection `name`, or an error that refuses it.
    func scope(of name: String, bus: OpaquePointer) throws -> SecretScope {
        var pid: Int32 = 0
        var uid: UInt32 = 0
        let result = trousseau_bus_peer(bus, name, &pid, &uid)
        guard result >= 0, pid > 0 else { throw BusError.accessDenied("the bus does not say which process \(name) is (\(result))") }
        do {
            return try identification.secretServiceScope(pid: pid, uid: uid)
        } catch let error as KeychainError {
            throw BusError.accessDenied(error.message)
        }
    }
}
