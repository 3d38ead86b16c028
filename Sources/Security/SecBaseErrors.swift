// Result codes of the Security framework beyond the keychain's own (SecBase.h): the
// trust, import/export and CSSM codes, with Apple's values and messages. Most exist so that
// code switching over them compiles and prints the same; the ones SecKey and SecTrust return
// are derived from KeychainModel's OSStatusCode, where their messages are too.

import KeychainModel

public let errSecDskFull: OSStatus = -34
public let errSecACLNotSimple: OSStatus = -25240
public let errSecPolicyNotFound: OSStatus = -25241
public let errSecInvalidTrustSetting: OSStatus = -25242
public let errSecInvalidOwnerEdit: OSStatus = -25244
public let errSecTrustNotAvailable: OSStatus = -25245
public let errSecUnsupportedFormat: OSStatus = -25256
public let errSecUnknownFormat: OSStatus = OSStatusCode.unknownFormat.rawValue
public let errSecKeyIsSensitive: OSStatus = -25258
public let errSecMultiplePrivKeys: OSStatus = -25259
public let errSecPassphraseRequired: OSStatus = -25260
public let errSecInvalidPasswordRef: OSStatus = -25261
public let errSecInvalidTrustSettings: OSStatus = -25262
public let errSecNoTrustSettings: OSStatus = OSStatusCode.noTrustSettings.rawValue
public let errSecPkcs12VerifyFailure: OSStatus = OSStatusCode.pkcs12VerifyFailure.rawValue
public let errSecNotSigner: OSStatus = -26267
public let errSecServiceNotAvailable: OSStatus = -67585
public let errSecInsufficientClientID: OSStatus = -67586
public let errSecDeviceReset: OSStatus = -67587
public let errSecDeviceFailed: OSStatus = -67588
public let errSecAppleAddAppACLSubject: OSStatus = -67589
public let errSecApplePublicKeyIncomplete: OSStatus = -67590
public let errSecAppleSignatureMismatch: OSStatus = -67591
public let errSecAppleInvalidKeyStartDate: OSStatus = -67592
public let errSecAppleInvalidKeyEndDate: OSStatus = -67593
public let errSecConversionError: OSStatus = -67594
public let errSecAppleSSLv2Rollback: OSStatus = -67595
public let errSecQuotaExceeded: OSStatus = -67596
public let errSecFileTooBig: OSStatus = -67597
public let errSecInvalidDatabaseBlob: OSStatus = -67598
public let errSecInvalidKeyBlob: OSStatus = -67599
public let errSecIncompatibleDatabaseBlob: OSStatus = -67600
public let errSecIncompatibleKeyBlob: OSStatus = -67601
public let errSecHostNameMismatch: OSStatus = OSStatusCode.hostNameMismatch.rawValue
public let errSecUnknownCriticalExtensionFlag: OSStatus = -67603
public let errSecNoBasicConstraints: OSStatus = -67604
public let errSecNoBasicConstraintsCA: OSStatus = -67605
public let errSecInvalidAuthorityKeyID: OSStatus = -67606
public let errSecInvalidSubjectKeyID: OSStatus = -67607
public let errSecInvalidKeyUsageForPolicy: OSStatus = -67608
public let errSecInvalidExtendedKeyUsage: OSStatus = OSStatusCode.invalidExtendedKeyUsage.rawValue
public let errSecInvalidIDLinkage: OSStatus = -67610
public let errSecPathLengthConstraintExceeded: OSStatus = -67611
public let errSecInvalidRoot: OSStatus = -67612
public let errSecCRLExpired: OSStatus = -67613
public let errSecCRLNotValidYet: OSStatus = -67614
public let errSecCRLNotFound: OSStatus = -67615
public let errSecCRLServerDown: OSStatus = -67616
public let errSecCRLBadURI: OSStatus = -67617
public let errSecUnknownCertExtension: OSStatus = -67618
public let errSecUnknownCRLExtension: OSStatus = -67619
public let errSecCRLNotTrusted: OSStatus = -67620
public let errSecCRLPolicyFailed: OSStatus = -67621
public let errSecIDPFailure: OSStatus = -67622
public let errSecSMIMEEmailAddressesNotFound: OSStatus = -67623
public let errSecSMIMEBadExtendedKeyUsage: OSStatus = -67624
public let errSecSMIMEBadKeyUsage: OSStatus = -67625
public let errSecSMIMEKeyUsageNotCritical: OSStatus = -67626
public let errSecSMIMENoEmailAddress: OSStatus = -67627
public let errSecSMIMESubjAltNameNotCritical: OSStatus = -67628
public let errSecSSLBadExtendedKeyUsage: OSStatus = -67629
public let errSecOCSPBadResponse: OSStatus = -67630
public let errSecOCSPBadRequest: OSStatus = -67631
public let errSecOCSPUnavailable: OSStatus = -67632
public let errSecOCSPStatusUnrecognized: OSStatus = -67633
public let errSecEndOfData: OSStatus = -67634
public let errSecIncompleteCertRevocationCheck: OSStatus = -67635
public let errSecNetworkFailure: OSStatus = -67636
public let errSecOCSPNotTrustedToAnchor: OSStatus = -67637
public let errSecRecordModified: OSStatus = -67638
public let errSecOCSPSignatureError: OSStatus = -67639
public let errSecOCSPNoSigner: OSStatus = -67640
public let errSecOCSPResponderMalformedReq: OSStatus = -67641
public let errSecOCSPResponderInternalError: OSStatus = -67642
public let errSecOCSPResponderTryLater: OSStatus = -67643
public let errSecOCSPResponderSignatureRequired: OSStatus = -67644
public let errSecOCSPResponderUnauthorized: OSStatus = -67645
public let errSecOCSPResponseNonceMismatch: OSStatus = -67646
public let errSecCodeSigningBadCertChainLength: OSStatus = -67647
public let errSecCodeSigningNoBasicConstraints: OSStatus = -67648
public let errSecCodeSigningBadPathLengthConstraint: OSStatus = -67649
public let errSecCodeSigningNoExtendedKeyUsage: OSStatus = -67650
public let errSecCodeSigningDevelopment: OSStatus = -67651
public let errSecResourceSignBadCertChainLength: OSStatus = -67652
public let errSecResourceSignBadExtKeyUsage: OSStatus = -67653
public let errSecTrustSettingDeny: OSStatus = OSStatusCode.trustSettingDeny.rawValue
public let errSecInvalidSubjectName: OSStatus = -67655
public let errSecUnknownQualifiedCertStatement: OSStatus = -67656
public let errSecMobileMeRequestQueued: OSStatus = -67657
public let errSecMobileMeRequestRedirected: OSStatus = -67658
public let errSecMobileMeServerError: OSStatus = -67659
public let errSecMobileMeServerNotAvailable: OSStatus = -67660
public let errSecMobileMeServerAlreadyExists: OSStatus = -67661
public let errSecMobileMeServerServiceErr: OSStatus = -67662
public let errSecMobileMeRequestAlreadyPending: OSStatus = -67663
public let errSecMobileMeNoRequestPending: OSStatus = -67664
public let errSecMobileMeCSRVerifyFailure: OSStatus = -67665
public let errSecMobileMeFailedConsistencyCheck: OSStatus = -67666
public let errSecNotInitialized: OSStatus = -67667
public let errSecInvalidHandleUsage: OSStatus = -67668
public let errSecPVCReferentNotFound: OSStatus = -67669
public let errSecFunctionIntegrityFail: OSStatus = -67670
public let errSecInternalError: OSStatus = -67671
public let errSecMemoryError: OSStatus = -67672
public let errSecInvalidData: OSStatus = -67673
public let errSecMDSError: OSStatus = -67674
public let errSecInvalidPointer: OSStatus = -67675
public let errSecSelfCheckFailed: OSStatus = -67676
public let errSecFunctionFailed: OSStatus = -67677
public let errSecModuleManifestVerifyFailed: OSStatus = -67678
public let errSecInvalidGUID: OSStatus = -67679
public let errSecInvalidHandle: OSStatus = -67680
public let errSecInvalidDBList: OSStatus = -67681
public let errSecInvalidPassthroughID: OSStatus = -67682
public let errSecInvalidNetworkAddress: OSStatus = -67683
public let errSecCRLAlreadySigned: OSStatus = -67684
public let errSecInvalidNumberOfFields: OSStatus = -67685
public let errSecVerificationFailure: OSStatus = -67686
public let errSecUnknownTag: OSStatus = -67687
public let errSecInvalidSignature: OSStatus = -67688
public let errSecInvalidName: OSStatus = -67689
public let errSecInvalidCertificateRef: OSStatus = -67690
public let errSecInvalidCertificateGroup: OSStatus = -67691
public let errSecTagNotFound: OSStatus = -67692
public let errSecInvalidQuery: OSStatus = -67693
public let errSecInvalidValue: OSStatus = -67694
public let errSecCallbackFailed: OSStatus = -67695
public let errSecACLDeleteFailed: OSStatus = -67696
public let errSecACLReplaceFailed: OSStatus = -67697
public let errSecACLAddFailed: OSStatus = -67698
public let errSecACLChangeFailed: OSStatus = -67699
public let errSecInvalidAccessCredentials: OSStatus = -67700
public let errSecInvalidRecord: OSStatus = -67701
public let errSecInvalidACL: OSStatus = -67702
public let errSecInvalidSampleValue: OSStatus = -67703
public let errSecIncompatibleVersion: OSStatus = -67704
public let errSecPrivilegeNotGranted: OSStatus = -67705
public let errSecInvalidScope: OSStatus = -67706
public let errSecPVCAlreadyConfigured: OSStatus = -67707
public let errSecInvalidPVC: OSStatus = -67708
public let errSecEMMLoadFailed: OSStatus = -67709
public let errSecEMMUnloadFailed: OSStatus = -67710
public let errSecAddinLoadFailed: OSStatus = -67711
public let errSecInvalidKeyRef: OSStatus = -67712
public let errSecInvalidKeyHierarchy: OSStatus = -67713
public let errSecAddinUnloadFailed: OSStatus = -67714
public let errSecLibraryReferenceNotFound: OSStatus = -67715
public let errSecInvalidAddinFunctionTable: OSStatus = -67716
public let errSecInvalidServiceMask: OSStatus = -67717
public let errSecModuleNotLoaded: OSStatus = -67718
public let errSecInvalidSubServiceID: OSStatus = -67719
public let errSecAttributeNotInContext: OSStatus = -67720
public let errSecModuleManagerInitializeFailed: OSStatus = -67721
public let errSecModuleManagerNotFound: OSStatus = -67722
public let errSecEventNotificationCallbackNotFound: OSStatus = -67723
public let errSecInputLengthError: OSStatus = -67724
public let errSecOutputLengthError: OSStatus = -67725
public let errSecPrivilegeNotSupported: OSStatus = -67726
public let errSecDeviceError: OSStatus = -67727
public let errSecAttachHandleBusy: OSStatus = -67728
public let errSecNotLoggedIn: OSStatus = -67729
public let errSecAlgorithmMismatch: OSStatus = -67730
public let errSecKeyUsageIncorrect: OSStatus = -67731
public let errSecKeyBlobTypeIncorrect: OSStatus = -67732
public let errSecKeyHeaderInconsistent: OSStatus = -67733
public let errSecUnsupportedKeyFormat: OSStatus = OSStatusCode.unsupportedKeyFormat.rawValue
public let errSecUnsupportedKeySize: OSStatus = OSStatusCode.unsupportedKeySize.rawValue
public let errSecInvalidKeyUsageMask: OSStatus = -67736
public let errSecUnsupportedKeyUsageMask: OSStatus = -67737
public let errSecInvalidKeyAttributeMask: OSStatus = -67738
public let errSecUnsupportedKeyAttributeMask: OSStatus = -67739
public let errSecInvalidKeyLabel: OSStatus = -67740
public let errSecUnsupportedKeyLabel: OSStatus = -67741
public let errSecInvalidKeyFormat: OSStatus = -67742
public let errSecUnsupportedVectorOfBuffers: OSStatus = -67743
public let errSecInvalidInputVector: OSStatus = -67744
public let errSecInvalidOutputVector: OSStatus = -67745
public let errSecInvalidContext: OSStatus = -67746
public let errSecInvalidAlgorithm: OSStatus = -67747
public let errSecInvalidAttributeKey: OSStatus = -67748
public let errSecMissingAttributeKey: OSStatus = -67749
public let errSecInvalidAttributeInitVector: OSStatus = -67750
public let errSecMissingAttributeInitVector: OSStatus = -67751
public let errSecInvalidAttributeSalt: OSStatus = -67752
public let errSecMissingAttributeSalt: OSStatus = -67753
public let errSecInvalidAttributePadding: OSStatus = -67754
public let errSecMissingAttributePadding: OSStatus = -67755
public let errSecInvalidAttributeRandom: OSStatus = -67756
public let errSecMissingAttributeRandom: OSStatus = -67757
public let errSecInvalidAttributeSeed: OSStatus = -67758
public let errSecMissingAttributeSeed: OSStatus = -67759
public let errSecInvalidAttributePassphrase: OSStatus = -67760
public let errSecMissingAttributePassphrase: OSStatus = -67761
public let errSecInvalidAttributeKeyLength: OSStatus = -67762
public let errSecMissingAttributeKeyLength: OSStatus = -67763
public let errSecInvalidAttributeBlockSize: OSStatus = -67764
public let errSecMissingAttributeBlockSize: OSStatus = -67765
public let errSecInvalidAttributeOutputSize: OSStatus = -67766
public let errSecMissingAttributeOutputSize: OSStatus = -67767
public let errSecInvalidAttributeRounds: OSStatus = -67768
public let errSecMissingAttributeRounds: OSStatus = -67769
public let errSecInvalidAlgorithmParms: OSStatus = -67770
public let errSecMissingAlgorithmParms: OSStatus = -67771
public let errSecInvalidAttributeLabel: OSStatus = -67772
public let errSecMissingAttributeLabel: OSStatus = -67773
public let errSecInvalidAttributeKeyType: OSStatus = -67774
public let errSecMissingAttributeKeyType: OSStatus = -67775
public let errSecInvalidAttributeMode: OSStatus = -67776
public let errSecMissingAttributeMode: OSStatus = -67777
public let errSecInvalidAttributeEffectiveBits: OSStatus = -67778
public let errSecMissingAttributeEffectiveBits: OSStatus = -67779
public let errSecInvalidAttributeStartDate: OSStatus = -67780
public let errSecMissingAttributeStartDate: OSStatus = -67781
public let errSecInvalidAttributeEndDate: OSStatus = -67782
public let errSecMissingAttributeEndDate: OSStatus = -67783
public let errSecInvalidAttributeVersion: OSStatus = -67784
public let errSecMissingAttributeVersion: OSStatus = -67785
public let errSecInvalidAttributePrime: OSStatus = -67786
public let errSecMissingAttributePrime: OSStatus = -67787
public let errSecInvalidAttributeBase: OSStatus = -67788
public let errSecMissingAttributeBase: OSStatus = -67789
public let errSecInvalidAttributeSubprime: OSStatus = -67790
public let errSecMissingAttributeSubprime: OSStatus = -67791
public let errSecInvalidAttributeIterationCount: OSStatus = -67792
public let errSecMissingAttributeIterationCount: OSStatus = -67793
public let errSecInvalidAttributeDLDBHandle: OSStatus = -67794
public let errSecMissingAttributeDLDBHandle: OSStatus = -67795
public let errSecInvalidAttributeAccessCredentials: OSStatus = -67796
public let errSecMissingAttributeAccessCredentials: OSStatus = -67797
public let errSecInvalidAttributePublicKeyFormat: OSStatus = -67798
public let errSecMissingAttributePublicKeyFormat: OSStatus = -67799
public let errSecInvalidAttributePrivateKeyFormat: OSStatus = -67800
public let errSecMissingAttributePrivateKeyFormat: OSStatus = -67801
public let errSecInvalidAttributeSymmetricKeyFormat: OSStatus = -67802
public let errSecMissingAttributeSymmetricKeyFormat: OSStatus = -67803
public let errSecInvalidAttributeWrappedKeyFormat: OSStatus = -67804
public let errSecMissingAttributeWrappedKeyFormat: OSStatus = -67805
public let errSecStagedOperationInProgress: OSStatus = -67806
public let errSecStagedOperationNotStarted: OSStatus = -67807
public let errSecVerifyFailed: OSStatus = OSStatusCode.verifyFailed.rawValue
public let errSecQuerySizeUnknown: OSStatus = -67809
public let errSecBlockSizeMismatch: OSStatus = -67810
public let errSecPublicKeyInconsistent: OSStatus = -67811
public let errSecDeviceVerifyFailed: OSStatus = -67812
public let errSecInvalidLoginName: OSStatus = -67813
public let errSecAlreadyLoggedIn: OSStatus = -67814
public let errSecInvalidDigestAlgorithm: OSStatus = -67815
public let errSecInvalidCRLGroup: OSStatus = -67816
public let errSecCertificateCannotOperate: OSStatus = -67817
public let errSecCertificateExpired: OSStatus = OSStatusCode.certificateExpired.rawValue
public let errSecCertificateNotValidYet: OSStatus = -67819
public let errSecCertificateRevoked: OSStatus = -67820
public let errSecCertificateSuspended: OSStatus = -67821
public let errSecInsufficientCredentials: OSStatus = -67822
public let errSecInvalidAction: OSStatus = -67823
public let errSecInvalidAuthority: OSStatus = -67824
public let errSecVerifyActionFailed: OSStatus = -67825
public let errSecInvalidCertAuthority: OSStatus = -67826
public let errSecInvaldCRLAuthority: OSStatus = -67827
public let errSecInvalidCRLEncoding: OSStatus = -67828
public let errSecInvalidCRLType: OSStatus = -67829
public let errSecInvalidCRL: OSStatus = -67830
public let errSecInvalidFormType: OSStatus = -67831
public let errSecInvalidID: OSStatus = -67832
public let errSecInvalidIdentifier: OSStatus = -67833
public let errSecInvalidIndex: OSStatus = -67834
public let errSecInvalidPolicyIdentifiers: OSStatus = -67835
public let errSecInvalidTimeString: OSStatus = -67836
public let errSecInvalidReason: OSStatus = -67837
public let errSecInvalidRequestInputs: OSStatus = -67838
public let errSecInvalidResponseVector: OSStatus = -67839
public let errSecInvalidStopOnPolicy: OSStatus = -67840
public let errSecInvalidTuple: OSStatus = -67841
public let errSecMultipleValuesUnsupported: OSStatus = -67842
public let errSecNotTrusted: OSStatus = OSStatusCode.notTrusted.rawValue
public let errSecNoDefaultAuthority: OSStatus = -67844
public let errSecRejectedForm: OSStatus = -67845
public let errSecRequestLost: OSStatus = -67846
public let errSecRequestRejected: OSStatus = -67847
public let errSecUnsupportedAddressType: OSStatus = -67848
public let errSecUnsupportedService: OSStatus = -67849
public let errSecInvalidTupleGroup: OSStatus = -67850
public let errSecInvalidBaseACLs: OSStatus = -67851
public let errSecInvalidTupleCredendtials: OSStatus = -67852
public let errSecInvalidEncoding: OSStatus = -67853
public let errSecInvalidValidityPeriod: OSStatus = -67854
public let errSecInvalidRequestor: OSStatus = -67855
public let errSecRequestDescriptor: OSStatus = -67856
public let errSecInvalidBundleInfo: OSStatus = -67857
public let errSecInvalidCRLIndex: OSStatus = -67858
public let errSecNoFieldValues: OSStatus = -67859
public let errSecUnsupportedFieldFormat: OSStatus = -67860
public let errSecUnsupportedIndexInfo: OSStatus = -67861
public let errSecUnsupportedLocality: OSStatus = -67862
public let errSecUnsupportedNumAttributes: OSStatus = -67863
public let errSecUnsupportedNumIndexes: OSStatus = -67864
public let errSecUnsupportedNumRecordTypes: OSStatus = -67865
public let errSecFieldSpecifiedMultiple: OSStatus = -67866
public let errSecIncompatibleFieldFormat: OSStatus = -67867
public let errSecInvalidParsingModule: OSStatus = -67868
public let errSecDatabaseLocked: OSStatus = -67869
public let errSecDatastoreIsOpen: OSStatus = -67870
public let errSecMissingValue: OSStatus = -67871
public let errSecUnsupportedQueryLimits: OSStatus = -67872
public let errSecUnsupportedNumSelectionPreds: OSStatus = -67873
public let errSecUnsupportedOperator: OSStatus = -67874
public let errSecInvalidDBLocation: OSStatus = -67875
public let errSecInvalidAccessRequest: OSStatus = -67876
public let errSecInvalidIndexInfo: OSStatus = -67877
public let errSecInvalidNewOwner: OSStatus = -67878
public let errSecInvalidModifyMode: OSStatus = -67879
public let errSecMissingRequiredExtension: OSStatus = -67880
public let errSecExtendedKeyUsageNotCritical: OSStatus = -67881
public let errSecTimestampMissing: OSStatus = -67882
public let errSecTimestampInvalid: OSStatus = -67883
public let errSecTimestampNotTrusted: OSStatus = -67884
public let errSecTimestampServiceNotAvailable: OSStatus = -67885
public let errSecTimestampBadAlg: OSStatus = -67886
public let errSecTimestampBadRequest: OSStatus = -67887
public let errSecTimestampBadDataFormat: OSStatus = -67888
public let errSecTimestampTimeNotAvailable: OSStatus = -67889
public let errSecTimestampUnacceptedPolicy: OSStatus = -67890
public let errSecTimestampUnacceptedExtension: OSStatus = -67891
public let errSecTimestampAddInfoNotAvailable: OSStatus = -67892
public let errSecTimestampSystemFailure: OSStatus = -67893
public let errSecSigningTimeMissing: OSStatus = -67894
public let errSecTimestampRejection: OSStatus = -67895
public let errSecTimestampWaiting: OSStatus = -67896
public let errSecTimestampRevocationWarning: OSStatus = -67897
public let errSecTimestampRevocationNotification: OSStatus = -67898

