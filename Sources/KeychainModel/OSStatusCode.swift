/// An `OSStatus` the keychain returns: Apple's value, with the message
/// `SecCopyErrorMessageString` gives for it.
///
/// Inside Trousseau statuses travel as this type, so a status cannot be confused with a
/// count or a length; the `Security` module hands callers the bare `OSStatus` (``rawValue``).
public struct OSStatusCode: RawRepresentable, Codable, Sendable, Hashable, CustomStringConvertible {
    /// Apple's `OSStatus` value, for example -25300 for `errSecItemNotFound`.
    public let rawValue: Int32

    public init(rawValue: Int32) {
        self.rawValue = rawValue
    }

    init(_ rawValue: Int32) {
        self.rawValue = rawValue
    }

    /// Apple's message for this status, as `SecCopyErrorMessageString` returns it.
    public var message: String { KeychainError.appleMessage(for: self) }

    public var description: String { String(rawValue) }

    public static let success = OSStatusCode(0)
    public static let unimplemented = OSStatusCode(-4)
    public static let diskFull = OSStatusCode(-34)
    public static let io = OSStatusCode(-36)
    public static let opWr = OSStatusCode(-49)
    public static let param = OSStatusCode(-50)
    public static let wrPerm = OSStatusCode(-61)
    public static let allocate = OSStatusCode(-108)
    public static let userCanceled = OSStatusCode(-128)
    public static let badReq = OSStatusCode(-909)
    public static let internalComponent = OSStatusCode(-2070)
    public static let coreFoundationUnknown = OSStatusCode(-4960)
    public static let notAvailable = OSStatusCode(-25291)
    public static let readOnly = OSStatusCode(-25292)
    public static let authFailed = OSStatusCode(-25293)
    public static let noSuchKeychain = OSStatusCode(-25294)
    public static let invalidKeychain = OSStatusCode(-25295)
    public static let duplicateKeychain = OSStatusCode(-25296)
    public static let duplicateCallback = OSStatusCode(-25297)
    public static let invalidCallback = OSStatusCode(-25298)
    public static let duplicateItem = OSStatusCode(-25299)
    public static let itemNotFound = OSStatusCode(-25300)
    public static let bufferTooSmall = OSStatusCode(-25301)
    public static let dataTooLarge = OSStatusCode(-25302)
    public static let noSuchAttr = OSStatusCode(-25303)
    public static let invalidItemRef = OSStatusCode(-25304)
    public static let invalidSearchRef = OSStatusCode(-25305)
    public static let noSuchClass = OSStatusCode(-25306)
    public static let noDefaultKeychain = OSStatusCode(-25307)
    public static let interactionNotAllowed = OSStatusCode(-25308)
    public static let readOnlyAttr = OSStatusCode(-25309)
    public static let wrongSecVersion = OSStatusCode(-25310)
    public static let keySizeNotAllowed = OSStatusCode(-25311)
    public static let noStorageModule = OSStatusCode(-25312)
    public static let noCertificateModule = OSStatusCode(-25313)
    public static let noPolicyModule = OSStatusCode(-25314)
    public static let interactionRequired = OSStatusCode(-25315)
    public static let dataNotAvailable = OSStatusCode(-25316)
    public static let dataNotModifiable = OSStatusCode(-25317)
    public static let createChainFailed = OSStatusCode(-25318)
    public static let invalidPrefsDomain = OSStatusCode(-25319)
    public static let inDarkWake = OSStatusCode(-25320)
    public static let authNeeded = OSStatusCode(-25330)
    public static let noAccessForItem = OSStatusCode(-25243)
    public static let decode = OSStatusCode(-26275)
    public static let missingEntitlement = OSStatusCode(-34018)
    public static let verifyFailed = OSStatusCode(-67808)
    public static let invalidSignature = OSStatusCode(-67688)
    public static let hostNameMismatch = OSStatusCode(-67602)
    public static let invalidExtendedKeyUsage = OSStatusCode(-67609)
    public static let unsupportedKeySize = OSStatusCode(-67735)
    public static let certificateExpired = OSStatusCode(-67818)
    public static let notTrusted = OSStatusCode(-67843)
    public static let trustSettingDeny = OSStatusCode(-67654)
    public static let unknownFormat = OSStatusCode(-25257)
    public static let noTrustSettings = OSStatusCode(-25263)
    public static let pkcs12VerifyFailure = OSStatusCode(-25264)
    public static let unsupportedKeyFormat = OSStatusCode(-67734)
    /// `errAuthorizationInteractionNotAllowed` (Authorization.h): what macOS's trust
    /// commands report when the administrator's settings cannot be authorized.
    public static let authorizationInteractionNotAllowed = OSStatusCode(-60007)
    /// `errSecInternal` (SecBasePriv.h: private in Apple's SDK, but some calls return it).
    public static let securityInternal = OSStatusCode(-26276)
}

