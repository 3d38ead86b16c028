public import FoundationEssentials

/// What the user must show before an item's secret is released: sent with
/// errSecAuthNeeded (as the error's details) so that the caller can ask the user and try again.
public struct AuthenticationRequirement: Sendable, Hashable {
    public var factors: [AccessControl.Factor]
    public var requiredFactors: Int
    public var applicationPassword: Bool
    /// The item operation a proof made for this requirement is bound to.
    public var operation: Data

    public init(_ access: AccessControl, operation: Data) {
        factors = access.factors
        requiredFactors = access.requiredFactors
        applicationPassword = access.requiresApplicationPassword
        self.operation = operation
    }

    /// As an error's details.
    public var details: KeychainValue {
        .dictionary([
            "factors": .array(factors.map { .string($0.rawValue) }),
            "required": .number(Int64(requiredFactors)),
            "applicationPassword": .bool(applicationPassword),
            "operation": .data(operation),
        ])
    }

    /// Reads the details of an errSecAuthNeeded error.
    public init?(details: KeychainValue?) {
        guard case .dictionary(let fields)? = details,
            case .array(let names)? = fields["factors"],
            case .number(let required)? = fields["required"],
            case .bool(let password)? = fields["applicationPassword"],
            case .data(let operation)? = fields["operation"]
        else { return nil }
        factors = names.compactMap { $0.stringValue.flatMap(AccessControl.Factor.init(rawValue:)) }
        requiredFactors = Int(clamping: required)
        applicationPassword = password
        self.operation = operation
    }
}

/// Evidence of the user's presence, given to the enclave for an authentication context.
public enum AuthenticationEvidence: Sendable {
    /// The keychain passcode, which the enclave verifies (and throttles).
    case passcode(SecretBytes)
    /// A scan on the biometric sensor the enclave trusts; the reason is shown to the user.
    case biometry(reason: String)
    /// The application password of items that require one (`LAContext.setCredential`);
    /// nil forgets it.
    case applicationPassword(SecretBytes?)
}

/// One authentication for a context: the evidence, the operation it is for (nil: the next
/// operation), and how long it may be reused for other operations (0: not at all).
public struct AuthenticationRequest: Sendable {
    public var context: Data
    public var evidence: AuthenticationEvidence
    public var operation: Data?
    public var reuseSeconds: UInt32

    public init(context: Data, evidence: AuthenticationEvidence, operation: Data? = nil, reuseSeconds: UInt32 = 0) {
        self.context = context
        self.evidence = evidence
        self.operation = operation
        self.reuseSeconds = reuseSeconds
    }

    /// The longest reuse window (Apple's `LATouchIDAuthenticationMaximumAllowableReuseDuration`).
    public static let maximumReuseSeconds: UInt32 = 300
    static let secretLimit = 4096
    static let reasonLimit = 1024

    /// Appends the wire form: context, evidence kind and value, operation, reuse.
    public func encode(to out: inout Data) {
        out.appendLengthPrefixed(context)
        switch evidence {
        case .passcode(let passcode):
            out.append(1)
            out.appendSecret(passcode)
        case .biometry(let reason):
            out.append(2)
            out.appendLengthPrefixed(Data(reason.utf8))
        case .applicationPassword(let password):
            out.append(3)
            out.appendOptionalSecret(password)
        }
        out.append(operation == nil ? 0 : 1)
        out.appendLengthPrefixed(operation ?? Data())
        out.appendInteger(reuseSeconds)
    }

    /// Reads what ``encode(to:)`` wrote.
    ///
    /// - Throws: `errSecDecode` for malformed fields.
    public init(from reader: inout ByteReader) throws {
        context = try reader.lengthPrefixed(limit: 64)
        switch try reader.byte() {
        case 1: evidence = .passcode(try reader.secret(limit: Self.secretLimit))
        case 2: evidence = .biometry(reason: String(decoding: try reader.lengthPrefixed(limit: Self.reasonLimit), as: UTF8.self))
        case 3: evidence = .applicationPassword(try reader.optionalSecret(limit: Self.secretLimit))
        default: throw KeychainError.decode("unknown authentication evidence")
        }
        let hasOperation = try reader.byte() == 1
        let operation = try reader.lengthPrefixed(limit: 64)
        self.operation = hasOperation ? operation : nil
        reuseSeconds = try reader.integer(UInt32.self)
    }
}

/// What the enclave can check, for `LAContext.canEvaluatePolicy`.
public struct AuthenticationCapabilities: Sendable, Hashable {
    public var passcodeSet: Bool
    /// A biometric sensor the enclave trusts is present.
    public var biometryAvailable: Bool
    /// At least one finger is enrolled on it.
    public var biometryEnrolled: Bool
    /// A digest of the enrollment (`evaluatedPolicyDomainState`); changes when it does.
    public var enrollmentState: Data

    public init(passcodeSet: Bool, biometryAvailable: Bool, biometryEnrolled: Bool, enrollmentState: Data) {
        self.passcodeSet = passcodeSet
        self.biometryAvailable = biometryAvailable
        self.biometryEnrolled = biometryEnrolled
        self.enrollmentState = enrollmentState
    }

    public func encode(to out: inout Data) {
        out.append(passcodeSet ? 1 : 0)
        out.append(biometryAvailable ? 1 : 0)
        out.append(biometryEnrolled ? 1 : 0)
        out.appendLengthPrefixed(enrollmentState)
    }

    public init(from reader: inout ByteReader) throws {
        passcodeSet = try reader.byte() == 1
        biometryAvailable = try reader.byte() == 1
        biometryEnrolled = try reader.byte() == 1
        enrollmentState = try reader.lengthPrefixed(limit: 64)
    }
}
