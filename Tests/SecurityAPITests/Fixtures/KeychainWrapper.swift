import Foundation
import Security

// A keychain wrapper in the style of the popular Apple-platform libraries (KeychainAccess,
// KeychainSwift, SwiftKeychainWrapper): written only against the SecItem API, as such a
// library is, so that it shows what one needs from the Security module. Not Trousseau code.

/// Strings and data for the keys of one service, with chained options.
final class KeychainWrapper: @unchecked Sendable {
    // @unchecked: options are set by the chain before use, as in the libraries it imitates.
    enum Accessibility {
        case whenUnlocked, afterFirstUnlock, always
        case whenPasscodeSetThisDeviceOnly, whenUnlockedThisDeviceOnly, afterFirstUnlockThisDeviceOnly, alwaysThisDeviceOnly

        var rawValue: String {
            switch self {
            case .whenUnlocked: kSecAttrAccessibleWhenUnlocked as String
            case .afterFirstUnlock: kSecAttrAccessibleAfterFirstUnlock as String
            case .always: kSecAttrAccessibleAlways as String
            case .whenPasscodeSetThisDeviceOnly: kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly as String
            case .whenUnlockedThisDeviceOnly: kSecAttrAccessibleWhenUnlockedThisDeviceOnly as String
            case .afterFirstUnlockThisDeviceOnly: kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly as String
            case .alwaysThisDeviceOnly: kSecAttrAccessibleAlwaysThisDeviceOnly as String
            }
        }
    }

    struct Failure: Error, Equatable {
        let status: OSStatus
        var message: String { SecCopyErrorMessageString(status, nil) as String? ?? "OSStatus \(status)" }
    }

    let service: String
    let accessGroup: String?
    private(set) var accessibility = Accessibility.whenUnlocked
    private(set) var synchronizable = false
    private(set) var label: String?

    init(service: String, accessGroup: String? = nil) {
        self.service = service
        self.accessGroup = accessGroup
    }

    // MARK: Chained options (each returns a configured copy)

    func accessibility(_ accessibility: Accessibility) -> KeychainWrapper {
        copy { $0.accessibility = accessibility }
    }

    func synchronizable(_ synchronizable: Bool) -> KeychainWrapper {
        copy { $0.synchronizable = synchronizable }
    }

    func label(_ label: String) -> KeychainWrapper {
        copy { $0.label = label }
    }

    private func copy(_ change: (KeychainWrapper) -> Void) -> KeychainWrapper {
        let copy = KeychainWrapper(service: service, accessGroup: accessGroup)
        copy.accessibility = accessibility
        copy.synchronizable = synchronizable
        copy.label = label
        change(copy)
        return copy
    }

    // MARK: Subscripts

    subscript(key: String) -> String? {
        get { try? get(key) }
        set {
            if let newValue { try? set(newValue, key: key) } else { try? remove(key) }
        }
    }

    subscript(data key: String) -> Data? {
        get { try? getData(key) }
        set {
            if let newValue { try? set(newValue, key: key) } else { try? remove(key) }
        }
    }

    // MARK: Operations

    func get(_ key: String) throws -> String? {
        guard let data = try getData(key) else { return nil }
        guard let string = String(data: data, encoding: .utf8) else { throw Failure(status: errSecDecode) }
        return string
    }

    func getData(_ key: String) throws -> Data? {
        var query = baseQuery()
        query[kSecAttrAccount as String] = key
        query[kSecMatchLimit as String] = kSecMatchLimitOne
        query[kSecReturnData as String] = kCFBooleanTrue
        var result: AnyObject?
        let status = SecItemCopyMatching(query as CFDictionary, &result)
        switch status {
        case errSecSuccess:
            guard let data = result as? Data else { throw Failure(status: errSecDecode) }
            return data
        case errSecItemNotFound:
            return nil
        default:
            throw Failure(status: status)
        }
    }

    func set(_ value: String, key: String) throws {
        try set(Data(value.utf8), key: key)
    }

    /// Adds the item; when it exists, updates it instead.
    func set(_ value: Data, key: String) throws {
        var item = baseQuery()
        item[kSecAttrAccount as String] = key
        item[kSecAttrSynchronizable as String] = synchronizable ? kCFBooleanTrue : kCFBooleanFalse
        var attributes: [String: Any] = [
            kSecValueData as String: value,
            kSecAttrAccessible as String: accessibility.rawValue,
        ]
        if let label { attributes[kSecAttrLabel as String] = label }
        let status = SecItemAdd(item.merging(attributes) { $1 } as CFDictionary, nil)
        switch status {
        case errSecSuccess:
            return
        case errSecDuplicateItem:
            let updated = SecItemUpdate(item as CFDictionary, attributes as CFDictionary)
            guard updated == errSecSuccess else { throw Failure(status: updated) }
        default:
            throw Failure(status: status)
        }
    }

    func remove(_ key: String) throws {
        var query = baseQuery()
        query[kSecAttrAccount as String] = key
        let status = SecItemDelete(query as CFDictionary)
        guard status == errSecSuccess || status == errSecItemNotFound else { throw Failure(status: status) }
    }

    func removeAll() throws {
        var query = baseQuery()
        query[kSecMatchLimit as String] = kSecMatchLimitAll  // as macOS code often writes it
        let status = SecItemDelete(query as CFDictionary)
        guard status == errSecSuccess || status == errSecItemNotFound else { throw Failure(status: status) }
    }

    func allKeys() -> [String] {
        var query = baseQuery()
        query[kSecMatchLimit as String] = kSecMatchLimitAll
        query[kSecReturnAttributes as String] = kCFBooleanTrue
        var result: CFTypeRef?
        guard SecItemCopyMatching(query as CFDictionary, &result) == errSecSuccess, let items = result as? [[String: AnyObject]] else {
            return []
        }
        return items.compactMap { $0[kSecAttrAccount as String] as? String }.sorted()
    }

    private func baseQuery() -> [String: Any] {
        var query: [String: Any] = [
            kSecClass as String: String(kSecClassGenericPassword),
            kSecAttrService as String: service,
            kSecAttrSynchronizable as String: kSecAttrSynchronizableAny,
            kSecUseDataProtectionKeychain as String: kCFBooleanTrue!,
        ]
        if let accessGroup { query[kSecAttrAccessGroup as String] = accessGroup }
        return query
    }
}
