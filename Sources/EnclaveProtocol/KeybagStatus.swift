public import KeychainModel

/// What the keybag reports about itself; no key material.
public struct KeybagStatus: Codable, Sendable, Hashable {
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
        protection.isAvailable(in: lockState, hasPasscode: hasPasscode)
    }
}

