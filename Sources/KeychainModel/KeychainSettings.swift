/// A file keychain's settings, as `set-keychain-settings` sets them: what its file records,
/// what the request carries and what `show-keychain-info` prints. Not secret.
public struct KeychainSettings: WireCodable, Codable, Sendable, Hashable {
    /// Seconds of inactivity after which the keychain locks; 0: never.
    public var autoLockSeconds: UInt32
    /// Lock when the machine sleeps (`-l`).
    public var lockOnSleep: Bool

    public init(autoLockSeconds: UInt32 = 0, lockOnSleep: Bool = false) {
        self.autoLockSeconds = autoLockSeconds
        self.lockOnSleep = lockOnSleep
    }
}
