import CSodium
import Foundation
import KeychainModel
import SyncCrypto

/// The code a member shows and the new device types: the pairing's nameplate (the server's
/// small number, not secret) and a secret, CPace's password. The short form is 8 digits
/// (`42-4821-0937`): one run of the exchange tests one guess and the member ends the pairing
/// after a failed one, so a stranger's chance is 1 in 10^8. The long form is 26 base32
/// characters (130 bits, for pasting or a QR code) and runs the same exchange.
public struct JoinCode: Sendable {
    public let nameplate: Int64
    /// The secret as CPace takes it: the digits, or the base32 characters upper-cased,
    /// without separators.
    let secret: SecretBytes

    static let base32 = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".utf8)

    /// A fresh short code for `nameplate`.
    public static func short(nameplate: Int64) -> JoinCode {
        var generator = SystemRandomNumberGenerator()
        return JoinCode(nameplate: nameplate, secret: SecretBytes(count: 8) { secret in
            for index in secret.indices { secret[index] = UInt8(ascii: "0") + UInt8.random(in: 0...9, using: &generator) }
        })
    }

    /// A fresh long code for `nameplate`.
    public static func long(nameplate: Int64) -> JoinCode {
        var generator = SystemRandomNumberGenerator()
        return JoinCode(nameplate: nameplate, secret: SecretBytes(count: 26) { secret in
            for index in secret.indices { secret[index] = base32[Int.random(in: 0..<32, using: &generator)] }
        })
    }

    /// Reads a code as typed: the nameplate, a dash, then the secret with any dashes or
    /// spaces (letters in either case). Throws `.malformed` with a message that repeats no
    /// part of the secret.
    public init(parsing text: String) throws(SyncCryptoError) {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let dash = trimmed.firstIndex(of: "-"), let nameplate = Int64(trimmed[..<dash]), nameplate > 0 else {
            throw SyncCryptoError(.malformed, "a join code starts with its number and a dash, as 42-4821-0937")
        }
        var secret = trimmed[trimmed.index(after: dash)...].utf8.filter { $0 != UInt8(ascii: "-") && $0 != UInt8(ascii: " ") }
            .map { $0 >= UInt8(ascii: "a") && $0 <= UInt8(ascii: "z") ? $0 - 32 : $0 }
        defer { Self.zero(&secret) }
        let digits = secret.count == 8 && secret.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
        let long = secret.count == 26 && secret.allSatisfy { Self.base32.contains($0) }
        guard digits || long else {
            throw SyncCryptoError(.malformed, "a join code's secret is 8 digits or 26 letters and digits 2-7")
        }
        self.init(nameplate: nameplate, secret: SecretBytes(secret))
    }

    /// Wipes a working copy of the secret (the typed text itself is the caller's).
    static func zero(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { sodium_memzero($0.baseAddress, $0.count) }
    }

    init(nameplate: Int64, secret: SecretBytes) {
        self.nameplate = nameplate
        self.secret = secret
    }

    /// The code to show: `42-4821-0937`, or the long form in groups of five.
    public var text: String {
        var characters = secret.withUnsafeBytes { Array($0) }
        defer { Self.zero(&characters) }
        let group = characters.count == 8 ? 4 : 5
        let groups = stride(from: 0, to: characters.count, by: group).map {
            String(decoding: characters[$0..<min($0 + group, characters.count)], as: UTF8.self)
        }
        return "\(nameplate)-" + groups.joined(separator: "-")
    }
}

extension JoinCode: CustomStringConvertible {
    /// The nameplate only: a code in a log is a code given away.
    public var description: String { "JoinCode(\(nameplate)-…)" }
}
