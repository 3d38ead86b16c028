import FoundationEssentials
import KeychainImport
import KeychainModel
import KeychainProtocol

/// File > Import Items: a PKCS#12 file (opened by securityd with its passphrase), PEM or DER,
/// dropped on the page or chosen, added as `security import` adds it.
struct WindowImport {
    /// The largest file the page may send.
    static let fileLimit = 1 << 20

    let directory: KeychainDirectory
    let keychain: WindowKeychain

    /// - Returns: what was added, in words ("1 identity imported.").
    func importFile(_ data: Data, passphrase: SecretBytes) throws(KeychainError) -> String {
        if keychain.isReadOnly { throw KeychainError(status: .readOnly) }
        guard !data.isEmpty else { throw KeychainError(status: .param, message: "the file is empty") }
        let items =
            if ImportedItems.looksLikePKCS12(data) {
                try ImportedItems(pkcs12: directory.call(Service.DecodePKCS12(file: data, passphrase: passphrase)))
            } else {
                try ImportedItems(reading: data)
            }
        // A certificate already there (a CA that came with an earlier identity) is passed
        // over, as Keychain Access does, instead of failing the whole file.
        let counts = try items.add(extractable: true, passingOverPresent: true) { (request) throws(KeychainError) in
            var request = request
            if case .file(let path) = keychain.kind { request.attributes[SecName.kSecUseKeychain] = .string(path) }
            _ = try directory.call(request)
        }
        let parts: [String] = [(counts.identities, "identity", "identities"), (counts.keys, "key", "keys"), (counts.certificates, "certificate", "certificates")]
            .filter { $0.0 > 0 }.map { (count: Int, one: String, many: String) in "\(count) \(count > 1 ? many : one)" }
        var summary = parts.isEmpty ? "Nothing new to import." : parts.joined(separator: ", ") + " imported."
        if counts.present > 0 { summary += " \(counts.present) certificate\(counts.present > 1 ? "s were" : " was") already in the keychain." }
        return summary
    }
}
