/// Where the keybag is in its life since the enclave started.
public enum LockState: UInt8, Sendable, Hashable {
    /// Started with a passcode set and not yet unlocked: only class D is available.
    case beforeFirstUnlock = 0
    /// Unlocked (or no passcode is set): every class the passcode state allows is available.
    case unlocked = 1
    /// Locked after a first unlock: classes C and D are available, A and akpu are not.
    case locked = 2
}

/// What the keybag reports about itself; no key material.
public struct KeybagStatus: Sendable, Hashable {
    public var lockState: LockState
    public var hasPasscode: Bool
    /// Seconds of inactivity after which an unlocked keybag locks; 0: never.
    public var autoLockSeconds: UInt32
    /// Failed unlocks since the last success.
    public var failedUnlocks: UInt32

    public init(lockState: LockState, hasPasscode: Bool, autoLockSeconds: UInt32, failedUnlocks: UInt32) {
        self.lockState = lockState
        self.hasPasscode = hasPasscode
        self.autoLockSeconds = autoLockSeconds
        self.failedUnlocks = failedUnlocks
    }

    /// Whether items of `protection` can be used now.
    public func isAvailable(_ protection: ProtectionClass) -> Bool {
        switch protection {
        case .always, .alwaysThisDeviceOnly: true
        case .afterFirstUnlock, .afterFirstUnlockThisDeviceOnly: lockState != .beforeFirstUnlock
        case .whenUnlocked, .whenUnlockedThisDeviceOnly: lockState == .unlocked
        case .whenPasscodeSetThisDeviceOnly: lockState == .unlocked && hasPasscode
        }
    }
}

import KeychainModel
