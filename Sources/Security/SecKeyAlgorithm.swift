import Foundation

/// `SecKeyAlgorithm`: Apple's algorithm strings, with the names Swift gives them
/// (`.ecdsaSignatureMessageX962SHA256`). Every value Apple declares for RSA and elliptic-curve
/// keys exists so that code compiles; `SecKeyIsAlgorithmSupported` says which ones a key
/// does here (docs/ARCHITECTURE.md lists those that are not).
public struct SecKeyAlgorithm: RawRepresentable, Hashable, @unchecked Sendable {
    // @unchecked: CFString is NSString, not marked Sendable; these values are never mutated.
    public let rawValue: CFString

    public init(rawValue: CFString) {
        self.rawValue = rawValue
    }

    init(_ name: String) {
        rawValue = NSString(string: name)
    }
}

/// `SecKeyKeyExchangeParameter`: the keys of `SecKeyCopyKeyExchangeResult`'s parameters.
public struct SecKeyKeyExchangeParameter: RawRepresentable, Hashable, @unchecked Sendable {
    public let rawValue: CFString

    public init(rawValue: CFString) {
        self.rawValue = rawValue
    }

    /// The number of bytes the KDF derives (required by the `…X963…` algorithms).
    public static let requestedSize = SecKeyKeyExchangeParameter(rawValue: NSString(string: "requestedSize"))
    /// Data the KDF mixes in (optional).
    public static let sharedInfo = SecKeyKeyExchangeParameter(rawValue: NSString(string: "sharedInfo"))
}

/// `SecKeyOperationType`, with Apple's raw values.
public enum SecKeyOperationType: CFIndex, Sendable {
    case encrypt = 0
    case decrypt = 1
    case sign = 2
    case verify = 3
    case keyExchange = 4
}

