public import FoundationEssentials
public import KeychainCrypto
public import KeychainModel
public import Keybag

/// The enclave's fixed request set. Class keys never cross the boundary: the daemon gets
/// item keys wrapped or unwrapped, and the derived metadata and index keys it caches.
public enum EnclaveRequest: Sendable {
    case status
    case unlock(passcode: SecretBytes)
    case lock
    case changePasscode(old: SecretBytes?, new: SecretBytes?)
    case updateSettings(autoLockSeconds: UInt32?, eraseAfterFailures: UInt32?)
    case indexKey
    case metadataKey(ProtectionClass)
    case wrapItemKey(ProtectionClass, ItemKey, associatedData: Data, access: AccessControl? = nil, context: Data? = nil)
    case unwrapItemKey(ProtectionClass, wrapped: Data, associatedData: Data, access: AccessControl? = nil, context: Data? = nil)
    case authenticate(AuthenticationRequest)
    case invalidateAuthentication(context: Data)
    case authenticationCapabilities
    /// A new backup keybag under `password` (the passcode, when one is set, authorizes it).
    case beginBackup(password: SecretBytes, passcode: SecretBytes?)
    /// Opens an archive's backup keybag for a restore.
    case openBackup(header: BackupArchive, password: SecretBytes)
    case backupMetadataKey(session: Data, ProtectionClass)
    case exportSecret(session: Data, ProtectionClass, blob: Data, rowAssociatedData: Data, recordAssociatedData: Data)
    case importSecret(session: Data, ProtectionClass, blob: Data, recordAssociatedData: Data, rowAssociatedData: Data)
    case endBackup(session: Data)
    /// An escrow keybag of the class C keys (the passcode, when one is set, authorizes it).
    case createEscrow(passcode: SecretBytes?)
    case unlockWithEscrow(id: Data, secret: SecretBytes)
    case revokeEscrow(id: Data)
}

/// What the enclave reports about itself.
public struct EnclaveStatus: Sendable, Hashable {
    public var keybag: KeybagStatus
    /// Whether the enclave's memory is locked into RAM (mlockall succeeded).
    public var memoryLocked: Bool
}

/// The wire format of enclave messages, inside `FrameIO` frames.
///
/// Request: version (1), opcode, fields. Response: version, 0 and the result, or 1, the
/// OSStatus (i32) and a message. Byte strings are 32-bit-length-prefixed; optionals are a
/// presence byte and the value; a protection class is its length-prefixed raw value.
public enum EnclaveWire {
    public static let version: UInt8 = 1
    /// The largest frame either side accepts: a secret blob being re-sealed for a backup.
    public static let maximumFrameSize = 4 << 20
    /// The longest byte string a field may hold (passcodes, associated data, wrapped keys).
    static let fieldLimit = 16 * 1024
    /// The longest secret blob (a 1 MiB secret and its headers fit).
    static let blobLimit = 3 << 20

    enum Opcode: UInt8 {
        case status = 1, unlock, lock, changePasscode, updateSettings, indexKey, metadataKey, wrapItemKey, unwrapItemKey
        case authenticate, invalidateAuthentication, authenticationCapabilities
        case beginBackup = 20, openBackup, backupMetadataKey, exportSecret, importSecret, endBackup
        case createEscrow = 30, unlockWithEscrow, revokeEscrow
    }

