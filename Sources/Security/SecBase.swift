import KeychainModel

// Result codes of Security functions, with Apple's values (Security/SecBase.h): the ones the
// keychain returns, defined once in KeychainModel's OSStatusCode.

public let errSecSuccess: OSStatus = OSStatusCode.success.rawValue  // 0
/// `noErr` (MacTypes.h): the success of every Apple API that returns an OSStatus.
public let noErr: OSStatus = OSStatusCode.success.rawValue
public let errSecUnimplemented: OSStatus = OSStatusCode.unimplemented.rawValue  // -4
public let errSecDiskFull: OSStatus = OSStatusCode.diskFull.rawValue  // -34
public let errSecIO: OSStatus = OSStatusCode.io.rawValue  // -36
public let errSecOpWr: OSStatus = OSStatusCode.opWr.rawValue  // -49
public let errSecParam: OSStatus = OSStatusCode.param.rawValue  // -50
public let errSecWrPerm: OSStatus = OSStatusCode.wrPerm.rawValue  // -61
public let errSecAllocate: OSStatus = OSStatusCode.allocate.rawValue  // -108
public let errSecUserCanceled: OSStatus = OSStatusCode.userCanceled.rawValue  // -128
public let errSecBadReq: OSStatus = OSStatusCode.badReq.rawValue  // -909
public let errSecInternalComponent: OSStatus = OSStatusCode.internalComponent.rawValue  // -2070
public let errSecCoreFoundationUnknown: OSStatus = OSStatusCode.coreFoundationUnknown.rawValue  // -4960
public let errSecNotAvailable: OSStatus = OSStatusCode.notAvailable.rawValue  // -25291
public let errSecReadOnly: OSStatus = OSStatusCode.readOnly.rawValue  // -25292
public let errSecAuthFailed: OSStatus = OSStatusCode.authFailed.rawValue  // -25293
public let errSecNoSuchKeychain: OSStatus = OSStatusCode.noSuchKeychain.rawValue  // -25294
public let errSecInvalidKeychain: OSStatus = OSStatusCode.invalidKeychain.rawValue  // -25295
public let errSecDuplicateKeychain: OSStatus = OSStatusCode.duplicateKeychain.rawValue  // -25296
public let errSecDuplicateCallback: OSStatus = OSStatusCode.duplicateCallback.rawValue  // -25297
public let errSecInvalidCallback: OSStatus = OSStatusCode.invalidCallback.rawValue  // -25298
public let errSecDuplicateItem: OSStatus = OSStatusCode.duplicateItem.rawValue  // -25299
public let errSecItemNotFound: OSStatus = OSStatusCode.itemNotFound.rawValue  // -25300
public let errSecBufferTooSmall: OSStatus = OSStatusCode.bufferTooSmall.rawValue  // -25301
public let errSecDataTooLarge: OSStatus = OSStatusCode.dataTooLarge.rawValue  // -25302
public let errSecNoSuchAttr: OSStatus = OSStatusCode.noSuchAttr.rawValue  // -25303
public let errSecInvalidItemRef: OSStatus = OSStatusCode.invalidItemRef.rawValue  // -25304
public let errSecInvalidSearchRef: OSStatus = OSStatusCode.invalidSearchRef.rawValue  // -25305
public let errSecNoSuchClass: OSStatus = OSStatusCode.noSuchClass.rawValue  // -25306
public let errSecNoDefaultKeychain: OSStatus = OSStatusCode.noDefaultKeychain.rawValue  // -25307
public let errSecInteractionNotAllowed: OSStatus = OSStatusCode.interactionNotAllowed.rawValue  // -25308
public let errSecReadOnlyAttr: OSStatus = OSStatusCode.readOnlyAttr.rawValue  // -25309
public let errSecWrongSecVersion: OSStatus = OSStatusCode.wrongSecVersion.rawValue  // -25310
public let errSecKeySizeNotAllowed: OSStatus = OSStatusCode.keySizeNotAllowed.rawValue  // -25311
public let errSecNoStorageModule: OSStatus = OSStatusCode.noStorageModule.rawValue  // -25312
public let errSecNoCertificateModule: OSStatus = OSStatusCode.noCertificateModule.rawValue  // -25313
public let errSecNoPolicyModule: OSStatus = OSStatusCode.noPolicyModule.rawValue  // -25314
public let errSecInteractionRequired: OSStatus = OSStatusCode.interactionRequired.rawValue  // -25315
public let errSecDataNotAvailable: OSStatus = OSStatusCode.dataNotAvailable.rawValue  // -25316
public let errSecDataNotModifiable: OSStatus = OSStatusCode.dataNotModifiable.rawValue  // -25317
public let errSecCreateChainFailed: OSStatus = OSStatusCode.createChainFailed.rawValue  // -25318
public let errSecInvalidPrefsDomain: OSStatus = OSStatusCode.invalidPrefsDomain.rawValue  // -25319
public let errSecInDarkWake: OSStatus = OSStatusCode.inDarkWake.rawValue  // -25320
public let errSecAuthNeeded: OSStatus = OSStatusCode.authNeeded.rawValue  // -25330
public let errSecNoAccessForItem: OSStatus = OSStatusCode.noAccessForItem.rawValue  // -25243
public let errSecDecode: OSStatus = OSStatusCode.decode.rawValue  // -26275
public let errSecMissingEntitlement: OSStatus = OSStatusCode.missingEntitlement.rawValue  // -34018

/// `SecCopyErrorMessageString`: Apple's message for a result code.
///
/// - Parameters:
///   - status: the result code, an `errSec…` value.
///   - reserved: unused, as on Apple platforms.
public func SecCopyErrorMessageString(_ status: OSStatus, _ reserved: UnsafeMutableRawPointer?) -> CFString? {
    NSString(string: securityFrameworkMessages[status] ?? KeychainError.appleMessage(for: status))
}
