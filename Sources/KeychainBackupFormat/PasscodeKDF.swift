import CryptoExtras
public import FoundationEssentials
public import KeychainModel

/// scrypt parameters for deriving a key from the passcode, stored with the keybag.
public struct PasscodeKDF: Sendable, Hashable {
    /// log2 of scrypt's cost N.
    public var logN: UInt8
    /// scrypt's block size r.
    public var blockSize: UInt32
    /// scrypt's parallelism p.
    public var parallelism: UInt32
    /// A random 32-byte salt, new for every passcode.
    public var salt: Data

    public init(logN: UInt8, blockSize: UInt32 = 8, parallelism: UInt32 = 1, salt: Data) {
        self.logN = logN
        self.blockSize = blockSize
        self.parallelism = parallelism
        self.salt = salt
    }

    /// Memory one derivation needs: 128 · r · N bytes; `Int.max` for parameters so large the
    /// product overflows (they come from files: a crafted header must be refused, not trap).
    public var memoryBytes: Int {
        guard logN < 56 else { return .max }
        let (perBlock, overflowed) = (128 * Int(blockSize)).multipliedReportingOverflow(by: 1 << Int(logN))
        return overflowed ? .max : perBlock
    }

    /// Memory of all `parallelism` lanes together (`Int.max` when it overflows).
    public var totalMemoryBytes: Int {
        let (total, overflowed) = memoryBytes.multipliedReportingOverflow(by: Int(parallelism))
        return overflowed ? .max : total
    }

    /// Derives 32 bytes from `passcode`.
    ///
    /// - Throws: `errSecParam` when the parameters are out of range (a damaged keybag).
    public func derive(_ passcode: SecretBytes) throws -> SecretBytes {
        guard logN >= 10, logN <= 24, blockSize >= 1, blockSize <= 64, parallelism >= 1, parallelism <= 16 else {
            throw KeychainError.decode("the keybag's passcode parameters are out of range")
        }
        do {
            let key = try passcode.withUnsafeBytes { bytes in
                try KDF.Scrypt.deriveKey(
                    from: bytes, salt: salt, outputByteCount: 32, rounds: 1 << Int(logN),
                    blockSize: Int(blockSize), parallelism: Int(parallelism), maxMemory: memoryBytes + (1 << 20))
            }
            return key.withUnsafeBytes { SecretBytes($0) }
        } catch {
            throw KeychainError(status: OSStatusCode.allocate, message: "scrypt failed")
        }
    }

    /// Parameters with bounded memory (N = 2^`logN`, r = 8: 64 MiB at 2^16) whose derivation
    /// takes at least `target` seconds on this machine: p grows instead of N (at most 16), so
    /// a slow derivation never needs more memory than a small container has. One probe.
    public static func calibratedParallelism(target: Double, logN: UInt8, salt: Data) throws -> PasscodeKDF {
        var kdf = PasscodeKDF(logN: logN, salt: salt)
        guard target > 0 else { return kdf }
        let start = ContinuousClock.now
        _ = try kdf.derive(SecretBytes("calibration".utf8))
        let elapsed = ContinuousClock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        kdf.parallelism = UInt32(min(16, max(1, (target / max(seconds, 1e-6)).rounded(.up))))
        return kdf
    }

    /// Parameters whose derivation takes at least `target` seconds on this machine:
    /// N doubles from 2^14 until one derivation is slow enough (capped at 2^22, 4 GiB·r/8).
    public static func calibrated(target: Double = 0.1, minimumLogN: UInt8 = 14, salt: Data) throws -> PasscodeKDF {
        var kdf = PasscodeKDF(logN: minimumLogN, salt: salt)
        let probe = SecretBytes("calibration".utf8)
        while kdf.logN < 22 {
            let start = ContinuousClock.now
            _ = try kdf.derive(probe)
            let elapsed = ContinuousClock.now - start
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            if seconds >= target { break }
            kdf.logN += 1
        }
        return kdf
    }
}
