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
        /// Writes committed to the keychain and its open file keychains since securityd
        /// started: a client that shows items (the window) re-reads them when this changes.
        public var changeCount: UInt64
        /// What holds the device key (a TPM 2.0, or software and why).
        public var deviceKey: String

        public init(
            lockState: LockState,
            hasPasscode: Bool,
            autoLockSeconds: UInt32,
            failedUnlocks: UInt32,
            memoryLocked: Bool,
            changeCount: UInt64,
            deviceKey: String
        ) {
            self.lockState = lockState
            self.hasPasscode = hasPasscode
            self.autoLockSeconds = autoLockSeconds
            self.failedUnlocks = failedUnlocks
            self.memoryLocked = memoryLocked
            self.changeCount = changeCount
            self.deviceKey = deviceKey
        }
    }

    /// Sets, changes (both given) or removes (`new` nil) the keychain passcode.
    public struct ChangePasscode: ServiceRequest, Codable {
        public static let authorization = Authorization.securityTool(operation: "changing the keychain password")
        public var old: SecretBytes?
        public var new: SecretBytes?

        public init(old: SecretBytes?, new: SecretBytes?) {
            self.old = old
            self.new = new
        }
    }

    /// Moves the keychain's device key into a TPM 2.0 (`security keychain-migrate --tpm`);
    /// the response is the keychain's status after it (``KeychainStatus/deviceKey`` says
    /// what holds the key now).
    public struct MigrateToTPM: ServiceRequest, Codable {
        public typealias Response = KeychainStatus
        public static let authorization = Authorization.securityTool(operation: "moving the keychain onto the TPM")
        /// The TPM's TCTI; nil for the daemon's `TROUSSEAU_TPM`, else /dev/tpmrm0.
        public var tcti: String?
        /// The keychain password, when one is set.
        public var passcode: SecretBytes?

        public init(tcti: String?, passcode: SecretBytes?) {
            self.tcti = tcti
            self.passcode = passcode
        }
    }

    /// Changes the keychain's settings: the inactivity after which it locks.
    public struct UpdateSettings: ServiceRequest, Codable {
        public static let authorization = Authorization.securityTool(operation: "changing the keychain settings")
        public var autoLockSeconds: UInt32?

        public init(autoLockSeconds: UInt32?) {
            self.autoLockSeconds = autoLockSeconds
        }
    }
}
