import Crypto
import CryptoExtras
import Foundation
import Security

/// SecKey operations through the `Security` API, each beside its floor: the same operation
/// done directly with swift-crypto in this process. (Software keys work in the caller's
/// process, as Apple's do, so no socket is involved.)
enum KeyOperations {
    static let message = Data(repeating: 0x42, count: 64)

    static func measure(count: Int) throws -> [BenchReport.KeyOperation] {
        let ecKey = try randomKey(kSecAttrKeyTypeECSECPrimeRandom, 256)
        let rsaKey = try randomKey(kSecAttrKeyTypeRSA, 2048)
        let ecFloorKey = P256.Signing.PrivateKey()
        let rsaFloorKey = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let ecPublic = try require(SecKeyCopyPublicKey(ecKey))
        let ecSignature = try require(SecKeyCreateSignature(ecKey, .ecdsaSignatureMessageX962SHA256, message as CFData, nil))
        let ecFloorSignature = try ecFloorKey.signature(for: message)
        return [
            try row(
                "P-256 sign (software key)", floor: "swift-crypto P-256 sign", count: count,
                { _ = try require(SecKeyCreateSignature(ecKey, .ecdsaSignatureMessageX962SHA256, message as CFData, nil)) },
                floor: { _ = try ecFloorKey.signature(for: message) }),
            try row(
                "P-256 verify (software key)", floor: "swift-crypto P-256 verify", count: count,
                { guard SecKeyVerifySignature(ecPublic, .ecdsaSignatureMessageX962SHA256, message as CFData, ecSignature, nil) else { throw BenchError("verify failed") } },
                floor: { guard ecFloorKey.publicKey.isValidSignature(ecFloorSignature, for: message) else { throw BenchError("verify failed") } }),
            try row(
                "RSA-2048 sign PKCS#1 v1.5 SHA-256", floor: "swift-crypto RSA-2048 sign", count: max(count / 10, 1),
                { _ = try require(SecKeyCreateSignature(rsaKey, .rsaSignatureMessagePKCS1v15SHA256, message as CFData, nil)) },
                floor: { _ = try rsaFloorKey.signature(for: message, padding: .insecurePKCS1v1_5) }),
        ]
    }

    /// P-256 signing with an enclave key: the request goes to securityd, which has the
    /// enclave unwrap the key and sign; its floor is the same signature in this process.
    static func measureEnclave(count: Int) throws -> BenchReport.KeyOperation {
        let parameters: [String: Any] = [
            kSecAttrKeyType as String: kSecAttrKeyTypeECSECPrimeRandom, kSecAttrKeySizeInBits as String: 256,
            kSecAttrTokenID as String: kSecAttrTokenIDSecureEnclave,
        ]
        let enclaveKey = try require(SecKeyCreateRandomKey(parameters as CFDictionary, nil))
        let floorKey = P256.Signing.PrivateKey()
        return try row(
            "P-256 sign (enclave key)", floor: "swift-crypto P-256 sign", count: count,
            { _ = try require(SecKeyCreateSignature(enclaveKey, .ecdsaSignatureMessageX962SHA256, message as CFData, nil)) },
            floor: { _ = try floorKey.signature(for: message) })
    }

    static func row(
        _ name: String, floor floorName: String, count: Int, _ operation: () throws -> Void, floor: () throws -> Void
    ) throws -> BenchReport.KeyOperation {
        for _ in 0..<min(count, 50) {
            try operation()
            try floor()
        }
        let measured = try Latencies.measure(count) { _ in try operation() }
        let bare = try Latencies.measure(count) { _ in try floor() }
        return BenchReport.KeyOperation(
            operation: name, samples: measured.count, p50Micros: measured.p50, p99Micros: measured.p99, floor: floorName,
            floorMicros: bare.p50, ratio: measured.p50 / bare.p50)
    }

    private static func randomKey(_ type: CFString, _ bits: Int) throws -> SecKey {
        let parameters = [kSecAttrKeyType as String: type, kSecAttrKeySizeInBits as String: bits] as CFDictionary
        return try require(SecKeyCreateRandomKey(parameters, nil))
    }

    private static func require<T>(_ value: T?) throws -> T {
        guard let value else { throw BenchError("a SecKey call failed") }
        return value
    }
}
