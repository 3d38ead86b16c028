import Crypto
public import FoundationEssentials
import KeychainModel

/// SHA-256 digests used as names (code hashes, implicit groups), never as keys.
public enum Fingerprint {
    public static func sha256(_ data: Data) -> Data {
        Data(SHA256.hash(data: data))
    }

    public static func sha256Hex(_ data: Data) -> String {
        Hexadecimal.string(SHA256.hash(data: data))
    }
}
