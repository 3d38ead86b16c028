import KeychainModel

/// Pads a record's plaintext to a bucket so that its ciphertext tells the server little of
/// its length: powers of two from 64 to 1,024 bytes, then whole KiB (a 1-character and a
/// 40-character password both fill 64 bytes). ISO/IEC 7816-4 padding: 0x80, then zeros.
/// (CKKS pads to 20-byte blocks, with an extra block for short secrets.)
public enum SyncPadding {
    /// The size a plaintext of `count` bytes is padded to (at least one byte of padding).
    public static func bucket(for count: Int) -> Int {
        let needed = count + 1
        var size = 64
        while size < needed && size < 1024 { size *= 2 }
        if needed <= size { return size }
        return (needed + 1023) / 1024 * 1024
    }

    /// `plaintext` followed by 0x80 and zeros up to its bucket, in zeroing storage.
    public static func pad(_ plaintext: SecretBytes) -> SecretBytes {
        let size = bucket(for: plaintext.count)
        return SecretBytes(count: size) { out in
            plaintext.withUnsafeBytes { source in
                out.copyMemory(from: source)
            }
            out[plaintext.count] = 0x80
            for index in (plaintext.count + 1)..<size { out[index] = 0 }
        }
    }

    /// The plaintext without its padding; throws on a body whose padding is not ISO 7816-4.
    public static func unpad(_ padded: SecretBytes) throws(SyncCryptoError) -> SecretBytes {
        let end: Int? = padded.withUnsafeBytes { bytes in
            var index = bytes.count - 1
            while index >= 0 && bytes[index] == 0 { index -= 1 }
            return index >= 0 && bytes[index] == 0x80 ? index : nil
        }
        guard let end else { throw SyncCryptoError(.malformed, "the record's padding is damaged") }
        return padded.withUnsafeBytes { SecretBytes(copying: UnsafeRawBufferPointer(rebasing: $0[0..<end])) }
    }
}