    public static func encode(_ request: EnclaveRequest) -> Data {
        var out = Data([version])
        switch request {
        case .status: out.append(Opcode.status.rawValue)
        case .unlock(let passcode):
            out.append(Opcode.unlock.rawValue)
            out.appendSecret(passcode)
        case .lock: out.append(Opcode.lock.rawValue)
        case .changePasscode(let old, let new):
            out.append(Opcode.changePasscode.rawValue)
            out.appendOptionalSecret(old)
            out.appendOptionalSecret(new)
        case .updateSettings(let autoLock, let erase):
            out.append(Opcode.updateSettings.rawValue)
            for value in [autoLock, erase] {
                out.append(value == nil ? 0 : 1)
                out.appendInteger(value ?? 0)
            }
        case .indexKey: out.append(Opcode.indexKey.rawValue)
        case .metadataKey(let protection):
            out.append(Opcode.metadataKey.rawValue)
            out.appendLengthPrefixed(Data(protection.rawValue.utf8))
        case .wrapItemKey(let protection, let itemKey, let associatedData, let access, let context):
            out.append(Opcode.wrapItemKey.rawValue)
            out.appendLengthPrefixed(Data(protection.rawValue.utf8))
            out.appendSecret(itemKey.secretBytes)
            out.appendLengthPrefixed(associatedData)
            appendAccess(access, context: context, to: &out)
        case .unwrapItemKey(let protection, let wrapped, let associatedData, let access, let context):
            out.append(Opcode.unwrapItemKey.rawValue)
            out.appendLengthPrefixed(Data(protection.rawValue.utf8))
            out.appendLengthPrefixed(wrapped)
            out.appendLengthPrefixed(associatedData)
            appendAccess(access, context: context, to: &out)
        case .authenticate(let request):
            out.append(Opcode.authenticate.rawValue)
            request.encode(to: &out)
        case .invalidateAuthentication(let context):
            out.append(Opcode.invalidateAuthentication.rawValue)
            out.appendLengthPrefixed(context)
        case .authenticationCapabilities:
            out.append(Opcode.authenticationCapabilities.rawValue)
        case .beginBackup(let password, let passcode):
            out.append(Opcode.beginBackup.rawValue)
            out.appendSecret(password)
            out.appendOptionalSecret(passcode)
        case .openBackup(let header, let password):
            out.append(Opcode.openBackup.rawValue)
            header.appendHeader(to: &out)
            out.appendSecret(password)
        case .backupMetadataKey(let session, let protection):
            out.append(Opcode.backupMetadataKey.rawValue)
            out.appendLengthPrefixed(session)
            out.appendLengthPrefixed(Data(protection.rawValue.utf8))
        case .exportSecret(let session, let protection, let blob, let first, let second),
            .importSecret(let session, let protection, let blob, let first, let second):
            if case .exportSecret = request { out.append(Opcode.exportSecret.rawValue) } else { out.append(Opcode.importSecret.rawValue) }
            out.appendLengthPrefixed(session)
            out.appendLengthPrefixed(Data(protection.rawValue.utf8))
            out.appendLengthPrefixed(blob)
            out.appendLengthPrefixed(first)
            out.appendLengthPrefixed(second)
        case .endBackup(let session):
            out.append(Opcode.endBackup.rawValue)
            out.appendLengthPrefixed(session)
        case .createEscrow(let passcode):
            out.append(Opcode.createEscrow.rawValue)
            out.appendOptionalSecret(passcode)
        case .unlockWithEscrow(let id, let secret):
            out.append(Opcode.unlockWithEscrow.rawValue)
            out.appendLengthPrefixed(id)
            out.appendSecret(secret)
        case .revokeEscrow(let id):
            out.append(Opcode.revokeEscrow.rawValue)
            out.appendLengthPrefixed(id)
        }
        return out
    }

