/// An error from the keychain, carrying Apple's `OSStatus` code.
///
/// Errors compare equal on ``status`` alone, so `catch KeychainError.itemNotFound` and
/// `#expect(throws: KeychainError.duplicateItem)` match whatever detail the message holds.
/// The message never contains secret values, accounts or services.
public struct KeychainError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Apple's `OSStatus`, for example ``OSStatusCode/itemNotFound`` (-25300).
    public let status: OSStatusCode
    /// A human-readable explanation. Defaults to Apple's message for ``status``.
    public let message: String
    /// What the caller needs to go on, for statuses that ask something of it: for
    /// errSecAuthNeeded, the ``AuthenticationRequirement``.
    public let details: KeychainValue?

    /// Creates an error with `status` and an optional detail message.
    ///
    /// - Parameters:
    ///   - status: Apple's `OSStatus`.
    ///   - message: a more specific message; when `nil`, Apple's message for the status.
    public init(status: OSStatusCode, message: String? = nil, details: KeychainValue? = nil) {
        self.status = status
        self.message = message ?? KeychainError.appleMessage(for: status)
        self.details = details
    }

    public static func == (lhs: KeychainError, rhs: KeychainError) -> Bool {
        lhs.status == rhs.status
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(status)
    }

    public var description: String {
        "\(message) (OSStatus \(status.rawValue))"
    }
}

extension KeychainError {
    public static let unimplemented = KeychainError(status: OSStatusCode.unimplemented)
    public static let diskFull = KeychainError(status: OSStatusCode.diskFull)
    public static let io = KeychainError(status: OSStatusCode.io)
    public static let param = KeychainError(status: OSStatusCode.param)
    public static let allocate = KeychainError(status: OSStatusCode.allocate)
    public static let userCanceled = KeychainError(status: OSStatusCode.userCanceled)
    public static let notAvailable = KeychainError(status: OSStatusCode.notAvailable)
    public static let readOnly = KeychainError(status: OSStatusCode.readOnly)
    public static let authFailed = KeychainError(status: OSStatusCode.authFailed)
    public static let noSuchKeychain = KeychainError(status: OSStatusCode.noSuchKeychain)
    public static let duplicateItem = KeychainError(status: OSStatusCode.duplicateItem)
    public static let itemNotFound = KeychainError(status: OSStatusCode.itemNotFound)
    public static let dataTooLarge = KeychainError(status: OSStatusCode.dataTooLarge)
    public static let noSuchAttribute = KeychainError(status: OSStatusCode.noSuchAttr)
    public static let noSuchClass = KeychainError(status: OSStatusCode.noSuchClass)
    public static let interactionNotAllowed = KeychainError(status: OSStatusCode.interactionNotAllowed)
    public static let authNeeded = KeychainError(status: OSStatusCode.authNeeded)
    public static let decode = KeychainError(status: OSStatusCode.decode)
    public static let missingEntitlement = KeychainError(status: OSStatusCode.missingEntitlement)
    public static let internalComponent = KeychainError(status: OSStatusCode.internalComponent)

    /// `errSecParam` with a specific reason.
    public static func param(_ reason: String) -> KeychainError {
        KeychainError(status: OSStatusCode.param, message: reason)
    }

    /// `errSecDecode` with a specific reason.
    public static func decode(_ reason: String) -> KeychainError {
        KeychainError(status: OSStatusCode.decode, message: reason)
    }
}