extension KeychainError {
    /// Apple's message for `status`, as `SecCopyErrorMessageString` returns it.
    public static func appleMessage(for status: OSStatusCode) -> String {
        switch status {
        case OSStatusCode.success: "No error."
        case OSStatusCode.unimplemented: "Function or operation not implemented."
        case OSStatusCode.diskFull: "The disk is full."
        case OSStatusCode.io: "I/O error."
        case OSStatusCode.opWr: "The file is already open with write permission."
        case OSStatusCode.param: "One or more parameters passed to a function were not valid."
        case OSStatusCode.wrPerm: "A write permissions error occurred."
        case OSStatusCode.allocate: "Failed to allocate memory."
        case OSStatusCode.userCanceled: "User canceled the operation."
        case OSStatusCode.badReq: "Bad parameter or invalid state for operation."
        case OSStatusCode.internalComponent: "An internal component failed."
        case OSStatusCode.coreFoundationUnknown: "An unknown Core Foundation error occurred."
        case OSStatusCode.notAvailable: "No keychain is available. You may need to restart your computer."
        case OSStatusCode.readOnly: "This keychain cannot be modified."
        case OSStatusCode.authFailed: "The user name or passphrase you entered is not correct."
        case OSStatusCode.noSuchKeychain: "The specified keychain could not be found."
        case OSStatusCode.invalidKeychain: "The specified keychain is not a valid keychain file."
        case OSStatusCode.duplicateKeychain: "A keychain with the same name already exists."
        case OSStatusCode.duplicateCallback: "The specified callback function is already installed."
        case OSStatusCode.invalidCallback: "The specified callback function is not valid."
        case OSStatusCode.duplicateItem: "The specified item already exists in the keychain."
        case OSStatusCode.itemNotFound: "The specified item could not be found in the keychain."
        case OSStatusCode.bufferTooSmall: "There is not enough memory available to use the specified item."
        case OSStatusCode.dataTooLarge: "This item contains information which is too large or in a format that cannot be displayed."
        case OSStatusCode.noSuchAttr: "The specified attribute does not exist."
        case OSStatusCode.invalidItemRef: "The specified item is no longer valid. It may have been deleted from the keychain."
        case OSStatusCode.invalidSearchRef: "Unable to search the current keychain."
        case OSStatusCode.noSuchClass: "The specified item does not appear to be a valid keychain item."
        case OSStatusCode.noDefaultKeychain: "A default keychain could not be found."
        case OSStatusCode.interactionNotAllowed: "User interaction is not allowed."
        case OSStatusCode.readOnlyAttr: "The specified attribute could not be modified."
        case OSStatusCode.wrongSecVersion: "This keychain was created by a different version of the system software and cannot be opened."
        case OSStatusCode.keySizeNotAllowed: "This item specifies a key size which is too large or too small."
        case OSStatusCode.noStorageModule: "A required component (data storage module) could not be loaded. You may need to restart your computer."
        case OSStatusCode.noCertificateModule: "A required component (certificate module) could not be loaded. You may need to restart your computer."
        case OSStatusCode.noPolicyModule: "A required component (policy module) could not be loaded. You may need to restart your computer."
        case OSStatusCode.interactionRequired: "User interaction is required, but is currently not allowed."
        case OSStatusCode.dataNotAvailable: "The contents of this item cannot be retrieved."
        case OSStatusCode.dataNotModifiable: "The contents of this item cannot be modified."
        case OSStatusCode.createChainFailed: "One or more certificates required to validate this certificate cannot be found."
        case OSStatusCode.invalidPrefsDomain: "The specified preferences domain is not valid."
        case OSStatusCode.inDarkWake: "In dark wake, no UI possible"
        case OSStatusCode.authNeeded: "Auth is needed before the requested action can be performed."
        case OSStatusCode.noAccessForItem: "The specified item has no access control."
        case OSStatusCode.decode: "Unable to decode the provided data."
        case OSStatusCode.missingEntitlement: "A required entitlement isn't present."
        case OSStatusCode.verifyFailed: "A cryptographic verification failure has occurred."
        case OSStatusCode.invalidSignature: "An invalid signature was encountered."
        case OSStatusCode.hostNameMismatch: "A host name mismatch has occurred."
        case OSStatusCode.invalidExtendedKeyUsage: "The extended key usage is not valid."
        case OSStatusCode.unsupportedKeySize: "The key size is not supported."
        case OSStatusCode.certificateExpired: "An expired certificate was detected."
        case OSStatusCode.notTrusted: "The trust policy was not trusted."
        case OSStatusCode.trustSettingDeny: "The trust setting for this policy was set to Deny."
        case OSStatusCode.unknownFormat: "Unknown format in import."
        case OSStatusCode.noTrustSettings: "No Trust Settings were found."
        case OSStatusCode.pkcs12VerifyFailure: "MAC verification failed during PKCS12 import (wrong password?)"
        case OSStatusCode.unsupportedKeyFormat: "The key header format is not supported."
        case OSStatusCode.authorizationInteractionNotAllowed: "The authorization was denied since no user interaction was possible."
        case OSStatusCode.securityInternal: "An internal error occurred in the Security framework."
        default: "OSStatus \(status.rawValue)"
        }
    }
}

extension KeychainError {
    /// Apple's message for a bare `OSStatus`, as `SecCopyErrorMessageString` returns it.
    public static func appleMessage(for status: Int32) -> String {
        appleMessage(for: OSStatusCode(rawValue: status))
    }
}
