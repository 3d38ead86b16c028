public import KeychainModel

extension Service {
    /// The keychain's lock state and settings.
    @WireStruct
    public struct KeychainStatusRequest: ServiceRequest {
        public typealias Response = KeychainStatus
        public static let authorization = Authorization.anyCaller
    }

    /// What securityd reports about the keychain; no key material.
    @WireStruct
    public struct KeychainStatus: WireCodable, Hashable {
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
    }

    /// Sets, changes (both given) or removes (`new` nil) the keychain passcode.
    @WireStruct
    public struct ChangePasscode: ServiceRequest {
        public static let authorization = Authorization.securityTool(operation: "changing the keychain password")
        public var old: SecretBytes?
        public var new: SecretBytes?
    }

    /// Moves the keychain's device key into a TPM 2.0 (`security keychain-migrate --tpm`);
    /// the response is the keychain's status after it (``KeychainStatus/deviceKey`` says
    /// what holds the key now).
    @WireStruct
    public struct MigrateToTPM: ServiceRequest {
        public typealias Response = KeychainStatus
        public static let authorization = Authorization.securityTool(operation: "moving the keychain onto the TPM")
        /// The TPM's TCTI; nil for the daemon's `TROUSSEAU_TPM`, else /dev/tpmrm0.
        public var tcti: String?
        /// The keychain password, when one is set.
        public var passcode: SecretBytes?
    }

    /// Changes the keychain's settings: the inactivity after which it locks.
    @WireStruct
    public struct UpdateSettings: ServiceRequest {
        public static let authorization = Authorization.securityTool(operation: "changing the keychain settings")
        public var autoLockSeconds: UInt32?
    }
}
