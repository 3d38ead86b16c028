import FoundationEssentials
public import KeychainModel

extension EnclaveCall {
    /// The keybag's lock state and settings, and whether the enclave's memory is locked.
    public struct Status: EnclaveRequest, Codable {
        public typealias Response = EnclaveStatus
        public static let mayChangeAvailableKeys = false

        public init() {}
    }

    /// Sets, changes or removes the passcode; the response says whether the akpu class key
    /// was destroyed (securityd then purges those items).
    public struct ChangePasscode: EnclaveRequest, Codable {
        public typealias Response = Bool
        public static let mayChangeAvailableKeys = true
        public var old: SecretBytes?
        public var new: SecretBytes?

        public init(old: SecretBytes?, new: SecretBytes?) {
            self.old = old
            self.new = new
        }
    }

    /// Moves the software device key into a TPM; the response is the status after it.
    public struct MigrateToTPM: EnclaveRequest, Codable {
        public typealias Response = EnclaveStatus
        public static let mayChangeAvailableKeys = true
        public var tcti: String?
        public var passcode: SecretBytes?

        public init(tcti: String?, passcode: SecretBytes?) {
            self.tcti = tcti
            self.passcode = passcode
        }
    }

    public struct UpdateSettings: EnclaveRequest, Codable {
        public static let mayChangeAvailableKeys = true
        public var autoLockSeconds: UInt32?
        public var eraseAfterFailures: UInt32?

        public init(autoLockSeconds: UInt32?, eraseAfterFailures: UInt32?) {
            self.autoLockSeconds = autoLockSeconds
            self.eraseAfterFailures = eraseAfterFailures
        }
    }

    /// An escrow keybag of the class C keys (the passcode, when one is set, authorizes it).
    public struct CreateEscrow: EnclaveRequest, Codable {
        public typealias Response = KeybagCall.EscrowCreated
        public static let mayChangeAvailableKeys = false
        public var passcode: SecretBytes?

        public init(passcode: SecretBytes?) {
            self.passcode = passcode
        }
    }
}

// The requests securityd forwards as clients sent them (``KeybagCall``): whether each
// may change which keys are available.

extension EnclaveCall {
    public typealias Unlock = KeybagCall.Unlock
    public typealias Lock = KeybagCall.Lock
    public typealias Authenticate = KeybagCall.Authenticate
    public typealias InvalidateAuthentication = KeybagCall.InvalidateAuthentication
    public typealias AuthenticationCapabilities = KeybagCall.AuthenticationCapabilitiesRequest
    public typealias UnlockWithEscrow = KeybagCall.UnlockWithEscrow
    public typealias RevokeEscrow = KeybagCall.RevokeEscrow
    public typealias CreateEnclaveKey = KeybagCall.CreateEnclaveKey
    public typealias EnclaveKeyCreated = KeybagCall.EnclaveKeyCreated
    public typealias EnclaveKeyOutput = KeybagCall.EnclaveKeyOutput
}

extension KeybagCall.Unlock: EnclaveRequest { public static let mayChangeAvailableKeys = true }
extension KeybagCall.Lock: EnclaveRequest { public static let mayChangeAvailableKeys = true }
extension KeybagCall.Authenticate: EnclaveRequest { public static let mayChangeAvailableKeys = true }
extension KeybagCall.InvalidateAuthentication: EnclaveRequest { public static let mayChangeAvailableKeys = false }
extension KeybagCall.AuthenticationCapabilitiesRequest: EnclaveRequest { public static let mayChangeAvailableKeys = false }
extension KeybagCall.UnlockWithEscrow: EnclaveRequest { public static let mayChangeAvailableKeys = true }
extension KeybagCall.RevokeEscrow: EnclaveRequest { public static let mayChangeAvailableKeys = false }
extension KeybagCall.CreateEnclaveKey: EnclaveRequest { public static let mayChangeAvailableKeys = false }

/// What the enclave reports about itself.
public struct EnclaveStatus: WireCodable, Hashable, Codable {
    public var keybag: KeybagStatus
    /// Whether the enclave's memory is locked into RAM (mlockall succeeded).
    public var memoryLocked: Bool
    /// What holds the device key: "TPM 2.0 (device:/dev/tpmrm0)", or software and why.
    public var deviceKey: String

    public init(keybag: KeybagStatus, memoryLocked: Bool, deviceKey: String) {
        self.keybag = keybag
        self.memoryLocked = memoryLocked
        self.deviceKey = deviceKey
    }
}
