public import KeychainModel

extension Service {
    /// The keychain's lock state and settings.
    public struct KeychainStatusRequest: ServiceRequest, Codable {
        public typealias Response = KeychainStatus
        public static let authorization = Authorization.anyCaller

        public init() {}
    }

    /// What securityd reports about the keychain; no key material.
    public struct KeychainStatus: WireCodable, Hashable, Codable {
        public var lockState: LockState
        public var hasPasscode: Bool
        /// Seconds of inactivity after which the keychain locks; 0: never.
        public var autoLockSeconds: UInt32
        /// Failed unlocks since the last success.
        public var failedUnlocks: UInt32
        /// Whether the enclave's memory is locked into RAM.
        public var memoryLocked: Bool

        public init(lockState: LockState, hasPasscode: Bool, autoLockSeconds: UInt32, failedUnlocks: UInt32, memoryLocked: Bool) {
            self.lockState = lockState
            self.hasPasscode = hasPasscode
            self.autoLockSeconds = autoLockSeconds
            self.failedUnlocks = failedUnlocks
            self.memoryLocked = memoryLocked
        }
    }

    /// Sets, changes (both given) or removes (`new` nil) the keychain passcode.
    public struct ChangePasscode: ServiceRequest, Codable {
        public typealias Response = NoResult
        public static let authorization = Authorization.securityTool(operation: "changing the keychain password")
        public var old: SecretBytes?
        public var new: SecretBytes?

        public init(old: SecretBytes?, new: SecretBytes?) {
            self.old = old
            self.new = new
        }
    }

    /// Changes the keychain's settings: the inactivity after which it locks.
    public struct UpdateSettings: ServiceRequest, Codable {
        public typealias Response = NoResult
        public static let authorization = Authorization.securityTool(operation: "changing the keychain settings")
        public var autoLockSeconds: UInt32?

        public init(autoLockSeconds: UInt32?) { self.autoLockSeconds = autoLockSeconds }
    }
}