// Generated from Apple's list (Security's SecKeyAdaptors.m); the strings are Apple's.
extension SecKeyAlgorithm {
    public static let rsaSignatureRaw = SecKeyAlgorithm("algid:sign:RSA:raw")
    public static let rsaSignatureDigestPKCS1v15Raw = SecKeyAlgorithm("algid:sign:RSA:digest-PKCS1v15")
    public static let rsaSignatureDigestPKCS1v15MD5 = SecKeyAlgorithm("algid:sign:RSA:digest-PKCS1v15:MD5")
    public static let rsaSignatureDigestPKCS1v15SHA1 = SecKeyAlgorithm("algid:sign:RSA:digest-PKCS1v15:SHA1")
    public static let rsaSignatureDigestPKCS1v15SHA224 = SecKeyAlgorithm("algid:sign:RSA:digest-PKCS1v15:SHA224")
    public static let rsaSignatureDigestPKCS1v15SHA256 = SecKeyAlgorithm("algid:sign:RSA:digest-PKCS1v15:SHA256")
    public static let rsaSignatureDigestPKCS1v15SHA384 = SecKeyAlgorithm("algid:sign:RSA:digest-PKCS1v15:SHA384")
    public static let rsaSignatureDigestPKCS1v15SHA512 = SecKeyAlgorithm("algid:sign:RSA:digest-PKCS1v15:SHA512")
    public static let rsaSignatureDigestPSSSHA1 = SecKeyAlgorithm("algid:sign:RSA:digest-PSS:SHA1:SHA1:20")
    public static let rsaSignatureDigestPSSSHA224 = SecKeyAlgorithm("algid:sign:RSA:digest-PSS:SHA224:SHA224:24")
    public static let rsaSignatureDigestPSSSHA256 = SecKeyAlgorithm("algid:sign:RSA:digest-PSS:SHA256:SHA256:32")
    public static let rsaSignatureDigestPSSSHA384 = SecKeyAlgorithm("algid:sign:RSA:digest-PSS:SHA384:SHA384:48")
    public static let rsaSignatureDigestPSSSHA512 = SecKeyAlgorithm("algid:sign:RSA:digest-PSS:SHA512:SHA512:64")
    public static let rsaSignatureMessagePKCS1v15MD5 = SecKeyAlgorithm("algid:sign:RSA:message-PKCS1v15:MD5")
    public static let rsaSignatureMessagePKCS1v15SHA1 = SecKeyAlgorithm("algid:sign:RSA:message-PKCS1v15:SHA1")
    public static let rsaSignatureMessagePKCS1v15SHA224 = SecKeyAlgorithm("algid:sign:RSA:message-PKCS1v15:SHA224")
    public static let rsaSignatureMessagePKCS1v15SHA256 = SecKeyAlgorithm("algid:sign:RSA:message-PKCS1v15:SHA256")
    public static let rsaSignatureMessagePKCS1v15SHA384 = SecKeyAlgorithm("algid:sign:RSA:message-PKCS1v15:SHA384")
    public static let rsaSignatureMessagePKCS1v15SHA512 = SecKeyAlgorithm("algid:sign:RSA:message-PKCS1v15:SHA512")
    public static let rsaSignatureMessagePSSSHA1 = SecKeyAlgorithm("algid:sign:RSA:message-PSS:SHA1:SHA1:20")
    public static let rsaSignatureMessagePSSSHA224 = SecKeyAlgorithm("algid:sign:RSA:message-PSS:SHA224:SHA224:24")
    public static let rsaSignatureMessagePSSSHA256 = SecKeyAlgorithm("algid:sign:RSA:message-PSS:SHA256:SHA256:32")
    public static let rsaSignatureMessagePSSSHA384 = SecKeyAlgorithm("algid:sign:RSA:message-PSS:SHA384:SHA384:48")
    public static let rsaSignatureMessagePSSSHA512 = SecKeyAlgorithm("algid:sign:RSA:message-PSS:SHA512:SHA512:64")
    public static let ecdsaSignatureRFC4754 = SecKeyAlgorithm("algid:sign:ECDSA:RFC4754")
    public static let ecdsaSignatureDigestRFC4754 = SecKeyAlgorithm("algid:sign:ECDSA:digest-RFC4754")
    public static let ecdsaSignatureDigestRFC4754SHA1 = SecKeyAlgorithm("algid:sign:ECDSA:digest-RFC4754:SHA1")
    public static let ecdsaSignatureDigestRFC4754SHA224 = SecKeyAlgorithm("algid:sign:ECDSA:digest-RFC4754:SHA224")
    public static let ecdsaSignatureDigestRFC4754SHA256 = SecKeyAlgorithm("algid:sign:ECDSA:digest-RFC4754:SHA256")
    public static let ecdsaSignatureDigestRFC4754SHA384 = SecKeyAlgorithm("algid:sign:ECDSA:digest-RFC4754:SHA384")
    public static let ecdsaSignatureDigestRFC4754SHA512 = SecKeyAlgorithm("algid:sign:ECDSA:digest-RFC4754:SHA512")
    public static let ecdsaSignatureMessageRFC4754SHA1 = SecKeyAlgorithm("algid:sign:ECDSA:message-RFC4754:SHA1")
    public static let ecdsaSignatureMessageRFC4754SHA224 = SecKeyAlgorithm("algid:sign:ECDSA:message-RFC4754:SHA224")
    public static let ecdsaSignatureMessageRFC4754SHA256 = SecKeyAlgorithm("algid:sign:ECDSA:message-RFC4754:SHA256")
    public static let ecdsaSignatureMessageRFC4754SHA384 = SecKeyAlgorithm("algid:sign:ECDSA:message-RFC4754:SHA384")
    public static let ecdsaSignatureMessageRFC4754SHA512 = SecKeyAlgorithm("algid:sign:ECDSA:message-RFC4754:SHA512")
    public static let ecdsaSignatureDigestX962 = SecKeyAlgorithm("algid:sign:ECDSA:digest-X962")
    public static let ecdsaSignatureDigestX962SHA1 = SecKeyAlgorithm("algid:sign:ECDSA:digest-X962:SHA1")
    public static let ecdsaSignatureDigestX962SHA224 = SecKeyAlgorithm("algid:sign:ECDSA:digest-X962:SHA224")
    public static let ecdsaSignatureDigestX962SHA256 = SecKeyAlgorithm("algid:sign:ECDSA:digest-X962:SHA256")
    public static let ecdsaSignatureDigestX962SHA384 = SecKeyAlgorithm("algid:sign:ECDSA:digest-X962:SHA384")
    public static let ecdsaSignatureDigestX962SHA512 = SecKeyAlgorithm("algid:sign:ECDSA:digest-X962:SHA512")
    public static let ecdsaSignatureMessageX962SHA1 = SecKeyAlgorithm("algid:sign:ECDSA:message-X962:SHA1")
    public static let ecdsaSignatureMessageX962SHA224 = SecKeyAlgorithm("algid:sign:ECDSA:message-X962:SHA224")
    public static let ecdsaSignatureMessageX962SHA256 = SecKeyAlgorithm("algid:sign:ECDSA:message-X962:SHA256")
    public static let ecdsaSignatureMessageX962SHA384 = SecKeyAlgorithm("algid:sign:ECDSA:message-X962:SHA384")
    public static let ecdsaSignatureMessageX962SHA512 = SecKeyAlgorithm("algid:sign:ECDSA:message-X962:SHA512")
    public static let rsaEncryptionRaw = SecKeyAlgorithm("algid:encrypt:RSA:raw")
    public static let rsaEncryptionPKCS1 = SecKeyAlgorithm("algid:encrypt:RSA:PKCS1")
    public static let rsaEncryptionOAEPSHA1 = SecKeyAlgorithm("algid:encrypt:RSA:OAEP:SHA1")
    public static let rsaEncryptionOAEPSHA224 = SecKeyAlgorithm("algid:encrypt:RSA:OAEP:SHA224")
    public static let rsaEncryptionOAEPSHA256 = SecKeyAlgorithm("algid:encrypt:RSA:OAEP:SHA256")
    public static let rsaEncryptionOAEPSHA384 = SecKeyAlgorithm("algid:encrypt:RSA:OAEP:SHA384")
    public static let rsaEncryptionOAEPSHA512 = SecKeyAlgorithm("algid:encrypt:RSA:OAEP:SHA512")
    public static let rsaEncryptionOAEPSHA1AESGCM = SecKeyAlgorithm("algid:encrypt:RSA:OAEP:SHA1:AESGCM")
    public static let rsaEncryptionOAEPSHA224AESGCM = SecKeyAlgorithm("algid:encrypt:RSA:OAEP:SHA224:AESGCM")
    public static let rsaEncryptionOAEPSHA256AESGCM = SecKeyAlgorithm("algid:encrypt:RSA:OAEP:SHA256:AESGCM")
    public static let rsaEncryptionOAEPSHA384AESGCM = SecKeyAlgorithm("algid:encrypt:RSA:OAEP:SHA384:AESGCM")
    public static let rsaEncryptionOAEPSHA512AESGCM = SecKeyAlgorithm("algid:encrypt:RSA:OAEP:SHA512:AESGCM")
    public static let eciesEncryptionStandardX963SHA1AESGCM = SecKeyAlgorithm("algid:encrypt:ECIES:ECDH:KDFX963:SHA1:AESGCM")
    public static let eciesEncryptionStandardX963SHA224AESGCM = SecKeyAlgorithm("algid:encrypt:ECIES:ECDH:KDFX963:SHA224:AESGCM")
    public static let eciesEncryptionStandardX963SHA256AESGCM = SecKeyAlgorithm("algid:encrypt:ECIES:ECDH:KDFX963:SHA256:AESGCM")
    public static let eciesEncryptionStandardX963SHA384AESGCM = SecKeyAlgorithm("algid:encrypt:ECIES:ECDH:KDFX963:SHA384:AESGCM")
    public static let eciesEncryptionStandardX963SHA512AESGCM = SecKeyAlgorithm("algid:encrypt:ECIES:ECDH:KDFX963:SHA512:AESGCM")
    public static let eciesEncryptionCofactorX963SHA1AESGCM = SecKeyAlgorithm("algid:encrypt:ECIES:ECDHC:KDFX963:SHA1:AESGCM")
    public static let eciesEncryptionCofactorX963SHA224AESGCM = SecKeyAlgorithm("algid:encrypt:ECIES:ECDHC:KDFX963:SHA224:AESGCM")
    public static let eciesEncryptionCofactorX963SHA256AESGCM = SecKeyAlgorithm("algid:encrypt:ECIES:ECDHC:KDFX963:SHA256:AESGCM")
    public static let eciesEncryptionCofactorX963SHA384AESGCM = SecKeyAlgorithm("algid:encrypt:ECIES:ECDHC:KDFX963:SHA384:AESGCM")
    public static let eciesEncryptionCofactorX963SHA512AESGCM = SecKeyAlgorithm("algid:encrypt:ECIES:ECDHC:KDFX963:SHA512:AESGCM")
    public static let eciesEncryptionStandardVariableIVX963SHA224AESGCM = SecKeyAlgorithm("algid:encrypt:ECIES:ECDH:KDFX963:SHA224:AESGCM-KDFIV")
    public static let eciesEncryptionStandardVariableIVX963SHA256AESGCM = SecKeyAlgorithm("algid:encrypt:ECIES:ECDH:KDFX963:SHA256:AESGCM-KDFIV")
    public static let eciesEncryptionStandardVariableIVX963SHA384AESGCM = SecKeyAlgorithm("algid:encrypt:ECIES:ECDH:KDFX963:SHA384:AESGCM-KDFIV")
    public static let eciesEncryptionStandardVariableIVX963SHA512AESGCM = SecKeyAlgorithm("algid:encrypt:ECIES:ECDH:KDFX963:SHA512:AESGCM-KDFIV")
    public static let eciesEncryptionCofactorVariableIVX963SHA224AESGCM = SecKeyAlgorithm("algid:encrypt:ECIES:ECDHC:KDFX963:SHA224:AESGCM-KDFIV")
    public static let eciesEncryptionCofactorVariableIVX963SHA256AESGCM = SecKeyAlgorithm("algid:encrypt:ECIES:ECDHC:KDFX963:SHA256:AESGCM-KDFIV")
    public static let eciesEncryptionCofactorVariableIVX963SHA384AESGCM = SecKeyAlgorithm("algid:encrypt:ECIES:ECDHC:KDFX963:SHA384:AESGCM-KDFIV")
    public static let eciesEncryptionCofactorVariableIVX963SHA512AESGCM = SecKeyAlgorithm("algid:encrypt:ECIES:ECDHC:KDFX963:SHA512:AESGCM-KDFIV")
    public static let ecdhKeyExchangeStandard = SecKeyAlgorithm("algid:keyexchange:ECDH")
    public static let ecdhKeyExchangeStandardX963SHA1 = SecKeyAlgorithm("algid:keyexchange:ECDH:KDFX963:SHA1")
    public static let ecdhKeyExchangeStandardX963SHA224 = SecKeyAlgorithm("algid:keyexchange:ECDH:KDFX963:SHA224")
    public static let ecdhKeyExchangeStandardX963SHA256 = SecKeyAlgorithm("algid:keyexchange:ECDH:KDFX963:SHA256")
    public static let ecdhKeyExchangeStandardX963SHA384 = SecKeyAlgorithm("algid:keyexchange:ECDH:KDFX963:SHA384")
    public static let ecdhKeyExchangeStandardX963SHA512 = SecKeyAlgorithm("algid:keyexchange:ECDH:KDFX963:SHA512")
    public static let ecdhKeyExchangeCofactor = SecKeyAlgorithm("algid:keyexchange:ECDHC")
    public static let ecdhKeyExchangeCofactorX963SHA1 = SecKeyAlgorithm("algid:keyexchange:ECDHC:KDFX963:SHA1")
    public static let ecdhKeyExchangeCofactorX963SHA224 = SecKeyAlgorithm("algid:keyexchange:ECDHC:KDFX963:SHA224")
    public static let ecdhKeyExchangeCofactorX963SHA256 = SecKeyAlgorithm("algid:keyexchange:ECDHC:KDFX963:SHA256")
    public static let ecdhKeyExchangeCofactorX963SHA384 = SecKeyAlgorithm("algid:keyexchange:ECDHC:KDFX963:SHA384")
    public static let ecdhKeyExchangeCofactorX963SHA512 = SecKeyAlgorithm("algid:keyexchange:ECDHC:KDFX963:SHA512")
}
