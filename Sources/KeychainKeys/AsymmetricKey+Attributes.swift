public import KeychainModel

extension AsymmetricKey {
    /// The attributes Apple's software keys report (`SecKeyCopyAttributes`) and add to an
    /// item stored from a key (`SecItemAdd` with `kSecValueRef`): class, type, sizes,
    /// `klbl` (SHA-1 of the public key), the capability flags by key class, and `v_Data`,
    /// the external representation — for a private key, its secret.
    public var attributes: [String: KeychainValue] {
        let isPrivate = keyClass == .private
        var attributes: [String: KeychainValue] = [
            SecName.kSecClass: .string(SecName.kSecClassKey),
            SecName.kSecAttrKeyClass: .string(keyClass.attributeValue),
            SecName.kSecAttrApplicationLabel: .data(applicationLabel),
            SecName.kSecAttrIsPermanent: .bool(true),
            SecName.kSecAttrKeyType: .string(type.attributeValue),
            SecName.kSecAttrKeySizeInBits: .number(Int64(sizeInBits)),
            SecName.kSecAttrEffectiveKeySize: .number(Int64(sizeInBits)),
            SecName.kSecAttrIsSensitive: .bool(false),
            SecName.kSecAttrIsExtractable: .bool(true),
            SecName.kSecAttrCanEncrypt: .bool(!isPrivate),
            SecName.kSecAttrCanDecrypt: .bool(isPrivate),
            // Apple's EC public keys cannot derive (SecECKey.m); everything else can.
            SecName.kSecAttrCanDerive: .bool(isPrivate || type == .rsa),
            SecName.kSecAttrCanSign: .bool(isPrivate),
            SecName.kSecAttrCanVerify: .bool(!isPrivate),
            SecName.kSecAttrCanWrap: .bool(!isPrivate),
            SecName.kSecAttrCanUnwrap: .bool(isPrivate),
            SecName.kSecValueData: .data(externalRepresentation),
        ]
        // Apple's private attribute names (SecItemPriv.h): private, modifiable, was always
        // sensitive, was never extractable, can sign-recover, can verify-recover.
        for (name, value) in [("priv", true), ("modi", true), ("asen", false), ("next", false), ("snrc", false), ("vyrc", false)] {
            attributes[name] = .bool(value)
        }
        return attributes
    }
}
