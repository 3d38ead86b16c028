import FoundationEssentials
import KeychainModel

/// The categories of Keychain Access's sidebar, which filter the list.
enum ItemCategory: String, CaseIterable, Sendable {
    case all, passwords, notes, myCertificates = "my-certificates", keys, certificates

    var title: String {
        switch self {
        case .all: "All Items"
        case .passwords: "Passwords"
        case .notes: "Secure Notes"
        case .myCertificates: "My Certificates"
        case .keys: "Keys"
        case .certificates: "Certificates"
        }
    }
}

/// One item as the window lists and shows it: what Keychain Access's columns and its
/// Attributes and Access Control tabs show. Never its secret.
struct WindowItem: Sendable {
    /// The persistent reference in hexadecimal (for items of securityd), or `root-` and the
    /// certificate's SHA-1 (System Roots): what URLs name. Not a secret.
    let id: String
    let itemClass: String
    let attributes: [String: KeychainValue]
    let keychain: String
    /// A certificate's DER (certificates only; public).
    var certificate: Data?
    /// A certificate whose public key has a private key in the keychain (an identity).
    var hasPrivateKey = false

    /// The four-character type of a secure note (`kSecAttrType` 'note'), as macOS stores it.
    static let noteType: Int64 = 0x6e6f_7465

    var isNote: Bool { itemClass == SecName.kSecClassGenericPassword && attributes[SecName.kSecAttrType]?.numberValue == Self.noteType }

    var name: String {
        for key in [SecName.kSecAttrLabel, SecName.kSecAttrService, SecName.kSecAttrServer, SecName.kSecAttrAccount] {
            if let text = attributes[key]?.stringValue, !text.isEmpty { return text }
        }
        return "(unnamed)"
    }

    /// Keychain Access's Kind column.
    var kind: String {
        switch itemClass {
        case SecName.kSecClassGenericPassword: isNote ? "secure note" : "application password"
        case SecName.kSecClassInternetPassword: "Internet password"
        case SecName.kSecClassCertificate: "certificate"
        case SecName.kSecClassKey:
            switch attributes[SecName.kSecAttrKeyClass]?.stringValue ?? attributes[SecName.kSecAttrKeyClass]?.numberValue.map(String.init) {
            case "1"?: "private key"
            case "0"?: "public key"
            default: "symmetric key"
            }
        default: itemClass
        }
    }

    var modified: Date? { attributes[SecName.kSecAttrModificationDate]?.dateValue }
    var created: Date? { attributes[SecName.kSecAttrCreationDate]?.dateValue }
    var accessGroup: String { attributes[SecName.kSecAttrAccessGroup]?.stringValue ?? "" }
    var hasSecret: Bool { itemClass == SecName.kSecClassGenericPassword || itemClass == SecName.kSecClassInternetPassword }

    func belongs(to category: ItemCategory) -> Bool {
        switch category {
        case .all: true
        case .passwords: hasSecret && !isNote
        case .notes: isNote
        case .myCertificates: itemClass == SecName.kSecClassCertificate && hasPrivateKey
        case .keys: itemClass == SecName.kSecClassKey
        case .certificates: itemClass == SecName.kSecClassCertificate
        }
    }

    /// The protection class by Apple's name (`kSecAttrAccessibleWhenUnlocked`, …).
    var protection: String {
        guard let raw = attributes[SecName.kSecAttrAccessible]?.stringValue, let protection = ProtectionClass(rawValue: raw) else { return "" }
        return Self.protectionNames[protection] ?? raw
    }

    static let protectionNames: [ProtectionClass: String] = [
        .whenUnlocked: "kSecAttrAccessibleWhenUnlocked", .afterFirstUnlock: "kSecAttrAccessibleAfterFirstUnlock",
        .always: "kSecAttrAccessibleAlways", .whenUnlockedThisDeviceOnly: "kSecAttrAccessibleWhenUnlockedThisDeviceOnly",
        .afterFirstUnlockThisDeviceOnly: "kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly",
        .alwaysThisDeviceOnly: "kSecAttrAccessibleAlwaysThisDeviceOnly",
        .whenPasscodeSetThisDeviceOnly: "kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly",
    ]

