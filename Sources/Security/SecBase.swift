import KeychainModel

// Result codes of Security functions, with Apple's values (Security/SecBase.h): the ones the
// keychain returns, defined once in KeychainModel's OSStatusCode.

public let errSecSuccess: OSStatus = OSStatusCode.success  // 0
public let errSecUnimplemented: OSStatus = OSStatusCode.unimplemented  // -4
public let errSecDiskFull: OSStatus = OSStatusCode.diskFull  // -34
public let errSecIO: OSStatus = OSStatusCode.io  // -36
public let errSecOpWr: OSStatus = OSStatusCode.opWr  // -49
public let errSecParam: OSStatus = OSStatusCode.param  // -50
public let errSecWrPerm: OSStatus = OSStatusCode.wrPerm  // -61
public let errSecAllocate: OSStatus = OSStatusCode.allocate  // -108
public let errSecUserCanceled: OSStatus = OSStatusCode.userCanceled  // -128
public let errSecBadReq: OSStatus = OSStatusCode.badReq  // -909
public let errSecInternalComponent: OSStatus = OSStatusCode.internalComponent  // -2070
public let errSecCoreFoundationUnknown: OSStatus = OSStatusCode.coreFoundationUnknown  // -4960
public let errSecNotAvailable: OSStatus = OSStatusCode.notAvailable  // -25291
public let errSecReadOnly: OSStatus = OSStatusCode.readOnly  // -25292
public let errSecAuthFailed: OSStatus = OSStatusCode.authFailed  // -25293
public let errSecNoSuchKeychain: OSStatus = OSStatusCode.noSuchKeychain  // -25294
public let errSecInvalidKeychain: OSStatus = OSStatusCode.invalidKeychain  // -25295
public let errSecDuplicateKeychain: OSStatus = OSStatusCode.duplicateKeychain  // -25296
public let errSecDuplicateCallback: OSStatus = OSStatusCode.duplicateCallback  // -25297
public let errSecInvalidCallback: OSStatus = OSStatusCode.invalidCallback  // -25298
public let errSecDuplicateItem: OSStatus = OSStatusCode.duplicateItem  // -25299
public let errSecItemNotFound: OSStatus = OSStatusCode.itemNotFound  // -25300
public let errSecBufferTooSmall: OSStatus = OSStatusCode.bufferTooSmall  // -25301
public let errSecDataTooLarge: OSStatus = OSStatusCode.dataTooLarge  // -25302
public let errSecNoSuchAttr: OSStatus = OSStatusCode.noSuchAttr  // -25303
public let errSecInvalidItemRef: OSStatus = OSStatusCode.invalidItemRef  // -25304
public let errSecInvalidSearchRef: OSStatus = OSStatusCode.invalidSearchRef  // -25305
public let errSecNoSuchClass: OSStatus = OSStatusCode.noSuchClass  // -25306
public let errSecNoDefaultKeychain: OSStatus = OSStatusCode.noDefaultKeychain  // -25307
public let errSecInteractionNotAllowed: OSStatus = OSStatusCode.interactionNotAllowed  // -25308
public let errSecReadOnlyAttr: OSStatus = OSStatusCode.readOnlyAttr  // -25309
public let errSecWrongSecVersion: OSStatus = OSStatusCode.wrongSecVersion  // -25310
public let errSecKeySizeNotAllowed: OSStatus = OSStatusCode.keySizeNotAllowed  // -25311
public let errSecNoStorageModule: OSStatus = OSStatusCode.noStorageModule  // -25312
public let errSecNoCertificateModule: OSStatus = OSStatusCode.noCertificateModule  // -25313
public let errSecNoPolicyModule: OSStatus = OSStatusCode.noPolicyModule  // -25314
public let errSecInteractionRequired: OSStatus = OSStatusCode.interactionRequired  // -25315
public let errSecDataNotAvailable: OSStatus = OSStatusCode.dataNotAvailable  // -25316
public let errSecDataNotModifiable: OSStatus = OSStatusCode.dataNotModifiable  // -25317
public let errSecCreateChainFailed: OSStatus = OSStatusCode.createChainFailed  // -25318
public let errSecInvalidPrefsDomain: OSStatus = OSStatusCode.invalidPrefsDomain  // -25319
public let errSecInDarkWake: OSStatus = OSStatusCode.inDarkWake  // -25320
public let errSecAuthNeeded: OSStatus = OSStatusCode.authNeeded  // -25330
public let errSecNoAccessForItem: OSStatus = OSStatusCode.noAccessForItem  // -25243
public let errSecDecode: OSStatus = OSStatusCode.decode  // -26275
public let errSecMissingEntitlement: OSStatus = OSStatusCode.missingEntitlement  // -34018

/// `SecCopyErrorMessageString`: Apple's message for a result code.
///
/// - Parameter reserved: unused, as on Apple platforms.
public func SecCopyErrorMessageString(_ status: OSStatus, _ reserved: UnsafeMutableRawPointer?) -> CFString? {
    NSString(string: securityFrameworkMessages[status] ?? KeychainError.appleMessage(for: status))
}
