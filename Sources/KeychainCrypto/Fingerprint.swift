import Crypto
public import FoundationEssentials

/// SHA-256 digests used as names (code hashes, implicit groups), never as keys.
public enum Fingerprint {
    public static func sha256(_ data: Data) -> Data {
        Data(SHA256.hash(data: data))
    }

    public static func sha256Hex(_ data: Data) -> String {
        sha256(data).map { byte in
            let digits = String(byte, radix: 16)
            return digits.count == 1 ? "0" + digits : digits
        }.joined()
    }
}
