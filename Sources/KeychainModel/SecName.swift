/// Apple's raw values of the SecItem constants (Security/SecItem.h): the one table the
/// `Security` module's `kSec…` constants, the query keys (``QueryKey``) and the attribute
/// catalogue (``ItemSchema``) are derived from, so that dictionaries built with Apple's
/// names are the dictionaries securityd reads.
public enum SecName {
    /// The item class key and its values.
    public static let kSecClass = "class"
    public static let kSecClassGenericPassword = "genp"
    public static let kSecClassInternetPassword = "inet"
    public static let kSecClassCertificate = "cert"
    public static let kSecClassKey = "keys"
    public static let kSecClassIdentity = "idnt"

    /// Item attribute keys (`kSecAttr…`).
    public static let kSecAttrAccessible = "pdmn"
    public static let kSecAttrAccessControl = "accc"
    public static let kSecAttrAccessGroup = "agrp"
    public static let kSecAttrSynchronizable = "sync"
    public static let kSecAttrCreationDate = "cdat"
    public static let kSecAttrModificationDate = "mdat"
    public static let kSecAttrDescription = "desc"
    public static let kSecAttrComment = "icmt"
    public static let kSecAttrCreator = "crtr"
    public static let kSecAttrType = "type"
    public static let kSecAttrLabel = "labl"
    public static let kSecAttrIsInvisible = "invi"
    public static let kSecAttrIsNegative = "nega"
    public static let kSecAttrAccount = "acct"
    public static let kSecAttrService = "svce"
    public static let kSecAttrGeneric = "gena"
    public static let kSecAttrSecurityDomain = "sdmn"
    public static let kSecAttrServer = "srvr"
    public static let kSecAttrProtocol = "ptcl"
    public static let kSecAttrAuthenticationType = "atyp"
    public static let kSecAttrPort = "port"
    public static let kSecAttrPath = "path"
    public static let kSecAttrSubject = "subj"
    public static let kSecAttrIssuer = "issr"
    public static let kSecAttrSerialNumber = "slnr"
    public static let kSecAttrSubjectKeyID = "skid"
    public static let kSecAttrPublicKeyHash = "pkhh"
    public static let kSecAttrCertificateType = "ctyp"
    public static let kSecAttrCertificateEncoding = "cenc"
    public static let kSecAttrKeyClass = "kcls"
    public static let kSecAttrApplicationLabel = "klbl"
    public static let kSecAttrIsPermanent = "perm"
    public static let kSecAttrIsSensitive = "sens"
    public static let kSecAttrIsExtractable = "extr"
    public static let kSecAttrApplicationTag = "atag"
    public static let kSecAttrKeyType = "type"
    public static let kSecAttrKeySizeInBits = "bsiz"
    public static let kSecAttrEffectiveKeySize = "esiz"
    public static let kSecAttrCanEncrypt = "encr"
    public static let kSecAttrCanDecrypt = "decr"
    public static let kSecAttrCanDerive = "drve"
    public static let kSecAttrCanSign = "sign"
    public static let kSecAttrCanVerify = "vrfy"
    public static let kSecAttrCanWrap = "wrap"
    public static let kSecAttrCanUnwrap = "unwp"
    public static let kSecAttrSyncViewHint = "vwht"
    public static let kSecAttrTokenID = "tkid"
    public static let kSecAttrPersistentReference = "persistref"
    public static let kSecAttrPersistantReference = "persistref"

    /// `kSecAttrAccessible` values: the protection classes.
    public static let kSecAttrAccessibleWhenUnlocked = "ak"
    public static let kSecAttrAccessibleAfterFirstUnlock = "ck"
    public static let kSecAttrAccessibleAlways = "dk"
    public static let kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly = "akpu"
    public static let kSecAttrAccessibleWhenUnlockedThisDeviceOnly = "aku"
    public static let kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly = "cku"
    public static let kSecAttrAccessibleAlwaysThisDeviceOnly = "dku"

    /// The `kSecAttrSynchronizable` value that matches both.
    public static let kSecAttrSynchronizableAny = "syna"

