public import FoundationEssentials

/// A request from a client to securityd.
public enum ServiceRequest: Sendable {
    case add([String: KeychainValue])
    case copyMatching([String: KeychainValue])
    case update([String: KeychainValue], attributes: [String: KeychainValue])
    case delete([String: KeychainValue])
    /// The keychain's lock state and settings.
    case keychainStatus
    case unlock(passcode: SecretBytes)
    case lock
    case changePasscode(old: SecretBytes?, new: SecretBytes?)
    case updateSettings(autoLockSeconds: UInt32?)
    /// A developer certificate for `team` and its public key (P-256, raw), issued by the
    /// keychain's local developer root. Result: a dictionary of "certificate" and "root" (DER).
    case issueDeveloperCertificate(team: String, applicationGroups: [String], publicKey: Data)
    /// A request made with the user's presence: the keychain passcode, which the enclave
    /// verifies (and throttles) before the request runs. One level deep.
    indirect case withUserPresence(passcode: SecretBytes, ServiceRequest)
    /// Evidence of the user's presence for an authentication context, checked by the enclave.
    case authenticate(AuthenticationRequest)
    /// Forgets an authentication context (`LAContext.invalidate`).
    case invalidateAuthentication(context: Data)
    /// What the enclave can check (``AuthenticationCapabilities``, encoded as data).
    case authenticationCapabilities
    /// Writes a backup of the keychain to `path` (absolute), under `password`. Result: a
    /// dictionary of counts (backed up, and left out by reason).
    case createBackup(path: String, password: SecretBytes)
    /// Restores the backup at `path` (absolute) into the keychain. Result: a dictionary of
    /// counts (restored, replaced, kept, left out by reason) and whether this device made it.
    case restoreBackup(path: String, password: SecretBytes)
    /// An escrow keybag of the class C keys for a designated agent. Result: a dictionary
    /// of "id" and "secret" (data), which the agent keeps.
    case createEscrow
    /// Makes class C available with an escrow keybag's secret (any caller: the secret is
    /// the authority).
    case unlockWithEscrow(id: Data, secret: SecretBytes)
    /// Revokes an escrow keybag.
    case revokeEscrow(id: Data)
}

/// securityd's answer: an OSStatus, a message when it is not 0, and a result.
public struct ServiceResponse: Sendable {
    public var status: Int32
    public var message: String
    public var result: KeychainValue?

    public init(status: Int32 = OSStatusCode.success, message: String = "", result: KeychainValue? = nil) {
        self.status = status
        self.message = message
        self.result = result
    }

    /// An error response; the error's details travel as the result.
    public init(error: KeychainError) {
        self.init(status: error.status, message: error.message, result: error.details)
    }

    /// The result, or the error the status stands for (with the result as its details).
    public func get() throws -> KeychainValue? {
        guard status == OSStatusCode.success else { throw KeychainError(status: status, message: message, details: result) }
        return result
    }
}

/// The wire format between clients and securityd, inside ``FrameIO`` frames.
///
/// Request: protocol version, opcode, fields. Response: version, OSStatus (i32), message,
/// presence byte and result. Old and new opcodes live side by side; a version this side
/// does not know is refused with errSecDecode before anything else is read.
public enum ServiceWire {
    public static let version: UInt8 = 1
    /// The largest frame either side accepts: a 1 MiB secret and its attributes.
    public static let maximumFrameSize = 2 << 20
    /// The longest passcode a request may carry.
    static let passcodeLimit = 4096

    enum Opcode: UInt8 {
        case add = 1, copyMatching, update, delete
        case keychainStatus = 10, unlock, lock, changePasscode, updateSettings
        case issueDeveloperCertificate = 20
        case withUserPresence = 30
        case authenticate = 40, invalidateAuthentication, authenticationCapabilities
        case createBackup = 50, restoreBackup
        case createEscrow = 60, unlockWithEscrow, revokeEscrow
    }

