import Crypto
import CryptoExtras
public import FoundationEssentials
public import KeychainModel

/// A gnome-keyring keyring file (`~/.local/share/keyrings/NAME.keyring`), read with its
/// password: what `security import-keyring` moves into the keychain.
///
/// Version 0 is gnome-keyring's own format (gnome-keyring's `gkm-secret-binary.c`): a
/// plaintext header and, per item, its id, type and hashed attributes; then one AES-128-CBC
/// block whose key and IV come from the password and an 8-byte salt hashed with SHA-256
/// `hash_iterations` times (`egg_symkey_generate_simple`), holding an MD5 of the rest and each
/// item's label, secret, dates, attributes and ACL. Big-endian integers; strings are a 32-bit
/// length (0xffffffff: none) and UTF-8 bytes.
public struct GnomeKeyringFile: Sendable {
    public struct Item: Sendable {
        public var label: String
        public var attributes: [String: String]
        public var secret: SecretBytes
        public var created: Date
        public var modified: Date
    }

    public var label: String
    public var created: Date
    public var modified: Date
    public var items: [Item]

    static let header: [UInt8] = Array("GnomeKeyring\n\r".utf8) + [0] + Array("\n".utf8)
    /// More items than any real keyring holds; a bigger count is damage, not a keyring.
    static let maximumItems: UInt32 = 1_000_000
    /// The most key-derivation iterations a file may ask for (gnome-keyring writes a few
    /// thousand, libsecret 100,000): seconds of work, not hours.
    public static let maximumIterations: UInt32 = 10_000_000

    /// Reads `contents` with `password`.
    ///
    /// - Parameter iterationLimit: the most key-derivation iterations the file may ask for
    ///   (fewer than the default 10,000,000 for a fuzzer's loop).
    /// - Throws: `errSecDecode` for a file that is not a keyring (or is damaged, or of a
    ///   version other than 0 and 1), `errSecAuthFailed` for a wrong password.
    public static func read(_ contents: Data, password: SecretBytes, iterationLimit: UInt32 = maximumIterations) throws -> GnomeKeyringFile {
        let bytes = [UInt8](contents)
        guard bytes.count >= header.count + 2, Array(bytes[0..<header.count]) == header else {
            throw KeychainError.decode("not a gnome-keyring keyring file")
        }
        switch (bytes[header.count], bytes[header.count + 1]) {
        case (0, 0): return try readVersion0(bytes, password: password, iterationLimit: min(iterationLimit, maximumIterations))
        case (1, 0):
            return try GnomeKeyringFileV1.read(bytes[(header.count + 2)...], password: password, iterationLimit: min(iterationLimit, maximumIterations))
        case let (major, minor): throw KeychainError.decode("keyring file version \(major).\(minor) is not one this reads (0.0, 1.0)")
        }
    }

    // MARK: - Version 0

    private static func readVersion0(_ bytes: [UInt8], password: SecretBytes, iterationLimit: UInt32) throws -> GnomeKeyringFile {
        var reader = Reader(bytes, offset: header.count + 2)
        guard try reader.byte() == 0, try reader.byte() == 0 else {
            throw KeychainError.decode("the keyring's cipher or hash is not AES and MD5")
        }
        let label = try reader.string() ?? ""
        let created = try reader.time()
        let modified = try reader.time()
        _ = try reader.uint32()  // flags
        _ = try reader.uint32()  // lock timeout
        let iterations = try reader.uint32()
        let salt = try reader.bytes(8)
        for _ in 0..<4 { _ = try reader.uint32() }  // reserved
        let count = try reader.uint32()
        guard count <= maximumItems else { throw KeychainError.decode("the keyring file is damaged (\(count) items)") }
        // The hashed part: ids, types and attribute hashes; the encrypted part repeats the
        // attributes in full, but not the types.
        var types: [UInt32] = []
        for _ in 0..<count {
            _ = try reader.uint32()  // id
            types.append(try reader.uint32())
            _ = try reader.attributes()
        }
        let size = Int(try reader.uint32())
        guard size % 16 == 0, size >= 16 else { throw KeychainError.decode("the keyring's encrypted part is not whole AES blocks") }
        let encrypted = try reader.bytes(size)
        guard iterations >= 1, iterations <= iterationLimit else {
            throw KeychainError.decode("the keyring file is damaged (\(iterations) hash iterations)")
        }

        let (key, iv) = deriveKeyAndIV(password: password, salt: salt, iterations: Int(iterations))
        guard var plaintext = try? encrypted.withUnsafeBytes({ try AES._CBC.decrypt($0, using: key, iv: iv, noPadding: true) }) else {
            throw KeychainError.decode("the keyring's encrypted part cannot be decrypted")
        }
        // One copy of the decrypted part, read in place and zeroed with the cipher's output.
        var inner = Reader(Array(plaintext), offset: 16)
        plaintext.withUnsafeMutableBytes { SecretBytes.zero($0) }
        defer { inner.zero() }
        // The first 16 bytes are the MD5 of the rest: a wrong password gives another digest.
        guard inner.checksumMatches() else {
            throw KeychainError(status: OSStatusCode.authFailed, message: "the password of the keyring is not this one")
        }
        var items: [Item] = []
        for type in types {
            let label = try inner.string() ?? ""
            let secret = try inner.secret()
            let created = try inner.time()
            let modified = try inner.time()
            _ = try inner.string()  // reserved
            for _ in 0..<4 { _ = try inner.uint32() }
            // gnome-keyring keeps an item's schema as its type, not among its attributes,
            // and shows it on the bus as the attribute xdg:schema: so does the import.
            var attributes = try inner.attributes()
            if attributes[Self.schemaAttribute] == nil, let schema = Self.schema(ofItemType: type) {
                attributes[Self.schemaAttribute] = schema
            }
            let acl = try inner.uint32()
            guard acl <= maximumItems else { throw KeychainError.decode("the keyring file is damaged (ACL)") }
            for _ in 0..<acl {
                _ = try inner.uint32()
                _ = try inner.string()
                _ = try inner.string()
                _ = try inner.string()
                _ = try inner.uint32()
            }
            items.append(Item(label: label, attributes: attributes, secret: secret, created: created, modified: modified))
        }
        return GnomeKeyringFile(label: label, created: created, modified: modified, items: items)
    }