    /// `kSecAttrProtocol` values: four-character codes, padded with spaces.
    public static let kSecAttrProtocolFTP = "ftp "
    public static let kSecAttrProtocolFTPAccount = "ftpa"
    public static let kSecAttrProtocolHTTP = "http"
    public static let kSecAttrProtocolIRC = "irc "
    public static let kSecAttrProtocolNNTP = "nntp"
    public static let kSecAttrProtocolPOP3 = "pop3"
    public static let kSecAttrProtocolSMTP = "smtp"
    public static let kSecAttrProtocolSOCKS = "sox "
    public static let kSecAttrProtocolIMAP = "imap"
    public static let kSecAttrProtocolLDAP = "ldap"
    public static let kSecAttrProtocolAppleTalk = "atlk"
    public static let kSecAttrProtocolAFP = "afp "
    public static let kSecAttrProtocolTelnet = "teln"
    public static let kSecAttrProtocolSSH = "ssh "
    public static let kSecAttrProtocolFTPS = "ftps"
    public static let kSecAttrProtocolHTTPS = "htps"
    public static let kSecAttrProtocolHTTPProxy = "htpx"
    public static let kSecAttrProtocolHTTPSProxy = "htsx"
    public static let kSecAttrProtocolFTPProxy = "ftpx"
    public static let kSecAttrProtocolSMB = "smb "
    public static let kSecAttrProtocolRTSP = "rtsp"
    public static let kSecAttrProtocolRTSPProxy = "rtsx"
    public static let kSecAttrProtocolDAAP = "daap"
    public static let kSecAttrProtocolEPPC = "eppc"
    public static let kSecAttrProtocolIPP = "ipp "
    public static let kSecAttrProtocolNNTPS = "ntps"
    public static let kSecAttrProtocolLDAPS = "ldps"
    public static let kSecAttrProtocolTelnetS = "tels"
    public static let kSecAttrProtocolIMAPS = "imps"
    public static let kSecAttrProtocolIRCS = "ircs"
    public static let kSecAttrProtocolPOP3S = "pops"

    /// `kSecAttrAuthenticationType` values.
    public static let kSecAttrAuthenticationTypeNTLM = "ntlm"
    public static let kSecAttrAuthenticationTypeMSN = "msna"
    public static let kSecAttrAuthenticationTypeDPA = "dpaa"
    public static let kSecAttrAuthenticationTypeRPA = "rpaa"
    public static let kSecAttrAuthenticationTypeHTTPBasic = "http"
    public static let kSecAttrAuthenticationTypeHTTPDigest = "httd"
    public static let kSecAttrAuthenticationTypeHTMLForm = "form"
    public static let kSecAttrAuthenticationTypeDefault = "dflt"

    /// `kSecAttrKeyClass` and `kSecAttrKeyType` values (decimal strings, as Apple's).
    public static let kSecAttrKeyClassPublic = "0"
    public static let kSecAttrKeyClassPrivate = "1"
    public static let kSecAttrKeyClassSymmetric = "2"
    public static let kSecAttrKeyTypeRSA = "42"
    public static let kSecAttrKeyTypeEC = "73"
    public static let kSecAttrKeyTypeECSECPrimeRandom = "73"
    /// `kSecAttrTokenID` of keys made inside the enclave.
    public static let kSecAttrTokenIDSecureEnclave = "com.apple.setoken"
    /// `SecKeyCreateRandomKey`'s per-half attribute dictionaries.
    public static let kSecPrivateKeyAttrs = "private"
    public static let kSecPublicKeyAttrs = "public"
    /// `SecPKCS12Import`'s option and result keys (SecImportExport.h).
    public static let kSecImportExportPassphrase = "passphrase"
    public static let kSecImportToMemoryOnly = "memory"
    public static let kSecImportExportKeychain = "keychain"
    public static let kSecImportItemLabel = "label"
    public static let kSecImportItemKeyID = "keyid"
    public static let kSecImportItemTrust = "trust"
    public static let kSecImportItemCertChain = "chain"
    public static let kSecImportItemIdentity = "identity"

    /// Search keys and `kSecMatchLimit` values.
    public static let kSecMatchPolicy = "m_Policy"
    public static let kSecMatchItemList = "m_ItemList"
    public static let kSecMatchSearchList = "m_SearchList"
    public static let kSecMatchIssuers = "m_Issuers"
    public static let kSecMatchEmailAddressIfPresent = "m_EmailAddressIfPresent"
    public static let kSecMatchSubjectContains = "m_SubjectContains"
    public static let kSecMatchCaseInsensitive = "m_CaseInsensitive"
    public static let kSecMatchSubjectStartsWith = "m_SubjectStartsWith"
    public static let kSecMatchSubjectEndsWith = "m_SubjectEndsWith"
    public static let kSecMatchSubjectWholeString = "m_SubjectWholeString"
    public static let kSecMatchDiacriticInsensitive = "m_DiacriticInsensitive"
    public static let kSecMatchWidthInsensitive = "m_WidthInsensitive"
    public static let kSecMatchTrustedOnly = "m_TrustedOnly"
    public static let kSecMatchValidOnDate = "m_ValidOnDate"
    public static let kSecMatchLimit = "m_Limit"
    public static let kSecMatchLimitOne = "m_LimitOne"
    public static let kSecMatchLimitAll = "m_LimitAll"