/// Apple's messages for the codes above (`SecCopyErrorMessageString`).
let securityFrameworkMessages: [OSStatus: String] = [
    -25240: "The specified access control list is not in standard (simple) form.",
    -25241: "The specified policy cannot be found.",
    -25242: "The specified trust setting is invalid.",
    -25244: "Invalid attempt to change the owner of this item.",
    -25245: "No trust results are available.",
    -25256: "Import/Export format unsupported.",
    -25257: "Unknown format in import.",
    -25258: "Key material must be wrapped for export.",
    -25259: "An attempt was made to import multiple private keys.",
    -25260: "Passphrase is required for import/export.",
    -25261: "The password reference was invalid.",
    -25262: "The Trust Settings Record was corrupted.",
    -25263: "No Trust Settings were found.",
    -25264: "MAC verification failed during PKCS12 import (wrong password?)",
    -26267: "A certificate was not signed by its proposed parent.",
    -67585: "The required service is not available.",
    -67586: "The client ID is not correct.",
    -67587: "A device reset has occurred.",
    -67588: "A device failure has occurred.",
    -67589: "Adding an application ACL subject failed.",
    -67590: "The public key is incomplete.",
    -67591: "A signature mismatch has occurred.",
    -67592: "The specified key has an invalid start date.",
    -67593: "The specified key has an invalid end date.",
    -67594: "A conversion error has occurred.",
    -67595: "A SSLv2 rollback error has occurred.",
    -67596: "The quota was exceeded.",
    -67597: "The file is too big.",
    -67598: "The specified database has an invalid blob.",
    -67599: "The specified database has an invalid key blob.",
    -67600: "The specified database has an incompatible blob.",
    -67601: "The specified database has an incompatible key blob.",
    -67602: "A host name mismatch has occurred.",
    -67603: "There is an unknown critical extension flag.",
    -67604: "No basic constraints were found.",
    -67605: "No basic CA constraints were found.",
    -67606: "The authority key ID is not valid.",
    -67607: "The subject key ID is not valid.",
    -67608: "The key usage is not valid for the specified policy.",
    -67609: "The extended key usage is not valid.",
    -67610: "The ID linkage is not valid.",
    -67611: "The path length constraint was exceeded.",
    -67612: "The root or anchor certificate is not valid.",
    -67613: "The CRL has expired.",
    -67614: "The CRL is not yet valid.",
    -67615: "The CRL was not found.",
    -67616: "The CRL server is down.",
    -67617: "The CRL has a bad Uniform Resource Identifier.",
    -67618: "An unknown certificate extension was encountered.",
    -67619: "An unknown CRL extension was encountered.",
    -67620: "The CRL is not trusted.",
    -67621: "The CRL policy failed.",
    -67622: "The issuing distribution point was not valid.",
    -67623: "An email address mismatch was encountered.",
    -67624: "The appropriate extended key usage for SMIME was not found.",
    -67625: "The key usage is not compatible with SMIME.",
    -67626: "The key usage extension is not marked as critical.",
    -67627: "No email address was found in the certificate.",
    -67628: "The subject alternative name extension is not marked as critical.",
    -67629: "The appropriate extended key usage for SSL was not found.",
    -67630: "The OCSP response was incorrect or could not be parsed.",
    -67631: "The OCSP request was incorrect or could not be parsed.",
    -67632: "OCSP service is unavailable.",
    -67633: "The OCSP server did not recognize this certificate.",
    -67634: "An end-of-data was detected.",
    -67635: "An incomplete certificate revocation check occurred.",
    -67636: "A network failure occurred.",
    -67637: "The OCSP response was not trusted to a root or anchor certificate.",
    -67638: "The record was modified.",
    -67639: "The OCSP response had an invalid signature.",
    -67640: "The OCSP response had no signer.",
    -67641: "The OCSP responder was given a malformed request.",
    -67642: "The OCSP responder encountered an internal error.",
    -67643: "The OCSP responder is busy, try again later.",
    -67644: "The OCSP responder requires a signature.",
    -67645: "The OCSP responder rejected this request as unauthorized.",
    -67646: "The OCSP response nonce did not match the request.",
    -67647: "Code signing encountered an incorrect certificate chain length.",
    -67648: "Code signing found no basic constraints.",
    -67649: "Code signing encountered an incorrect path length constraint.",
    -67650: "Code signing found no extended key usage.",
    -67651: "Code signing indicated use of a development-only certificate.",
    -67652: "Resource signing has encountered an incorrect certificate chain length.",
    -67653: "Resource signing has encountered an error in the extended key usage.",
    -67654: "The trust setting for this policy was set to Deny.",
    -67655: "An invalid certificate subject name was encountered.",
    -67656: "An unknown qualified certificate statement was encountered.",
    -67657: "The MobileMe request will be sent during the next connection.",
    -67658: "The MobileMe request was redirected.",
    -67659: "A MobileMe server error occurred.",
    -67660: "The MobileMe server is not available.",
    -67661: "The MobileMe server reported that the item already exists.",
    -67662: "A MobileMe service error has occurred.",
    -67663: "A MobileMe request is already pending.",
    -67664: "MobileMe has no request pending.",
    -67665: "A MobileMe CSR verification failure has occurred.",
    -67666: "MobileMe has found a failed consistency check.",
    -67667: "A function was called without initializing CSSM.",
    -67668: "The CSSM handle does not match with the service type.",
    -67669: "A reference to the calling module was not found in the list of authorized callers.",
    -67670: "A function address was not within the verified module.",
    -67671: "An internal error has occurred.",
    -67672: "A memory error has occurred.",
    -67673: "Invalid data was encountered.",
    -67674: "A Module Directory Service error has occurred.",
    -67675: "An invalid pointer was encountered.",
    -67676: "Self-check has failed.",
    -67677: "A function has failed.",
    -67678: "A module manifest verification failure has occurred.",
    -67679: "An invalid GUID was encountered.",
    -67680: "An invalid handle was encountered.",
    -67681: "An invalid DB list was encountered.",
    -67682: "An invalid passthrough ID was encountered.",
    -67683: "An invalid network address was encountered.",
    -67684: "The certificate revocation list is already signed.",
    -67685: "An invalid number of fields were encountered.",
    -67686: "A verification failure occurred.",
    -67687: "An unknown tag was encountered.",
    -67688: "An invalid signature was encountered.",
    -67689: "An invalid name was encountered.",
    -67690: "An invalid certificate reference was encountered.",
    -67691: "An invalid certificate group was encountered.",
    -67692: "The specified tag was not found.",
    -67693: "The specified query was not valid.",
    -67694: "An invalid value was detected.",
    -67695: "A callback has failed.",
    -67696: "An ACL delete operation has failed.",
    -67697: "An ACL replace operation has failed.",
    -67698: "An ACL add operation has failed.",
    -67699: "An ACL change operation has failed.",
    -67700: "Invalid access credentials were encountered.",
    -67701: "An invalid record was encountered.",
    -67702: "An invalid ACL was encountered.",
    -67703: "An invalid sample value was encountered.",
    -67704: "An incompatible version was encountered.",
    -67705: "The privilege was not granted.",
    -67706: "An invalid scope was encountered.",
    -67707: "The PVC is already configured.",
    -67708: "An invalid PVC was encountered.",
    -67709: "The EMM load has failed.",
    -67710: "The EMM unload has failed.",
    -67711: "The add-in load operation has failed.",
    -67712: "An invalid key was encountered.",
    -67713: "An invalid key hierarchy was encountered.",
    -67714: "The add-in unload operation has failed.",
    -67715: "A library reference was not found.",
    -67716: "An invalid add-in function table was encountered.",
    -67717: "An invalid service mask was encountered.",
    -67718: "A module was not loaded.",
    -67719: "An invalid subservice ID was encountered.",
    -67720: "An attribute was not in the context.",
    -67721: "A module failed to initialize.",
    -67722: "A module was not found.",
    -67723: "An event notification callback was not found.",
    -67724: "An input length error was encountered.",
    -67725: "An output length error was encountered.",
    -67726: "The privilege is not supported.",
    -67727: "A device error was encountered.",
    -67728: "The CSP handle was busy.",
    -67729: "You are not logged in.",
    -67730: "An algorithm mismatch was encountered.",
    -67731: "The key usage is incorrect.",
    -67732: "The key blob type is incorrect.",
    -67733: "The key header is inconsistent.",
    -67734: "The key header format is not supported.",
    -67735: "The key size is not supported.",
    -67736: "The key usage mask is not valid.",
    -67737: "The key usage mask is not supported.",
    -67738: "The key attribute mask is not valid.",
    -67739: "The key attribute mask is not supported.",
    -67740: "The key label is not valid.",
    -67741: "The key label is not supported.",
    -67742: "The key format is not valid.",
    -67743: "The vector of buffers is not supported.",
    -67744: "The input vector is not valid.",
    -67745: "The output vector is not valid.",
    -67746: "An invalid context was encountered.",
    -67747: "An invalid algorithm was encountered.",
    -67748: "A key attribute was not valid.",
    -67749: "A key attribute was missing.",
    -67750: "An init vector attribute was not valid.",
    -67751: "An init vector attribute was missing.",
    -67752: "A salt attribute was not valid.",
    -67753: "A salt attribute was missing.",
    -67754: "A padding attribute was not valid.",
    -67755: "A padding attribute was missing.",
    -67756: "A random number attribute was not valid.",
    -67757: "A random number attribute was missing.",
    -67758: "A seed attribute was not valid.",
    -67759: "A seed attribute was missing.",
    -67760: "A passphrase attribute was not valid.",
    -67761: "A passphrase attribute was missing.",
    -67762: "A key length attribute was not valid.",
    -67763: "A key length attribute was missing.",
    -67764: "A block size attribute was not valid.",
    -67765: "A block size attribute was missing.",
    -67766: "An output size attribute was not valid.",
    -67767: "An output size attribute was missing.",
    -67768: "The number of rounds attribute was not valid.",
    -67769: "The number of rounds attribute was missing.",
    -67770: "An algorithm parameters attribute was not valid.",
    -67771: "An algorithm parameters attribute was missing.",
    -67772: "A label attribute was not valid.",
    -67773: "A label attribute was missing.",
    -67774: "A key type attribute was not valid.",
    -67775: "A key type attribute was missing.",
    -67776: "A mode attribute was not valid.",
    -67777: "A mode attribute was missing.",
    -67778: "An effective bits attribute was not valid.",
    -67779: "An effective bits attribute was missing.",
    -67780: "A start date attribute was not valid.",
    -67781: "A start date attribute was missing.",
    -67782: "An end date attribute was not valid.",
    -67783: "An end date attribute was missing.",
    -67784: "A version attribute was not valid.",
    -67785: "A version attribute was missing.",
    -67786: "A prime attribute was not valid.",
    -67787: "A prime attribute was missing.",
    -67788: "A base attribute was not valid.",
    -67789: "A base attribute was missing.",
    -67790: "A subprime attribute was not valid.",
    -67791: "A subprime attribute was missing.",
    -67792: "An iteration count attribute was not valid.",
    -67793: "An iteration count attribute was missing.",
    -67794: "A database handle attribute was not valid.",
    -67795: "A database handle attribute was missing.",
    -67796: "An access credentials attribute was not valid.",
    -67797: "An access credentials attribute was missing.",
    -67798: "A public key format attribute was not valid.",
    -67799: "A public key format attribute was missing.",
    -67800: "A private key format attribute was not valid.",
    -67801: "A private key format attribute was missing.",
    -67802: "A symmetric key format attribute was not valid.",
    -67803: "A symmetric key format attribute was missing.",
    -67804: "A wrapped key format attribute was not valid.",
    -67805: "A wrapped key format attribute was missing.",
    -67806: "A staged operation is in progress.",
    -67807: "A staged operation was not started.",
    -67808: "A cryptographic verification failure has occurred.",
    -67809: "The query size is unknown.",
    -67810: "A block size mismatch occurred.",
    -67811: "The public key was inconsistent.",
    -67812: "A device verification failure has occurred.",
    -67813: "An invalid login name was detected.",
    -67814: "The user is already logged in.",
    -67815: "An invalid digest algorithm was detected.",
    -67816: "An invalid CRL group was detected.",
    -67817: "The certificate cannot operate.",
    -67818: "An expired certificate was detected.",
    -67819: "The certificate is not yet valid.",
    -67820: "The certificate was revoked.",
    -67821: "The certificate was suspended.",
    -67822: "Insufficient credentials were detected.",
    -67823: "The action was not valid.",
    -67824: "The authority was not valid.",
    -67825: "A verify action has failed.",
    -67826: "The certificate authority was not valid.",
    -67827: "The CRL authority was not valid.",
    -67828: "The CRL encoding was not valid.",
    -67829: "The CRL type was not valid.",
    -67830: "The CRL was not valid.",
    -67831: "The form type was not valid.",
    -67832: "The ID was not valid.",
    -67833: "The identifier was not valid.",
    -67834: "The index was not valid.",
    -67835: "The policy identifiers are not valid.",
    -67836: "The time specified was not valid.",
    -67837: "The trust policy reason was not valid.",
    -67838: "The request inputs are not valid.",
    -67839: "The response vector was not valid.",
    -67840: "The stop-on policy was not valid.",
    -67841: "The tuple was not valid.",
    -67842: "Multiple values are not supported.",
    -67843: "The trust policy was not trusted.",
    -67844: "No default authority was detected.",
    -67845: "The trust policy had a rejected form.",
    -67846: "The request was lost.",
    -67847: "The request was rejected.",
    -67848: "The address type is not supported.",
    -67849: "The service is not supported.",
    -67850: "The tuple group was not valid.",
    -67851: "The base ACLs are not valid.",
    -67852: "The tuple credentials are not valid.",
    -67853: "The encoding was not valid.",
    -67854: "The validity period was not valid.",
    -67855: "The requestor was not valid.",
    -67856: "The request descriptor was not valid.",
    -67857: "The bundle information was not valid.",
    -67858: "The CRL index was not valid.",
    -67859: "No field values were detected.",
    -67860: "The field format is not supported.",
    -67861: "The index information is not supported.",
    -67862: "The locality is not supported.",
    -67863: "The number of attributes is not supported.",
    -67864: "The number of indexes is not supported.",
    -67865: "The number of record types is not supported.",
    -67866: "Too many fields were specified.",
    -67867: "The field format was incompatible.",
    -67868: "The parsing module was not valid.",
    -67869: "The database is locked.",
    -67870: "The data store is open.",
    -67871: "A missing value was detected.",
    -67872: "The query limits are not supported.",
    -67873: "The number of selection predicates is not supported.",
    -67874: "The operator is not supported.",
    -67875: "The database location is not valid.",
    -67876: "The access request is not valid.",
    -67877: "The index information is not valid.",
    -67878: "The new owner is not valid.",
    -67879: "The modify mode is not valid.",
    -67880: "A required certificate extension is missing.",
    -67881: "The extended key usage extension was not marked critical.",
    -67882: "A timestamp was expected but was not found.",
    -67883: "The timestamp was not valid.",
    -67884: "The timestamp was not trusted.",
    -67885: "The timestamp service is not available.",
    -67886: "An unrecognized or unsupported Algorithm Identifier in timestamp.",
    -67887: "The timestamp transaction is not permitted or supported.",
    -67888: "The timestamp data submitted has the wrong format.",
    -67889: "The time source for the Timestamp Authority is not available.",
    -67890: "The requested policy is not supported by the Timestamp Authority.",
    -67891: "The requested extension is not supported by the Timestamp Authority.",
    -67892: "The additional information requested is not available.",
    -67893: "The timestamp request cannot be handled due to system failure.",
    -67894: "A signing time was expected but was not found.",
    -67895: "A timestamp transaction was rejected.",
    -67896: "A timestamp transaction is waiting.",
    -67897: "A timestamp authority revocation warning was issued.",
    -67898: "A timestamp authority revocation notification was issued.",
]
