/// Where the keybag is in its life since the enclave started.
public enum LockState: UInt8, Codable, Sendable, Hashable {
    /// Started with a passcode set and not yet unlocked: only class D is available.
    case beforeFirstUnlock = 0
    /// Unlocked (or no passcode is set): every class the passcode state allows is available.
    case unlocked = 1
    /// Locked after a first unlock: classes C and D are available, A and akpu are not.
    case locked = 2
}


extension ProtectionClass {
    /// Whether items of this class can be used in `lockState`: class D always, class C
    /// after the first unlock, class A while unlocked, akpu while unlocked with a passcode.
    public func isAvailable(in lockState: LockState, hasPasscode: Bool) -> Bool {
        switch self {
        case .always, .alwaysThisDeviceOnly: true
        case .afterFirstUnlock, .afterFirstUnlockThisDeviceOnly: lockState != .beforeFirstUnlock
        case .whenUnlocked, .whenUnlockedThisDeviceOnly: lockState == .unlocked
        case .whenPasscodeSetThisDeviceOnly: lockState == .unlocked && hasPasscode
        }
    }
}
