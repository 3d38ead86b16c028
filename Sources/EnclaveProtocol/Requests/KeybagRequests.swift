public import FoundationEssentials
public import KeychainModel

extension EnclaveCall {
    /// The keybag's lock state and settings, and whether the enclave's memory is locked.
    public struct Status: EnclaveRequest {
        public typealias Response = EnclaveStatus
        public static let opcode: UInt8 = 1
        public static let mayChangeAvailableKeys = false

        public init() {}
        public init(from reader: inout ByteReader) throws {}
        public func encode(to writer: inout ByteWriter) {}
    }

    public struct Unlock: EnclaveRequest {
        public typealias Response = NoResult
        public static let opcode: UInt8 = 2
        public static let mayChangeAvailableKeys = true
        public var passcode: SecretBytes

        public init(passcode: SecretBytes) { self.passcode = passcode }
        public init(from reader: inout ByteReader) throws { passcode = try reader.secret(limit: EnclaveCall.fieldLimit) }
        public func encode(to writer: inout ByteWriter) { writer.appendSecret(passcode) }
    }

    public struct Lock: EnclaveRequest {
        public typealias Response = NoResult
        public static let opcode: UInt8 = 3
        public static let mayChangeAvailableKeys = true

        public init() {}
        public init(from reader: inout ByteReader) throws {}
        public func encode(to writer: inout ByteWriter) {}
    }

    /// Sets, changes or removes the passcode; the response says whether the akpu class key
    /// was destroyed (securityd then purges those items).
    public struct ChangePasscode: EnclaveRequest {
        public typealias Response = Bool
        public static let opcode: UInt8 = 4
        public static let mayChangeAvailableKeys = true
        public var old: SecretBytes?
        public var new: SecretBytes?

        public init(old: SecretBytes?, new: SecretBytes?) {
            self.old = old
            self.new = new
        }

        public init(from reader: inout ByteReader) throws {
            old = try reader.optionalSecret(limit: EnclaveCall.fieldLimit)
            new = try reader.optionalSecret(limit: EnclaveCall.fieldLimit)
        }

        public func encode(to writer: inout ByteWriter) {
            writer.appendOptionalSecret(old)
            writer.appendOptionalSecret(new)
        }
    }

    public struct UpdateSettings: EnclaveRequest {
        public typealias Response = NoResult
        public static let opcode: UInt8 = 5
        public static let mayChangeAvailableKeys = true
        public var autoLockSeconds: UInt32?
        public var eraseAfterFailures: UInt32?

        public init(autoLockSeconds: UInt32?, eraseAfterFailures: UInt32?) {
            self.autoLockSeconds = autoLockSeconds
            self.eraseAfterFailures = eraseAfterFailures
        }

        public init(from reader: inout ByteReader) throws {
            var values: [UInt32?] = []
            for _ in 0..<2 {
                let present = try Bool(from: &reader)
                let value = try reader.integer(UInt32.self)
                values.append(present ? value : nil)
            }
            autoLockSeconds = values[0]
            eraseAfterFailures = values[1]
        }

        public func encode(to writer: inout ByteWriter) {
            for value in [autoLockSeconds, eraseAfterFailures] {
                (value != nil).encode(to: &writer)
                writer.appendInteger(value ?? 0)
            }
        }
    }

    public struct Authenticate: EnclaveRequest {
        public typealias Response = NoResult
        public static let opcode: UInt8 = 10
        public static let mayChangeAvailableKeys = true
        public var request: AuthenticationRequest

        public init(_ request: AuthenticationRequest) { self.request = request }
        public init(from reader: inout ByteReader) throws { request = try AuthenticationRequest(from: &reader) }
        public func encode(to writer: inout ByteWriter) { request.encode(to: &writer) }
    }

    public struct InvalidateAuthentication: EnclaveRequest {
        public typealias Response = NoResult
        public static let opcode: UInt8 = 11
        public static let mayChangeAvailableKeys = false
        public var context: Data

