import Foundation
import KeychainModel

/// `LAErrorDomain`.
public let LAErrorDomain = "com.apple.LocalAuthentication"

/// An error from LocalAuthentication, with Apple's codes.
public struct LAError: CustomNSError, Hashable, Sendable {
    /// Apple's `LAError.Code` values.
    public enum Code: Int, Sendable {
        case authenticationFailed = -1
        case userCancel = -2
        case userFallback = -3
        case systemCancel = -4
        case passcodeNotSet = -5
        case biometryNotAvailable = -6
        case biometryNotEnrolled = -7
        case biometryLockout = -8
        case appCancel = -9
        case invalidContext = -10
        case biometryNotPaired = -12
        case biometryDisconnected = -13
        case invalidDimensions = -14
        case notInteractive = -1004
        case watchNotAvailable = -11
    }

    public let code: Code

    public init(_ code: Code) {
        self.code = code
    }

    public static var errorDomain: String { LAErrorDomain }
    public var errorCode: Int { code.rawValue }

    public static let authenticationFailed = Code.authenticationFailed
    public static let userCancel = Code.userCancel
    public static let passcodeNotSet = Code.passcodeNotSet
    public static let biometryNotAvailable = Code.biometryNotAvailable
    public static let biometryNotEnrolled = Code.biometryNotEnrolled
    public static let invalidContext = Code.invalidContext
    public static let notInteractive = Code.notInteractive

    /// The LocalAuthentication error a keychain error stands for.
    init(_ error: KeychainError) {
        switch error.status {
        case OSStatusCode.userCanceled: self.init(.userCancel)
        case OSStatusCode.interactionNotAllowed: self.init(.notInteractive)
        case OSStatusCode.notAvailable: self.init(.biometryNotAvailable)
        default: self.init(.authenticationFailed)
        }
    }
}
