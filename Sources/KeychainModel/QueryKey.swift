/// Raw keys and values of `SecItem` dictionaries that are not item attributes
/// (Apple's `kSecClass`, `kSecMatch*`, `kSecReturn*`, `kSecValue*`, `kSecUse*`).
public enum QueryKey {
    public static let itemClass = "class"
    public static let matchLimit = "m_Limit"
    public static let matchLimitOne = "m_LimitOne"
    public static let matchLimitAll = "m_LimitAll"
    public static let returnData = "r_Data"
    public static let returnAttributes = "r_Attributes"
    public static let returnRef = "r_Ref"
    public static let returnPersistentRef = "r_PersistentRef"
    public static let valueData = "v_Data"
    public static let valueRef = "v_Ref"
    public static let valuePersistentRef = "v_PersistentRef"
    /// `kSecUseTombstones`: whether deleting a synchronizable item leaves a tombstone.
    public static let useTombstones = "u_Tomb"
    /// `kSecUseDataProtectionKeychain`; accepted and ignored, as every item lives in one.
    public static let useDataProtectionKeychain = "nleg"
    /// `kSecAttrAccessControl`: an encoded ``AccessControl``.
    public static let accessControl = "accc"
    /// `kSecUseAuthenticationContext`: the id of an authentication context (LAContext).
    public static let authenticationContext = "u_AuthCtx"
    /// `kSecUseAuthenticationUI` and its values.
    public static let authenticationUI = "u_AuthUI"
    public static let authenticationUIAllow = "u_AuthUIA"
    public static let authenticationUIFail = "u_AuthUIF"
    public static let authenticationUISkip = "u_AuthUIS"
    /// `kSecUseOperationPrompt`: what the user is told when asked to authenticate.
    public static let operationPrompt = "u_OpPrompt"
    /// `kSecUseNoAuthenticationUI` (deprecated): true means `kSecUseAuthenticationUIFail`.
    public static let noAuthenticationUI = "u_NoAuthUI"
    /// `kSecAttrSynchronizableAny`, the `sync` value that matches both.
    public static let synchronizableAny = "syna"

    /// Match options Apple defines that this keychain does not implement yet.
    public static let unimplementedMatchOptions: Set<String> = [
        "m_Policy", "m_ItemList", "m_SearchList", "m_Issuers", "m_EmailAddressIfPresent",
        "m_SubjectContains", "m_SubjectStartsWith", "m_SubjectEndsWith", "m_SubjectWholeString",
        "m_CaseInsensitive", "m_DiacriticInsensitive", "m_WidthInsensitive", "m_TrustedOnly",
        "m_ValidOnDate", "m_HostOrSubdomainOfHost",
    ]
}