    /// Parses a request.
    ///
    /// - Throws: `errSecDecode` for an unknown version or opcode, a truncated or oversized
    ///   field, an unknown class or trailing bytes.
    public static func decodeRequest(_ data: Data) throws -> EnclaveRequest {
        var reader = ByteReader(data)
        guard try reader.byte() == version else { throw KeychainError.decode("unknown enclave protocol version") }
        guard let opcode = Opcode(rawValue: try reader.byte()) else { throw KeychainError.decode("unknown enclave request") }
        let request: EnclaveRequest
        switch opcode {
        case .status: request = .status
        case .unlock: request = .unlock(passcode: try reader.secret(limit: fieldLimit))
        case .lock: request = .lock
        case .changePasscode:
            let old = try reader.optionalSecret(limit: fieldLimit)
            let new = try reader.optionalSecret(limit: fieldLimit)
            request = .changePasscode(old: old, new: new)
        case .updateSettings:
            let hasAutoLock = try reader.byte() == 1
            let autoLock = try reader.integer(UInt32.self)
            let hasErase = try reader.byte() == 1
            let erase = try reader.integer(UInt32.self)
            request = .updateSettings(autoLockSeconds: hasAutoLock ? autoLock : nil, eraseAfterFailures: hasErase ? erase : nil)
        case .indexKey: request = .indexKey
        case .metadataKey: request = .metadataKey(try protection(&reader))
        case .wrapItemKey:
            let protection = try protection(&reader)
            let itemKey = try ItemKey(bytes: try reader.secret(limit: fieldLimit))
            let associatedData = try reader.lengthPrefixed(limit: fieldLimit)
            let (access, context) = try readAccess(&reader)
            request = .wrapItemKey(protection, itemKey, associatedData: associatedData, access: access, context: context)
        case .unwrapItemKey:
            let protection = try protection(&reader)
            let wrapped = try reader.lengthPrefixed(limit: fieldLimit)
            let associatedData = try reader.lengthPrefixed(limit: fieldLimit)
            let (access, context) = try readAccess(&reader)
            request = .unwrapItemKey(protection, wrapped: wrapped, associatedData: associatedData, access: access, context: context)
        case .authenticate: request = .authenticate(try AuthenticationRequest(from: &reader))
        case .invalidateAuthentication: request = .invalidateAuthentication(context: try reader.lengthPrefixed(limit: 64))
        case .authenticationCapabilities: request = .authenticationCapabilities
        case .beginBackup:
            let password = try reader.secret(limit: fieldLimit)
            request = .beginBackup(password: password, passcode: try reader.optionalSecret(limit: fieldLimit))
        case .openBackup:
            let header = try BackupArchive(header: &reader)
            request = .openBackup(header: header, password: try reader.secret(limit: fieldLimit))
        case .backupMetadataKey:
            let session = try reader.lengthPrefixed(limit: 64)
            request = .backupMetadataKey(session: session, try protection(&reader))
        case .exportSecret, .importSecret:
            let session = try reader.lengthPrefixed(limit: 64)
            let protection = try protection(&reader)
            let blob = try reader.lengthPrefixed(limit: blobLimit)
            let first = try reader.lengthPrefixed(limit: fieldLimit)
            let second = try reader.lengthPrefixed(limit: fieldLimit)
            request = opcode == .exportSecret
                ? .exportSecret(session: session, protection, blob: blob, rowAssociatedData: first, recordAssociatedData: second)
                : .importSecret(session: session, protection, blob: blob, recordAssociatedData: first, rowAssociatedData: second)
        case .endBackup: request = .endBackup(session: try reader.lengthPrefixed(limit: 64))
        case .createEscrow: request = .createEscrow(passcode: try reader.optionalSecret(limit: fieldLimit))
        case .unlockWithEscrow:
            let id = try reader.lengthPrefixed(limit: 64)
            request = .unlockWithEscrow(id: id, secret: try reader.secret(limit: 64))
        case .revokeEscrow: request = .revokeEscrow(id: try reader.lengthPrefixed(limit: 64))
        }
        guard reader.isAtEnd else { throw KeychainError.decode("trailing bytes in enclave request") }
        return request
    }

    /// A successful response carrying `body`.
    public static func success(_ body: Data = Data()) -> Data {
        Data([version, 0]) + body
    }

    /// An error response.
    public static func failure(_ error: KeychainError) -> Data {
        var out = Data([version, 1])
        out.appendInteger(error.status)
        out.appendLengthPrefixed(Data(error.message.utf8))
        return out
    }

    /// The body of a successful response.
    ///
    /// - Throws: the enclave's error, or `errSecDecode` for a malformed response.
    public static func body(of response: Data) throws -> ByteReader {
        var reader = ByteReader(response)
        guard try reader.byte() == version else { throw KeychainError.decode("unknown enclave protocol version") }
        switch try reader.byte() {
        case 0: return reader
        case 1:
            let status = try reader.integer(Int32.self)
            let message = String(decoding: try reader.lengthPrefixed(limit: fieldLimit), as: UTF8.self)
            throw KeychainError(status: status, message: message)
        default: throw KeychainError.decode("malformed enclave response")
        }
    }



    /// An optional access control and an optional context id, each after a presence byte.
    static func appendAccess(_ access: AccessControl?, context: Data?, to out: inout Data) {
        for field in [access?.encoded, context] {
            out.append(field == nil ? 0 : 1)
            if let field { out.appendLengthPrefixed(field) }
        }
    }

    static func readAccess(_ reader: inout ByteReader) throws -> (AccessControl?, Data?) {
        let access = try reader.byte() == 1 ? try AccessControl(encoded: reader.lengthPrefixed(limit: AccessControl.maximumEncodedSize)) : nil
        let context = try reader.byte() == 1 ? try reader.lengthPrefixed(limit: 64) : nil
        return (access, context)
    }

    static func protection(_ reader: inout ByteReader) throws -> ProtectionClass {
        let name = String(decoding: try reader.lengthPrefixed(limit: 8), as: UTF8.self)
        guard let protection = ProtectionClass(rawValue: name) else { throw KeychainError.decode("unknown protection class") }
        return protection
    }
}
