import Foundation
import Security
import Testing

// What SecItemCopyMatching hands back for every combination of kSecReturnData,
// kSecReturnAttributes, kSecReturnPersistentRef and kSecReturnRef, with one item and with
// kSecMatchLimitAll, written as Apple-platform code reads results.

extension SecurityAPI {
    @Suite struct ReturnTypeTests {
        let service = SecurityAPI.useSharedKeychain()

        func query(_ account: String) -> [String: Any] {
            [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service, kSecAttrAccount as String: account]
        }

        func add(_ account: String, _ secret: String) throws -> Data {
            var item = query(account)
            item[kSecValueData as String] = Data(secret.utf8)
            item[kSecAttrLabel as String] = "label of " + account
            item[kSecReturnPersistentRef as String] = true
            var reference: CFTypeRef?
            #expect(SecItemAdd(item as CFDictionary, &reference) == errSecSuccess)
            return try #require(reference as? Data, "kSecReturnPersistentRef on add returns the reference")
        }

        enum Shape: Equatable { case none, data, reference, attributes(withData: Bool, withReference: Bool) }

        /// Apple's rule: one return key gives that value alone; several give a dictionary with
        /// the item's attributes (when asked) and v_Data / v_PersistentRef. A password has no
        /// ref type, so kSecReturnRef gives its attributes.
        static func expectedShape(data: Bool, attributes: Bool, reference: Bool, ref: Bool) -> Shape {
            let attributes = attributes || ref
            switch (data, attributes, reference) {
            case (false, false, false): return .none
            case (true, false, false): return .data
            case (false, false, true): return .reference
            default: return .attributes(withData: data, withReference: reference)
            }
        }

        func check(_ result: CFTypeRef?, shape: Shape, account: String, secret: String, reference: Data, attributes wanted: Bool) {
            switch shape {
            case .none:
                #expect(result == nil)
            case .data:
                #expect(result as? Data == Data(secret.utf8))
            case .reference:
                #expect(result as? Data == reference)
            case .attributes(let withData, let withReference):
                guard let item = result as? [String: Any] else {
                    Issue.record("expected a dictionary, got \(String(describing: result))")
                    return
                }
                #expect((item[kSecValueData as String] as? Data) == (withData ? Data(secret.utf8) : nil))
                #expect((item[kSecValuePersistentRef as String] as? Data) == (withReference ? reference : nil))
                #expect((item[kSecAttrAccount as String] as? String) == (wanted ? account : nil))
                #expect((item[kSecAttrLabel as String] as? String) == (wanted ? "label of " + account : nil))
            }
        }

        @Test(arguments: 0..<16)
        func everyCombination(_ bits: Int) throws {
            let (data, attributes, reference, ref) = (bits & 1 != 0, bits & 2 != 0, bits & 4 != 0, bits & 8 != 0)
            let references = [try add("one", "first"), try add("two", "second")]
            var search = query("one")
            search[kSecReturnData as String] = data ? kCFBooleanTrue : kCFBooleanFalse
            search[kSecReturnAttributes as String] = attributes
            if reference { search[kSecReturnPersistentRef as String] = true }
            if ref { search[kSecReturnRef as String] = kCFBooleanTrue! }
            let shape = Self.expectedShape(data: data, attributes: attributes, reference: reference, ref: ref)

            var result: CFTypeRef?
            #expect(SecItemCopyMatching(search as CFDictionary, &result) == errSecSuccess)
            check(result, shape: shape, account: "one", secret: "first", reference: references[0], attributes: attributes || ref)

            var all: [String: Any] = search
            all[kSecAttrAccount as String] = nil
            all[kSecMatchLimit as String] = kSecMatchLimitAll
            var results: CFTypeRef?
            #expect(SecItemCopyMatching(all as CFDictionary, &results) == errSecSuccess)
            if shape == .none {
                #expect(results == nil, "no return key: an existence check, even for many")
            } else {
                let array = try #require(results as? [Any], "kSecMatchLimitAll returns an array")
                #expect(array.count == 2)
                for (index, (account, secret)) in [("one", "first"), ("two", "second")].enumerated() where index < array.count {
                    check(array[index] as CFTypeRef, shape: shape, account: account, secret: secret, reference: references[index], attributes: attributes || ref)
                }
            }
        }

        @Test func numericLimitAndLimitOne() throws {
            for account in ["a", "b", "c"] { _ = try add(account, account) }
            var search: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service, kSecReturnAttributes as String: true]
            search[kSecMatchLimit as String] = 2
            var result: CFTypeRef?
            #expect(SecItemCopyMatching(search as CFDictionary, &result) == errSecSuccess)
            #expect((result as? [[String: Any]])?.count == 2)
            search[kSecMatchLimit as String] = kSecMatchLimitOne
            #expect(SecItemCopyMatching(search as CFDictionary, &result) == errSecSuccess)
            #expect((result as? [String: Any])?[kSecAttrAccount as String] as? String == "a", "the first added")
        }

        @Test func addReturnsWhatItIsAskedFor() throws {
            var item = query("x")
            item[kSecValueData as String] = Data("pw".utf8)
            item[kSecReturnAttributes as String] = true
            item[kSecReturnData as String] = true
            var result: CFTypeRef?
            #expect(SecItemAdd(item as CFDictionary, &result) == errSecSuccess)
            let added = try #require(result as? [String: Any])
            #expect(added[kSecValueData as String] as? Data == Data("pw".utf8))
            #expect(added[kSecAttrAccessible as String] as? String == kSecAttrAccessibleWhenUnlocked as String)
            #expect(added[kSecAttrCreationDate as String] is Date && added[kSecAttrModificationDate as String] is Date)
        }
    }
}