    /// The item's `SecAccessControl` constraints by Apple's names; empty when it has none.
    var accessControl: [String] {
        guard let encoded = attributes[SecName.kSecAttrAccessControl]?.dataValue, let control = try? AccessControl(encoded: encoded) else { return [] }
        let names: [(AccessControl.Flags, String)] = [
            (.userPresence, "kSecAccessControlUserPresence"), (.biometryAny, "kSecAccessControlBiometryAny"),
            (.biometryCurrentSet, "kSecAccessControlBiometryCurrentSet"), (.devicePasscode, "kSecAccessControlDevicePasscode"),
            (.companion, "kSecAccessControlCompanion"), (.or, "kSecAccessControlOr"), (.and, "kSecAccessControlAnd"),
            (.privateKeyUsage, "kSecAccessControlPrivateKeyUsage"), (.applicationPassword, "kSecAccessControlApplicationPassword"),
        ]
        return names.filter { control.flags.contains($0.0) }.map(\.1)
    }

    /// The Secret Service scope whose clients see the item (its group's name after the
    /// prefix securityd's `SecretScope` gives every scope), or nil.
    var secretServiceScope: String? {
        let prefix = "org.freedesktop.secrets."
        guard accessGroup.hasPrefix(prefix) else { return nil }
        return String(accessGroup.dropFirst(prefix.count))
    }

    /// Every attribute by Apple's name, in the order of that name; the internal ones
    /// (those Apple has no name for) by their raw key.
    var attributeRows: [(name: String, value: String)] {
        attributes.compactMap { key, value -> (String, String)? in
            guard key != SecName.kSecAttrAccessControl, !key.hasPrefix("v_") else { return nil }
            let name = Self.appleNames[key] ?? key
            return (name, Self.describe(value, key: key))
        }.sorted { $0.0 < $1.0 }
    }

    static let appleNames: [String: String] = {
        var names: [String: String] = [:]
        for (name, value) in SecName.all where (name.hasPrefix("kSecAttr") || name == "kSecClass") && names[value] == nil { names[value] = name }
        return names
    }()

    /// The four-character codes macOS shows as text.
    static let fourCharacterKeys: Set<String> = [SecName.kSecAttrType, SecName.kSecAttrCreator, SecName.kSecAttrProtocol, SecName.kSecAttrAuthenticationType]

    static func describe(_ value: KeychainValue, key: String = "") -> String {
        switch value {
        case .string(let text): return text
        case .number(let number):
            if fourCharacterKeys.contains(key), number > 0x2020_2020, number <= 0x7e7e_7e7e {
                return "'" + String(decoding: (0..<4).map { UInt8(truncatingIfNeeded: number >> (24 - 8 * $0)) }, as: UTF8.self) + "'"
            }
            return String(number)
        case .bool(let flag): return flag ? "yes" : "no"
        case .date(let date): return format(date)
        case .data(let data): return Hexadecimal.string(data.prefix(64)) + (data.count > 64 ? "…" : "")
        case .array(let values): return values.map { describe($0) }.joined(separator: ", ")
        case .dictionary(let entries): return entries.keys.sorted().map { "\($0)=\(describe(entries[$0]!))" }.joined(separator: ", ")
        }
    }

    /// "2026-11-27 21:40:05" in UTC, sortable as text.
    static func format(_ date: Date) -> String {
        let seconds = Int64(date.timeIntervalSince1970.rounded(.down))
        var time = time_t(seconds)
        var parts = tm()
        gmtime_r(&time, &parts)
        func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday)) \(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))"
    }
}

#if canImport(Glibc)
import Glibc
#endif
