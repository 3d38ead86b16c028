/// Raw keys and values of `SecItem` dictionaries that are not item attributes
/// (Apple's `kSecClass`, `kSecMatch*`, `kSecReturn*`, `kSecValue*`, `kSecUse*`).
public enum QueryKey {
    public static let itemClass = SecName.kSecClass
    public static let matchLimit = SecName.kSecMatchLimit
    public static let matchLimitOne = SecName.kSecMatchLimitOne
    public static let matchLimitAll = SecName.kSecMatchLimitAll
    public static let returnData = SecName.kSecReturnData
    public static let returnAttributes = SecName.kSecReturnAttributes
    public static let returnRef = SecName.kSecReturnRef
    public static let returnPersistentRef = SecName.kSecReturnPersistentRef
    public static let valueData = SecName.kSecValueData
    public static let valueRef = SecName.kSecValueRef
    public static let valuePersistentRef = SecName.kSecValuePersistentRef
    /// `kSecUseTombstones`: whether deleting a synchronizable item leaves a tombstone.
    public static let useTombstones = "u_Tomb"
    /// `kSecUseDataProtectionKeychain`; accepted and ignored, as every item lives in one.
    public static let useDataProtectionKeychain = SecName.kSecUseDataProtectionKeychain
    /// `kSecUseKeychain` (add into this keychain) and `kSecMatchSearchList` (search these):
    /// securityd routes the query by them and removes them before the store sees it.
    public static let useKeychain = SecName.kSecUseKeychain
    public static let matchSearchList = SecName.kSecMatchSearchList
    /// `kSecAttrAccessControl`: an encoded ``AccessControl``.
    public static let accessControl = SecName.kSecAttrAccessControl
    /// `kSecUseAuthenticationContext`: the id of an authentication context (LAContext).
    public static let authenticationContext = SecName.kSecUseAuthenticationContext
    /// `kSecUseAuthenticationUI` and its values.
    public static let authenticationUI = SecName.kSecUseAuthenticationUI
    public static let authenticationUIAllow = SecName.kSecUseAuthenticationUIAllow
    public static let authenticationUIFail = SecName.kSecUseAuthenticationUIFail
    public static let authenticationUISkip = SecName.kSecUseAuthenticationUISkip
    /// `kSecUseOperationPrompt`: what the user is told when asked to authenticate.
    public static let operationPrompt = SecName.kSecUseOperationPrompt
    /// `kSecUseNoAuthenticationUI` (deprecated): true means `kSecUseAuthenticationUIFail`.
    public static let noAuthenticationUI = SecName.kSecUseNoAuthenticationUI
    /// `kSecAttrSynchronizableAny`, the `sync` value that matches both.
    public static let synchronizableAny = SecName.kSecAttrSynchronizableAny

    /// Match options Apple defines that this keychain does not implement yet.
    public static let unimplementedMatchOptions: Set<String> = [
        SecName.kSecMatchPolicy, SecName.kSecMatchItemList,
        SecName.kSecMatchIssuers, SecName.kSecMatchEmailAddressIfPresent, SecName.kSecMatchSubjectContains,
        SecName.kSecMatchSubjectStartsWith, SecName.kSecMatchSubjectEndsWith, SecName.kSecMatchSubjectWholeString, SecName.kSecMatchCaseInsensitive,
        SecName.kSecMatchDiacriticInsensitive, SecName.kSecMatchWidthInsensitive, SecName.kSecMatchTrustedOnly,
        SecName.kSecMatchValidOnDate, "m_HostOrSubdomainOfHost",
    ]
}
