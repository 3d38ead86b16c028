import FoundationEssentials
import KeychainCertificates
import KeychainModel

#if canImport(Glibc)
import Glibc
#endif

/// Keychain Health, computed in this process from the items and (with the keychain password)
/// their passwords; nothing is sent anywhere and no password is shown: passwords reused
/// across items, weak ones (an entropy estimate), items unchanged for years, certificates
/// that expire within 30 days.
struct HealthReport {
    struct Entry { let id: String; let name: String; let detail: String }
    struct Finding { let title: String; let entries: [Entry] }

    private(set) var findings: [Finding] = []
    /// Whether passwords were read (reuse and strength need them).
    let checkedSecrets: Bool
    let checkedCount: Int

    /// Below this many bits a password is weak (NIST SP 800-63B's floor of 8 characters of
    /// one class is about 38 bits; 50 is about 8 mixed characters).
    static let weakBits = 50.0

    init(items: [WindowItem], secrets: [String: Data]?, now: Date = Date()) {
        checkedSecrets = secrets != nil
        checkedCount = secrets?.count ?? 0
        let byID = Dictionary(items.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        if let secrets {
            var holders: [Data: [String]] = [:]
            for (id, secret) in secrets where !secret.isEmpty { holders[secret, default: []].append(id) }
            let reused = holders.values.filter { $0.count > 1 }.flatMap { ids in
                ids.compactMap { id in byID[id].map { Entry(id: id, name: $0.name, detail: "the same password as \(ids.count - 1) other item\(ids.count > 2 ? "s" : "")") } }
            }
            append("Reused passwords", reused)
            let weak = secrets.compactMap { id, secret -> Entry? in
                let bits = Self.entropyBits(secret)
                guard bits < Self.weakBits, let item = byID[id] else { return nil }
                return Entry(id: id, name: item.name, detail: "about \(Int(bits)) bits: easy to guess")
            }
            append("Weak passwords", weak)
        }
        let threeYears: TimeInterval = 3 * 365 * 86_400
        append("Unchanged for years", items.filter { $0.hasSecret && ($0.modified.map { now.timeIntervalSince($0) > threeYears } ?? false) }.map {
            Entry(id: $0.id, name: $0.name, detail: "last changed \(WindowItem.format($0.modified!))")
        })
        let expiring = items.compactMap { item -> Entry? in
            guard let der = item.certificate, let notAfter = Self.notValidAfter(der) else { return nil }
            let left = notAfter.timeIntervalSince(now)
            guard left < 30 * 86_400 else { return nil }
            return Entry(id: item.id, name: item.name, detail: left < 0 ? "expired \(WindowItem.format(notAfter))" : "expires \(WindowItem.format(notAfter))")
        }
        append("Certificates expiring within 30 days", expiring)
    }

    private mutating func append(_ title: String, _ entries: [Entry]) {
        guard !entries.isEmpty else { return }
        findings.append(Finding(title: title, entries: entries.sorted { $0.name < $1.name }))
    }

    /// A length × log2(alphabet) estimate: the classes of characters used (lower, upper,
    /// digits, others) make the alphabet; repeated runs count once.
    static func entropyBits(_ secret: Data) -> Double {
        guard let text = String(validating: secret, as: UTF8.self) else { return Double(secret.count) * 8 }
        var alphabet = 0
        let scalars = Array(text.unicodeScalars)
        if scalars.contains(where: { ("a"..."z").contains($0) }) { alphabet += 26 }
        if scalars.contains(where: { ("A"..."Z").contains($0) }) { alphabet += 26 }
        if scalars.contains(where: { ("0"..."9").contains($0) }) { alphabet += 10 }
        if scalars.contains(where: { !("a"..."z").contains($0) && !("A"..."Z").contains($0) && !("0"..."9").contains($0) }) { alphabet += 33 }
        var length = 0
        for index in scalars.indices where index == 0 || scalars[index] != scalars[index - 1] { length += 1 }
        return Double(length) * log2(Double(max(alphabet, 1)))
    }

    static func notValidAfter(_ der: Data) -> Date? {
        (try? CertificateFields(der: Array(der)))?.notValidAfter
    }
}
