import Foundation
import KeychainClient
import KeychainModel

// Apple's SecItem functions (Security/SecItem.h) with iOS semantics, over
// the keychain's typed API (KeychainClient.Keychain). Every call is one request to securityd;
// errors are Apple's OSStatus codes.

/// Adds an item. With `kSecReturn…` keys, `result` receives the added item as
/// `SecItemCopyMatching` would return it.
public func SecItemAdd(_ attributes: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    if let identity = attributes[kSecValueRef as String] as? SecIdentity {
        return addIdentity(identity, attributes, result)
    }
    return perform(result) { keychain throws(KeychainError) in
        let (query, context) = try FoundationBridge.request(attributes, forAdd: true)
        let references = ItemReferences(query)
        return try keychain.add(references.query, context: context).map { value throws(KeychainError) in try references.object(value, keychain: keychain) }
    }
}

/// Finds items: `result` receives data, an attribute dictionary, a persistent reference,
/// or an array of them, as the `kSecReturn…` and `kSecMatchLimit` keys ask.
public func SecItemCopyMatching(_ query: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    perform(result) { keychain throws(KeychainError) in
        let (query, context) = try FoundationBridge.request(query, forAdd: false)
        let references = ItemReferences(query, context: context)
        return try keychain.copyMatching(references.query, context: context).map { value throws(KeychainError) in try references.object(value, keychain: keychain) }
    }
}

/// Changes the attributes (or data) of every item the query matches.
public func SecItemUpdate(_ query: CFDictionary, _ attributesToUpdate: CFDictionary) -> OSStatus {
    perform(nil) { keychain throws(KeychainError) in
        let (query, context) = try FoundationBridge.request(query, forAdd: false)
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

/// An identity is stored as its certificate and its private key (SecItem.m's
/// `explode_identity`): a certificate already there is fine, and so is the key, unless both
/// were — then the identity was, and the add is errSecDuplicateItem.
private func addIdentity(_ identity: SecIdentity, _ attributes: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    var shared: [String: Any] = [:]
    for case (let key as String, let value) in attributes where ![kSecClass as String, kSecValueRef as String].contains(key) {
        shared[key] = value
    }
    if let itemClass = attributes[kSecClass as String] as? String, itemClass != kSecClassIdentity as String { return errSecParam }
    let returnsSomething = [kSecReturnRef, kSecReturnData, kSecReturnAttributes, kSecReturnPersistentRef].contains { shared[$0 as String] != nil }
    for key in [kSecReturnRef, kSecReturnData, kSecReturnAttributes, kSecReturnPersistentRef] { shared[key as String] = nil }
    var certificate = shared
    certificate[kSecClass as String] = kSecClassCertificate
    certificate[kSecValueRef as String] = identity.certificate
    let certificateStatus = SecItemAdd(NSDictionary(dictionary: certificate), nil)
    guard certificateStatus == errSecSuccess || certificateStatus == errSecDuplicateItem else { return certificateStatus }
    var key = shared
    key[kSecClass as String] = kSecClassKey
    key[kSecValueRef as String] = identity.privateKey
    let keyStatus = SecItemAdd(NSDictionary(dictionary: key), nil)
    if keyStatus == errSecDuplicateItem, certificateStatus == errSecDuplicateItem { return errSecDuplicateItem }
    guard keyStatus == errSecSuccess || keyStatus == errSecDuplicateItem else { return keyStatus }
    if returnsSomething { result?.pointee = identity }
    return errSecSuccess
}
