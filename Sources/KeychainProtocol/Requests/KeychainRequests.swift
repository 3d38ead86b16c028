public import KeychainModel

extension Service {
    /// The keychain's lock state and settings.
    public struct KeychainStatusRequest: ServiceRequest {
        public typealias Response = KeychainStatus
        public static let opcode: UInt8 = 10
        public static let authorization = Authorization.anyCaller

        public init() {}
        public init(from reader: inout ByteReader) throws {}
        public func encode(to writer: inout ByteWriter) {}
    }

    /// What securityd reports about the keychain; no key material.
    public struct KeychainStatus: WireCodable, Hashable {
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

        public init(from reader: inout ByteReader) throws {
            guard let state = LockState(rawValue: try reader.byte()) else { throw KeychainError.decode("unknown lock state") }
            lockState = state
            hasPasscode = try Bool(from: &reader)
            autoLockSeconds = try reader.integer(UInt32.self)
            failedUnlocks = try reader.integer(UInt32.self)
            memoryLocked = try Bool(from: &reader)
        }

        public func encode(to writer: inout ByteWriter) {
            writer.append(lockState.rawValue)
            hasPasscode.encode(to: &writer)
            writer.appendInteger(autoLockSeconds)
            writer.appendInteger(failedUnlocks)
            memoryLocked.encode(to: &writer)
        }
    }

    /// Unlocks the keychain with its passcode (the enclave verifies and throttles it).
    public struct Unlock: ServiceRequest {
        public typealias Response = NoResult
        public static let opcode: UInt8 = 11
        public static let authorization = Authorization.anyCaller
        public var passcode: SecretBytes

        public init(passcode: SecretBytes) { self.passcode = passcode }
        public init(from reader: inout ByteReader) throws { passcode = try reader.secret(limit: Service.passcodeLimit) }
        public func encode(to writer: inout ByteWriter) { writer.appendSecret(passcode) }
    }

    /// Locks the keychain: classes that need the passcode become unavailable.
    public struct Lock: ServiceRequest {
        public typealias Response = NoResult
        public static let opcode: UInt8 = 12
        public static let authorization = Authorization.anyCaller

        public init() {}
        public init(from reader: inout ByteReader) throws {}
        public func encode(to writer: inout ByteWriter) {}
    }

    /// Sets, changes (both given) or removes (`new` nil) the keychain passcode.
    public struct ChangePasscode: ServiceRequest {
        public typealias Response = NoResult
        public static let opcode: UInt8 = 13
        public static let authorization = Authorization.securityTool(operation: "changing the keychain password")
        public var old: SecretBytes?
        public var new: SecretBytes?

        public init(old: SecretBytes?, new: SecretBytes?) {
            self.old = old
            self.new = new
        }

        public init(from reader: inout ByteReader) throws {
            old = try reader.optionalSecret(limit: Service.passcodeLimit)
            new = try reader.optionalSecret(limit: Service.passcodeLimit)
        }

        public func encode(to writer: inout ByteWriter) {
            writer.appendOptionalSecret(old)
            writer.appendOptionalSecret(new)
        }
    }

    /// Changes the keychain's settings: the inactivity after which it locks.
    public struct UpdateSettings: ServiceRequest {
        public typealias Response = NoResult
        public static let opcode: UInt8 = 14
        public static let authorization = Authorization.securityTool(operation: "changing the keychain settings")
        public var autoLockSeconds: UInt32?

        public init(autoLockSeconds: UInt32?) { self.autoLockSeconds = autoLockSeconds }

        public init(from reader: inout ByteReader) throws {
            let present = try Bool(from: &reader)
            let value = try reader.integer(UInt32.self)
            autoLockSeconds = present ? value : nil
        }

        public func encode(to writer: inout ByteWriter) {
            (autoLockSeconds != nil).encode(to: &writer)
            writer.appendInteger(autoLockSeconds ?? 0)
        }
    }
}
