// Test support: compiled in debug builds only (`swift build -c release` builds the products,
// and a release build cannot `@testable import`).
#if TROUSSEAU_TEST_HOOKS
import FoundationEssentials
import KeychainModel

/// The OSStatus a keychain call ends with: 0 on success, the error's status otherwise.
public func osStatus<T>(_ body: () throws -> T) -> OSStatusCode {
    do {
        _ = try body()
        return .success
    } catch let error as KeychainError {
        return error.status
    } catch {
        return OSStatusCode(rawValue: Int32.min)
    }
}

/// A generic-password query for `account` and `service`, plus `extra` keys.
public func genericPassword(
    account: String? = nil, service: String? = nil, _ extra: [String: KeychainValue] = [:]
) -> [String: KeychainValue] {
    var query: [String: KeychainValue] = ["class": .string("genp")]
    if let account { query["acct"] = .string(account) }
    if let service { query["svce"] = .string(service) }
    return query.merging(extra) { _, new in new }
}

extension KeychainValue {
    /// `.data` of a string's UTF-8 bytes.
    public static func utf8(_ string: String) -> KeychainValue { .data(Data(string.utf8)) }

    /// The dictionary inside, or nil.
    public var dictionary: [String: KeychainValue]? {
        if case .dictionary(let d) = self { return d }
        return nil
    }

    /// The array inside, or nil.
    public var array: [KeychainValue]? {
        if case .array(let a) = self { return a }
        return nil
    }
}
#endif