    public static func encode(_ request: ServiceRequest) -> Data {
        var out = Data([version])
        switch request {
        case .add(let query):
            out.append(Opcode.add.rawValue)
            KeychainValue.dictionary(query).encode(to: &out)
        case .copyMatching(let query):
            out.append(Opcode.copyMatching.rawValue)
            KeychainValue.dictionary(query).encode(to: &out)
        case .update(let query, let attributes):
            out.append(Opcode.update.rawValue)
            KeychainValue.dictionary(query).encode(to: &out)
            KeychainValue.dictionary(attributes).encode(to: &out)
        case .delete(let query):
            out.append(Opcode.delete.rawValue)
            KeychainValue.dictionary(query).encode(to: &out)
        case .keychainStatus:
            out.append(Opcode.keychainStatus.rawValue)
        case .unlock(let passcode):
            out.append(Opcode.unlock.rawValue)
            out.appendSecret(passcode)
        case .lock:
            out.append(Opcode.lock.rawValue)
        case .changePasscode(let old, let new):
            out.append(Opcode.changePasscode.rawValue)
            out.appendOptionalSecret(old)
            out.appendOptionalSecret(new)
        case .updateSettings(let autoLock):
            out.append(Opcode.updateSettings.rawValue)
            out.append(autoLock == nil ? 0 : 1)
            out.appendInteger(autoLock ?? 0)
        case .issueDeveloperCertificate(let team, let groups, let publicKey):
            out.append(Opcode.issueDeveloperCertificate.rawValue)
            out.appendLengthPrefixed(Data(team.utf8))
            KeychainValue.array(groups.map { .string($0) }).encode(to: &out)
            out.appendLengthPrefixed(publicKey)
        case .withUserPresence(let passcode, let inner):
            out.append(Opcode.withUserPresence.rawValue)
            out.appendSecret(passcode)
            out.append(encode(inner).dropFirst())  // the inner request without its version byte
        case .authenticate(let authentication):
            out.append(Opcode.authenticate.rawValue)
            authentication.encode(to: &out)
        case .invalidateAuthentication(let context):
            out.append(Opcode.invalidateAuthentication.rawValue)
            out.appendLengthPrefixed(context)
        case .authenticationCapabilities:
            out.append(Opcode.authenticationCapabilities.rawValue)
        case .createBackup(let path, let password), .restoreBackup(let path, let password):
            if case .createBackup = request { out.append(Opcode.createBackup.rawValue) } else { out.append(Opcode.restoreBackup.rawValue) }
            out.appendLengthPrefixed(Data(path.utf8))
            out.appendSecret(password)
        case .createEscrow:
            out.append(Opcode.createEscrow.rawValue)
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
    /// - Throws: `errSecDecode` for an unknown version or opcode, a malformed value, a
    ///   query that is not a dictionary, or trailing bytes.
    public static func decodeRequest(_ data: Data) throws -> ServiceRequest {
        var reader = ByteReader(data)
        guard try reader.byte() == version else { throw KeychainError.decode("unknown protocol version") }
        let request = try decodeRequestBody(&reader, nested: false)
        guard reader.isAtEnd else { throw KeychainError.decode("trailing bytes in request") }
        return request
    }

    private static func decodeRequestBody(_ reader: inout ByteReader, nested: Bool) throws -> ServiceRequest {
        guard let opcode = Opcode(rawValue: try reader.byte()) else { throw KeychainError.decode("unknown request") }
        let request: ServiceRequest
        switch opcode {
        case .add: request = .add(try dictionary(&reader))
        case .copyMatching: request = .copyMatching(try dictionary(&reader))
        case .update: request = .update(try dictionary(&reader), attributes: try dictionary(&reader))
        case .delete: request = .delete(try dictionary(&reader))
        case .keychainStatus: request = .keychainStatus
        case .unlock: request = .unlock(passcode: try reader.secret(limit: passcodeLimit))
        case .lock: request = .lock
        case .changePasscode:
            let old = try reader.optionalSecret(limit: passcodeLimit)
            let new = try reader.optionalSecret(limit: passcodeLimit)
            request = .changePasscode(old: old, new: new)
        case .updateSettings:
            let present = try reader.byte() == 1
            let value = try reader.integer(UInt32.self)
            request = .updateSettings(autoLockSeconds: present ? value : nil)
        case .issueDeveloperCertificate:
            let team = String(decoding: try reader.lengthPrefixed(limit: 64), as: UTF8.self)
            guard case .array(let values) = try KeychainValue.decode(from: &reader) else {
                throw KeychainError.decode("application groups are an array")
            }
            let groups = try values.map {
                guard case .string(let group) = $0 else { throw KeychainError.decode("an application group is a string") }
                return group
            }
            request = .issueDeveloperCertificate(team: team, applicationGroups: groups, publicKey: try reader.lengthPrefixed(limit: 256))
        case .withUserPresence:
            guard !nested else { throw KeychainError.decode("user presence wraps one request, not another wrapper") }
            let passcode = try reader.secret(limit: passcodeLimit)
            request = .withUserPresence(passcode: passcode, try decodeRequestBody(&reader, nested: true))
        case .authenticate: request = .authenticate(try AuthenticationRequest(from: &reader))
        case .invalidateAuthentication: request = .invalidateAuthentication(context: try reader.lengthPrefixed(limit: 64))
        case .authenticationCapabilities: request = .authenticationCapabilities
        case .createBackup, .restoreBackup:
            let path = String(decoding: try reader.lengthPrefixed(limit: 4096), as: UTF8.self)
            let password = try reader.secret(limit: passcodeLimit)
            request = opcode == .createBackup ? .createBackup(path: path, password: password) : .restoreBackup(path: path, password: password)
        case .createEscrow: request = .createEscrow
        case .unlockWithEscrow:
            let id = try reader.lengthPrefixed(limit: 64)
            request = .unlockWithEscrow(id: id, secret: try reader.secret(limit: 64))
        case .revokeEscrow: request = .revokeEscrow(id: try reader.lengthPrefixed(limit: 64))
        }
        return request
    }

    public static func encode(_ response: ServiceResponse) -> Data {
        var out = Data([version])
        out.appendInteger(response.status)
        out.appendLengthPrefixed(Data(response.message.utf8))
        out.append(response.result == nil ? 0 : 1)
        response.result?.encode(to: &out)
        return out
    }

    /// Parses a response.
    ///
    /// - Throws: `errSecDecode` for a malformed response.
    public static func decodeResponse(_ data: Data) throws -> ServiceResponse {
        var reader = ByteReader(data)
        guard try reader.byte() == version else { throw KeychainError.decode("unknown protocol version") }
        let status = try reader.integer(Int32.self)
        let message = String(decoding: try reader.lengthPrefixed(limit: 4096), as: UTF8.self)
        let result = try reader.byte() == 1 ? try KeychainValue.decode(from: &reader) : nil
        guard reader.isAtEnd else { throw KeychainError.decode("trailing bytes in response") }
        return ServiceResponse(status: status, message: message, result: result)
    }

    static func dictionary(_ reader: inout ByteReader) throws -> [String: KeychainValue] {
        guard case .dictionary(let entries) = try KeychainValue.decode(from: &reader) else {
            throw KeychainError.decode("a query is a dictionary")
        }
        return entries
    }


}
