import FoundationEssentials
import Hummingbird
import KeychainModel

/// The fields of a form the page posted (`application/x-www-form-urlencoded`), decoded by
/// Hummingbird's decoder. Missing or malformed forms have no fields.
struct FormFields {
    private let fields: [String: String]

    init(_ body: ByteBuffer) {
        fields = (try? URLEncodedFormDecoder().decode([String: String].self, from: String(buffer: body))) ?? [:]
    }

    func text(_ name: String) -> String? { fields[name] }

    /// A field trimmed of surrounding white space; nil when empty.
    func value(_ name: String) -> String? {
        guard let text = fields[name]?.trimmingCharacters(in: .whitespacesAndNewlines), !text.isEmpty else { return nil }
        return text
    }

    /// A password field as the keychain takes it; nil when empty (no presence given).
    func secret(_ name: String) -> SecretBytes? {
        guard let text = fields[name], !text.isEmpty else { return nil }
        return SecretBytes(text.utf8)
    }
}