    /// Return-type keys.
    public static let kSecReturnData = "r_Data"
    public static let kSecReturnAttributes = "r_Attributes"
    public static let kSecReturnRef = "r_Ref"
    public static let kSecReturnPersistentRef = "r_PersistentRef"

    /// Value keys.
    public static let kSecValueData = "v_Data"
    public static let kSecValueRef = "v_Ref"
    public static let kSecValuePersistentRef = "v_PersistentRef"

    /// `kSecUse…` keys and `kSecUseAuthenticationUI` values.
    public static let kSecUseItemList = "u_ItemList"
    public static let kSecUseKeychain = "u_Keychain"
    public static let kSecUseOperationPrompt = "u_OpPrompt"
    public static let kSecUseNoAuthenticationUI = "u_NoAuthUI"
    public static let kSecUseAuthenticationUI = "u_AuthUI"
    public static let kSecUseAuthenticationUIAllow = "u_AuthUIA"
    public static let kSecUseAuthenticationUIFail = "u_AuthUIF"
    public static let kSecUseAuthenticationUISkip = "u_AuthUIS"
    public static let kSecUseAuthenticationContext = "u_AuthCtx"
    public static let kSecUseDataProtectionKeychain = "nleg"

    /// Every name and its value, for the tests that hold the parser to the table.
    public static let all: [(name: String, value: String)] = [
        ("kSecClass", kSecClass),
        ("kSecClassGenericPassword", kSecClassGenericPassword),
        ("kSecClassInternetPassword", kSecClassInternetPassword),
        ("kSecClassCertificate", kSecClassCertificate),
        ("kSecClassKey", kSecClassKey),
        ("kSecClassIdentity", kSecClassIdentity),
        ("kSecAttrAccessible", kSecAttrAccessible),
        ("kSecAttrAccessControl", kSecAttrAccessControl),
        ("kSecAttrAccessGroup", kSecAttrAccessGroup),
        ("kSecAttrSynchronizable", kSecAttrSynchronizable),
        ("kSecAttrCreationDate", kSecAttrCreationDate),
        ("kSecAttrModificationDate", kSecAttrModificationDate),
        ("kSecAttrDescription", kSecAttrDescription),
        ("kSecAttrComment", kSecAttrComment),
        ("kSecAttrCreator", kSecAttrCreator),
        ("kSecAttrType", kSecAttrType),
        ("kSecAttrLabel", kSecAttrLabel),
        ("kSecAttrIsInvisible", kSecAttrIsInvisible),
        ("kSecAttrIsNegative", kSecAttrIsNegative),
        ("kSecAttrAccount", kSecAttrAccount),
        ("kSecAttrService", kSecAttrService),
        ("kSecAttrGeneric", kSecAttrGeneric),
        ("kSecAttrSecurityDomain", kSecAttrSecurityDomain),
        ("kSecAttrServer", kSecAttrServer),
        ("kSecAttrProtocol", kSecAttrProtocol),
        ("kSecAttrAuthenticationType", kSecAttrAuthenticationType),
        ("kSecAttrPort", kSecAttrPort),
        ("kSecAttrPath", kSecAttrPath),
        ("kSecAttrSubject", kSecAttrSubject),
        ("kSecAttrIssuer", kSecAttrIssuer),
        ("kSecAttrSerialNumber", kSecAttrSerialNumber),
        ("kSecAttrSubjectKeyID", kSecAttrSubjectKeyID),
        ("kSecAttrPublicKeyHash", kSecAttrPublicKeyHash),
        ("kSecAttrCertificateType", kSecAttrCertificateType),
        ("kSecAttrCertificateEncoding", kSecAttrCertificateEncoding),
        ("kSecAttrKeyClass", kSecAttrKeyClass),
        ("kSecAttrApplicationLabel", kSecAttrApplicationLabel),
        ("kSecAttrIsPermanent", kSecAttrIsPermanent),
        ("kSecAttrIsSensitive", kSecAttrIsSensitive),
        ("kSecAttrIsExtractable", kSecAttrIsExtractable),
        ("kSecAttrApplicationTag", kSecAttrApplicationTag),
        ("kSecAttrKeyType", kSecAttrKeyType),
        ("kSecAttrKeySizeInBits", kSecAttrKeySizeInBits),
        ("kSecAttrEffectiveKeySize", kSecAttrEffectiveKeySize),
        ("kSecAttrCanEncrypt", kSecAttrCanEncrypt),
        ("kSecAttrCanDecrypt", kSecAttrCanDecrypt),
        ("kSecAttrCanDerive", kSecAttrCanDerive),
        ("kSecAttrCanSign", kSecAttrCanSign),
        ("kSecAttrCanVerify", kSecAttrCanVerify),
        ("kSecAttrCanWrap", kSecAttrCanWrap),
        ("kSecAttrCanUnwrap", kSecAttrCanUnwrap),
        ("kSecAttrSyncViewHint", kSecAttrSyncViewHint),
        ("kSecAttrTokenID", kSecAttrTokenID),
        ("kSecAttrPersistentReference", kSecAttrPersistentReference),
        ("kSecAttrPersistantReference", kSecAttrPersistantReference),
        ("kSecAttrAccessibleWhenUnlocked", kSecAttrAccessibleWhenUnlocked),
        ("kSecAttrAccessibleAfterFirstUnlock", kSecAttrAccessibleAfterFirstUnlock),
        ("kSecAttrAccessibleAlways", kSecAttrAccessibleAlways),
        ("kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly", kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly),
        ("kSecAttrAccessibleWhenUnlockedThisDeviceOnly", kSecAttrAccessibleWhenUnlockedThisDeviceOnly),
        ("kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly", kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly),
        ("kSecAttrAccessibleAlwaysThisDeviceOnly", kSecAttrAccessibleAlwaysThisDeviceOnly),
        ("kSecAttrSynchronizableAny", kSecAttrSynchronizableAny),
        ("kSecAttrProtocolFTP", kSecAttrProtocolFTP),
        ("kSecAttrProtocolFTPAccount", kSecAttrProtocolFTPAccount),
        ("kSecAttrProtocolHTTP", kSecAttrProtocolHTTP),
        ("kSecAttrProtocolIRC", kSecAttrProtocolIRC),
        ("kSecAttrProtocolNNTP", kSecAttrProtocolNNTP),
        ("kSecAttrProtocolPOP3", kSecAttrProtocolPOP3),
        ("kSecAttrProtocolSMTP", kSecAttrProtocolSMTP),
        ("kSecAttrProtocolSOCKS", kSecAttrProtocolSOCKS),
        ("kSecAttrProtocolIMAP", kSecAttrProtocolIMAP),
        ("kSecAttrProtocolLDAP", kSecAttrProtocolLDAP),
        ("kSecAttrProtocolAppleTalk", kSecAttrProtocolAppleTalk),
        ("kSecAttrProtocolAFP", kSecAttrProtocolAFP),
        ("kSecAttrProtocolTelnet", kSecAttrProtocolTelnet),
        ("kSecAttrProtocolSSH", kSecAttrProtocolSSH),
        ("kSecAttrProtocolFTPS", kSecAttrProtocolFTPS),
        ("kSecAttrProtocolHTTPS", kSecAttrProtocolHTTPS),
        ("kSecAttrProtocolHTTPProxy", kSecAttrProtocolHTTPProxy),
        ("kSecAttrProtocolHTTPSProxy", kSecAttrProtocolHTTPSProxy),
        ("kSecAttrProtocolFTPProxy", kSecAttrProtocolFTPProxy),
        ("kSecAttrProtocolSMB", kSecAttrProtocolSMB),
        ("kSecAttrProtocolRTSP", kSecAttrProtocolRTSP),
        ("kSecAttrProtocolRTSPProxy", kSecAttrProtocolRTSPProxy),
        ("kSecAttrProtocolDAAP", kSecAttrProtocolDAAP),
        ("kSecAttrProtocolEPPC", kSecAttrProtocolEPPC),
        ("kSecAttrProtocolIPP", kSecAttrProtocolIPP),
        ("kSecAttrProtocolNNTPS", kSecAttrProtocolNNTPS),
        ("kSecAttrProtocolLDAPS", kSecAttrProtocolLDAPS),
        ("kSecAttrProtocolTelnetS", kSecAttrProtocolTelnetS),
        ("kSecAttrProtocolIMAPS", kSecAttrProtocolIMAPS),
        ("kSecAttrProtocolIRCS", kSecAttrProtocolIRCS),
        ("kSecAttrProtocolPOP3S", kSecAttrProtocolPOP3S),
        ("kSecAttrAuthenticationTypeNTLM", kSecAttrAuthenticationTypeNTLM),
        ("kSecAttrAuthenticationTypeMSN", kSecAttrAuthenticationTypeMSN),
        ("kSecAttrAuthenticationTypeDPA", kSecAttrAuthenticationTypeDPA),
        ("kSecAttrAuthenticationTypeRPA", kSecAttrAuthenticationTypeRPA),
        ("kSecAttrAuthenticationTypeHTTPBasic", kSecAttrAuthenticationTypeHTTPBasic),
        ("kSecAttrAuthenticationTypeHTTPDigest", kSecAttrAuthenticationTypeHTTPDigest),
        ("kSecAttrAuthenticationTypeHTMLForm", kSecAttrAuthenticationTypeHTMLForm),
        ("kSecAttrAuthenticationTypeDefault", kSecAttrAuthenticationTypeDefault),
        ("kSecAttrKeyClassPublic", kSecAttrKeyClassPublic),
        ("kSecAttrKeyClassPrivate", kSecAttrKeyClassPrivate),
        ("kSecAttrKeyClassSymmetric", kSecAttrKeyClassSymmetric),
        ("kSecAttrKeyTypeRSA", kSecAttrKeyTypeRSA),
        ("kSecAttrKeyTypeEC", kSecAttrKeyTypeEC),
        ("kSecAttrKeyTypeECSECPrimeRandom", kSecAttrKeyTypeECSECPrimeRandom),
        ("kSecAttrTokenIDSecureEnclave", kSecAttrTokenIDSecureEnclave),
        ("kSecPrivateKeyAttrs", kSecPrivateKeyAttrs),
        ("kSecPublicKeyAttrs", kSecPublicKeyAttrs),
        ("kSecImportExportPassphrase", kSecImportExportPassphrase),
        ("kSecImportToMemoryOnly", kSecImportToMemoryOnly),
        ("kSecImportExportKeychain", kSecImportExportKeychain),
        ("kSecImportItemLabel", kSecImportItemLabel),
        ("kSecImportItemKeyID", kSecImportItemKeyID),
        ("kSecImportItemTrust", kSecImportItemTrust),
        ("kSecImportItemCertChain", kSecImportItemCertChain),
        ("kSecImportItemIdentity", kSecImportItemIdentity),
        ("kSecMatchPolicy", kSecMatchPolicy),
        ("kSecMatchItemList", kSecMatchItemList),
        ("kSecMatchSearchList", kSecMatchSearchList),
        ("kSecMatchIssuers", kSecMatchIssuers),
        ("kSecMatchEmailAddressIfPresent", kSecMatchEmailAddressIfPresent),
        ("kSecMatchSubjectContains", kSecMatchSubjectContains),
        ("kSecMatchCaseInsensitive", kSecMatchCaseInsensitive),
        ("kSecMatchSubjectStartsWith", kSecMatchSubjectStartsWith),
        ("kSecMatchSubjectEndsWith", kSecMatchSubjectEndsWith),
        ("kSecMatchSubjectWholeString", kSecMatchSubjectWholeString),
        ("kSecMatchDiacriticInsensitive", kSecMatchDiacriticInsensitive),
        ("kSecMatchWidthInsensitive", kSecMatchWidthInsensitive),
        ("kSecMatchTrustedOnly", kSecMatchTrustedOnly),
        ("kSecMatchValidOnDate", kSecMatchValidOnDate),
        ("kSecMatchLimit", kSecMatchLimit),
        ("kSecMatchLimitOne", kSecMatchLimitOne),
        ("kSecMatchLimitAll", kSecMatchLimitAll),
        ("kSecReturnData", kSecReturnData),
        ("kSecReturnAttributes", kSecReturnAttributes),
        ("kSecReturnRef", kSecReturnRef),
        ("kSecReturnPersistentRef", kSecReturnPersistentRef),
        ("kSecValueData", kSecValueData),
        ("kSecValueRef", kSecValueRef),
        ("kSecValuePersistentRef", kSecValuePersistentRef),
        ("kSecUseItemList", kSecUseItemList),
        ("kSecUseKeychain", kSecUseKeychain),
        ("kSecUseOperationPrompt", kSecUseOperationPrompt),
        ("kSecUseNoAuthenticationUI", kSecUseNoAuthenticationUI),
        ("kSecUseAuthenticationUI", kSecUseAuthenticationUI),
        ("kSecUseAuthenticationUIAllow", kSecUseAuthenticationUIAllow),
        ("kSecUseAuthenticationUIFail", kSecUseAuthenticationUIFail),
        ("kSecUseAuthenticationUISkip", kSecUseAuthenticationUISkip),
        ("kSecUseAuthenticationContext", kSecUseAuthenticationContext),
        ("kSecUseDataProtectionKeychain", kSecUseDataProtectionKeychain),
    ]
}
