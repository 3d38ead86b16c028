import Foundation
import KeychainClient
import KeychainModel

// Apple's SecItem functions (Security/SecItem.h) with iOS semantics, over
// the keychain's typed API (KeychainClient.Keychain). Every call is one request to securityd;
// errors are Apple's OSStatus codes.

/// Adds an item. With `kSecReturn…` keys, `result` receives the added item as
/// `SecItemCopyMatching` would return it.
public func SecItemAdd(_ attributes: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    perform(result) { keychain throws(KeychainError) in
        let (query, context) = try FoundationBridge.request(attributes)
        let references = ItemReferences(query)
        return try keychain.add(references.query, context: context).map(references.object)
    }
}

/// Finds items: `result` receives data, an attribute dictionary, a persistent reference,
/// or an array of them, as the `kSecReturn…` and `kSecMatchLimit` keys ask.
public func SecItemCopyMatching(_ query: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    perform(result) { keychain throws(KeychainError) in
        let (query, context) = try FoundationBridge.request(query)
        let references = ItemReferences(query)
        return try keychain.copyMatching(references.query, context: context).map(references.object)
    }
}

/// Changes the attributes (or data) of every item the query matches.
public func SecItemUpdate(_ query: CFDictionary, _ attributesToUpdate: CFDictionary) -> OSStatus {
    perform(nil) { keychain throws(KeychainError) in
        let (query, context) = try FoundationBridge.request(query)
        try keychain.update(query, with: try FoundationBridge.query(attributesToUpdate), context: context)
        return nil
    }
}

/// Deletes every item the query matches.
public func SecItemDelete(_ query: CFDictionary) -> OSStatus {
    perform(nil) { keychain throws(KeychainError) in
        try keychain.delete(try FoundationBridge.query(query))  // accepts kSecMatchLimitAll, as macOS does
        return nil
    }
}

private func perform(_ result: UnsafeMutablePointer<CFTypeRef?>?, _ call: (Keychain) throws(KeychainError) -> AnyObject?) -> OSStatus {
    do {
        // Called whether or not the caller wants the result: `result?.pointee = try call(…)`
        // would skip the call when `result` is nil.
        let value = try call(ProcessKeychain.keychain)
        result?.pointee = value
        return errSecSuccess
    } catch {
        return error.status.rawValue
    }
}
