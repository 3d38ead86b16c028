import KeychainModel

// Result codes of Security functions, with Apple's values (Security/SecBase.h).

public let errSecSuccess: OSStatus = 0
public let errSecUnimplemented: OSStatus = -4
public let errSecDiskFull: OSStatus = -34
public let errSecIO: OSStatus = -36
public let errSecOpWr: OSStatus = -49
public let errSecParam: OSStatus = -50
public let errSecWrPerm: OSStatus = -61
public let errSecAllocate: OSStatus = -108
public let errSecUserCanceled: OSStatus = -128
public let errSecBadReq: OSStatus = -909
public let errSecInternalComponent: OSStatus = -2070
public let errSecCoreFoundationUnknown: OSStatus = -4960
public let errSecNotAvailable: OSStatus = -25291
public let errSecReadOnly: OSStatus = -25292
public let errSecAuthFailed: OSStatus = -25293
public let errSecNoSuchKeychain: OSStatus = -25294
public let errSecInvalidKeychain: OSStatus = -25295
public let errSecDuplicateKeychain: OSStatus = -25296
public let errSecDuplicateCallback: OSStatus = -25297
public let errSecInvalidCallback: OSStatus = -25298
public let errSecDuplicateItem: OSStatus = -25299
public let errSecItemNotFound: OSStatus = -25300
public let errSecBufferTooSmall: OSStatus = -25301
public let errSecDataTooLarge: OSStatus = -25302
public let errSecNoSuchAttr: OSStatus = -25303
public let errSecInvalidItemRef: OSStatus = -25304
public let errSecInvalidSearchRef: OSStatus = -25305
public let errSecNoSuchClass: OSStatus = -25306
public let errSecNoDefaultKeychain: OSStatus = -25307
public let errSecInteractionNotAllowed: OSStatus = -25308
public let errSecReadOnlyAttr: OSStatus = -25309
public let errSecWrongSecVersion: OSStatus = -25310
public let errSecKeySizeNotAllowed: OSStatus = -25311
public let errSecNoStorageModule: OSStatus = -25312
public let errSecNoCertificateModule: OSStatus = -25313
public let errSecNoPolicyModule: OSStatus = -25314
public let errSecInteractionRequired: OSStatus = -25315
public let errSecDataNotAvailable: OSStatus = -25316
public let errSecDataNotModifiable: OSStatus = -25317
public let errSecCreateChainFailed: OSStatus = -25318
public let errSecInvalidPrefsDomain: OSStatus = -25319
public let errSecInDarkWake: OSStatus = -25320
public let errSecAuthNeeded: OSStatus = -25330
public let errSecNoAccessForItem: OSStatus = -25243
public let errSecDecode: OSStatus = -26275
public let errSecMissingEntitlement: OSStatus = -34018

/// `SecCopyErrorMessageString`: Apple's message for a result code.
///
/// - Parameter reserved: unused, as on Apple platforms.
public func SecCopyErrorMessageString(_ status: OSStatus, _ reserved: UnsafeMutableRawPointer?) -> CFString? {
    NSString(string: securityFrameworkMessages[status] ?? KeychainError.appleMessage(for: status))
}