        public init(context: Data) { self.context = context }
        public init(from reader: inout ByteReader) throws { context = try .field(&reader, limit: EnclaveCall.idLimit) }
        public func encode(to writer: inout ByteWriter) { writer.appendLengthPrefixed(context) }
    }

    public struct AuthenticationCapabilities: EnclaveRequest {
        public typealias Response = KeychainModel.AuthenticationCapabilities
        public static let opcode: UInt8 = 12
        public static let mayChangeAvailableKeys = false

        public init() {}
        public init(from reader: inout ByteReader) throws {}
        public func encode(to writer: inout ByteWriter) {}
    }

    /// An escrow keybag of the class C keys (the passcode, when one is set, authorizes it).
    public struct CreateEscrow: EnclaveRequest {
        public static let opcode: UInt8 = 30
        public static let mayChangeAvailableKeys = false
        public var passcode: SecretBytes?

        public init(passcode: SecretBytes?) { self.passcode = passcode }
        public init(from reader: inout ByteReader) throws { passcode = try reader.optionalSecret(limit: EnclaveCall.fieldLimit) }
        public func encode(to writer: inout ByteWriter) { writer.appendOptionalSecret(passcode) }

        public struct Response: WireCodable {
            public var id: Data
            public var secret: SecretBytes

            public init(id: Data, secret: SecretBytes) {
                self.id = id
                self.secret = secret
            }

            public init(from reader: inout ByteReader) throws {
                id = try .field(&reader, limit: EnclaveCall.idLimit)
                secret = try reader.secret(limit: 64)
            }

            public func encode(to writer: inout ByteWriter) {
                writer.appendLengthPrefixed(id)
                writer.appendSecret(secret)
            }
        }
    }

    public struct UnlockWithEscrow: EnclaveRequest {
        public typealias Response = NoResult
        public static let opcode: UInt8 = 31
        public static let mayChangeAvailableKeys = true
        public var id: Data
        public var secret: SecretBytes

        public init(id: Data, secret: SecretBytes) {
            self.id = id
            self.secret = secret
        }

        public init(from reader: inout ByteReader) throws {
            id = try .field(&reader, limit: EnclaveCall.idLimit)
            secret = try reader.secret(limit: 64)
        }

        public func encode(to writer: inout ByteWriter) {
            writer.appendLengthPrefixed(id)
            writer.appendSecret(secret)
        }
    }

    public struct RevokeEscrow: EnclaveRequest {
        public typealias Response = NoResult
        public static let opcode: UInt8 = 32
        public static let mayChangeAvailableKeys = false
        public var id: Data

        public init(id: Data) { self.id = id }
        public init(from reader: inout ByteReader) throws { id = try .field(&reader, limit: EnclaveCall.idLimit) }
        public func encode(to writer: inout ByteWriter) { writer.appendLengthPrefixed(id) }
    }
}

/// What the enclave reports about itself.
public struct EnclaveStatus: WireCodable, Hashable {
    public var keybag: KeybagStatus
    /// Whether the enclave's memory is locked into RAM (mlockall succeeded).
    public var memoryLocked: Bool

    public init(keybag: KeybagStatus, memoryLocked: Bool) {
        self.keybag = keybag
        self.memoryLocked = memoryLocked
    }

    public init(from reader: inout ByteReader) throws {
        guard let lockState = LockState(rawValue: try reader.byte()) else { throw KeychainError.decode("unknown lock state") }
        let hasPasscode = try Bool(from: &reader)
        let autoLock = try reader.integer(UInt32.self)
        let failed = try reader.integer(UInt32.self)
        keybag = KeybagStatus(lockState: lockState, hasPasscode: hasPasscode, autoLockSeconds: autoLock, failedUnlocks: failed)
        memoryLocked = try Bool(from: &reader)
    }

    public func encode(to writer: inout ByteWriter) {
        writer.append(keybag.lockState.rawValue)
        keybag.hasPasscode.encode(to: &writer)
        writer.appendInteger(keybag.autoLockSeconds)
        writer.appendInteger(keybag.failedUnlocks)
        memoryLocked.encode(to: &writer)
    }
}