    static let schemaAttribute = "xdg:schema"

    /// The schema a version 0 item type stands for (gnome-keyring's `gkm-secret-compat.c`;
    /// only the low 16 bits name the type).
    static func schema(ofItemType type: UInt32) -> String? {
        switch type & 0xffff {
        case 0: "org.freedesktop.Secret.Generic"
        case 1: "org.gnome.keyring.NetworkPassword"
        case 2: "org.gnome.keyring.Note"
        case 3: "org.gnome.keyring.ChainedKeyring"
        case 4: "org.gnome.keyring.EncryptionKey"
        case 0x100: "org.gnome.keyring.PkStorage"
        default: nil
        }
    }

    /// gnome-keyring's key and IV for version 0: SHA-256 over password and salt, rehashed
    /// `iterations - 1` times; the first 16 bytes are the key, the next 16 the IV.
    static func deriveKeyAndIV(password: SecretBytes, salt: [UInt8], iterations: Int) -> (SymmetricKey, AES._CBC.IV) {
        var hasher = SHA256()
        password.withUnsafeBytes { hasher.update(bufferPointer: $0) }
        hasher.update(data: salt)
        var digest = Array(hasher.finalize())
        for _ in 1..<max(iterations, 1) {
            digest = Array(SHA256.hash(data: digest))
        }
        defer { digest.withUnsafeMutableBytes { SecretBytes.zero($0) } }
        return (SymmetricKey(data: digest[0..<16]), try! AES._CBC.IV(ivBytes: digest[16..<32]))
    }

    /// Version 0's fields, bounds-checked.
    struct Reader {
        private var bytes: [UInt8]
        private var offset: Int

        init(_ bytes: [UInt8], offset: Int) {
            self.bytes = bytes
            self.offset = offset
        }

        mutating func zero() {
            bytes.withUnsafeMutableBytes { SecretBytes.zero($0) }
        }

        /// Whether the first 16 bytes are the MD5 of the rest (version 0's check of the password).
        func checksumMatches() -> Bool {
            bytes.count >= 16 && Array(Insecure.MD5.hash(data: bytes[16...])) == Array(bytes[0..<16])
        }

        mutating func byte() throws -> UInt8 { try bytes(1)[0] }

        mutating func bytes(_ count: Int) throws -> [UInt8] {
            guard count >= 0, count <= bytes.count - offset else { throw KeychainError.decode("the keyring file is truncated") }
            defer { offset += count }
            return Array(bytes[offset..<(offset + count)])
        }

        mutating func uint32() throws -> UInt32 {
            try bytes(4).reduce(0) { ($0 << 8) | UInt32($1) }
        }

        mutating func time() throws -> Date {
            let high = UInt64(try uint32())
            let low = UInt64(try uint32())
            return Date(timeIntervalSince1970: TimeInterval(Int64(bitPattern: high << 32 | low)))
        }

        /// A length-prefixed string (nil for 0xffffffff), UTF-8 without NUL.
        mutating func string() throws -> String? {
            let length = try uint32()
            if length == 0xffff_ffff { return nil }
            guard length < 0x7fff_ffff else { throw KeychainError.decode("the keyring file is damaged (a string)") }
            let raw = try bytes(Int(length))
            guard !raw.contains(0), let string = String(validating: raw, as: UTF8.self) else {
                throw KeychainError.decode("the keyring file is damaged (a string is not UTF-8)")
            }
            return string
        }

        mutating func secret() throws -> SecretBytes {
            let length = try uint32()
            if length == 0xffff_ffff { return SecretBytes([]) }
            guard length < 0x7fff_ffff, Int(length) <= bytes.count - offset else { throw KeychainError.decode("the keyring file is truncated") }
            defer { offset += Int(length) }
            return bytes.withUnsafeBytes { SecretBytes(copying: UnsafeRawBufferPointer(rebasing: $0[offset..<(offset + Int(length))])) }
        }

        /// Attributes: a count, then name, type (0 string, 1 uint32) and value; uint32s become
        /// their decimal strings, as gnome-keyring shows them on the bus.
        mutating func attributes() throws -> [String: String] {
            let count = try uint32()
            guard count <= GnomeKeyringFile.maximumItems else { throw KeychainError.decode("the keyring file is damaged (attributes)") }
            var attributes: [String: String] = [:]
            for _ in 0..<count {
                guard let name = try string() else { throw KeychainError.decode("the keyring file is damaged (an attribute without a name)") }
                switch try uint32() {
                case 0: attributes[name] = try string() ?? ""
                case 1: attributes[name] = String(try uint32())
                default: throw KeychainError.decode("the keyring file is damaged (an attribute's type)")
                }
            }
            return attributes
        }
    }
}
