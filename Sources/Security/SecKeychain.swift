import Foundation
import KeychainClient
import KeychainModel
import KeychainProtocol

// SecKeychain.h (macOS): keychain files. A SecKeychain is a keychain's path; opening one
// checks nothing (as on macOS: a missing keychain fails when it is used). Names resolve as
// the `security` tool resolves them (KeychainName): a bare name in the keychain directory,
// "login.keychain" and macOS's well-known paths to the keychains they mean.

/// A keychain file (`SecKeychainRef`).
public final class SecKeychain: NSObject, @unchecked Sendable {
    /// The keychain's absolute path (the login keychain's database for the login keychain).
    let path: String

    init(path: String) { self.path = path }

    public override func isEqual(_ object: Any?) -> Bool { (object as? SecKeychain)?.path == path }
    public override var hash: Int { path.hashValue }
}

/// macOS's access object for a new keychain's items (`SecAccessRef`): accepted and
/// ignored, as the per-application ACLs it describes are not kept here.
public final class SecAccess: NSObject, @unchecked Sendable {}

/// `SecKeychainGetTypeID`.
public func SecKeychainGetTypeID() -> CFTypeID { CoreFoundationType.secKeychain.rawValue }

/// Creates a keychain file under `password` (`promptUser` would ask through macOS's
/// SecurityAgent: there is none, errSecInteractionNotAllowed); it joins the search list.
public func SecKeychainCreate(
    _ pathName: UnsafePointer<CChar>, _ passwordLength: UInt32, _ password: UnsafeRawPointer?, _ promptUser: Bool, _ initialAccess: SecAccess?,
    _ keychain: UnsafeMutablePointer<SecKeychain?>
) -> OSStatus {
    if promptUser { return errSecInteractionNotAllowed }
    guard let password else { return errSecParam }
    let bytes = SecretBytes(UnsafeRawBufferPointer(start: password, count: Int(passwordLength)))
    return keychainCall { keychainAPI throws(KeychainError) in
        let named = resolve(pathName, keychainAPI)
        guard case .file(let path) = named else { throw KeychainError(status: OSStatusCode.duplicateKeychain) }
        try keychainAPI.call(Service.CreateKeychain(path: path, password: bytes))
        keychain.pointee = SecKeychain(path: path)
    }
}

/// Opens a keychain by name or path; nothing is checked until it is used.
public func SecKeychainOpen(_ pathName: UnsafePointer<CChar>, _ keychain: UnsafeMutablePointer<SecKeychain?>) -> OSStatus {
    keychainCall { keychainAPI throws(KeychainError) in
        keychain.pointee = SecKeychain(path: resolve(pathName, keychainAPI).path(keychainAPI.paths))
    }
}

/// Deletes a keychain file (or each of an array of them) and takes it off the search list.
public func SecKeychainDelete(_ keychainOrArray: SecKeychain?) -> OSStatus {
    guard let keychainOrArray else { return errSecInvalidKeychain }
    return keychainCall { keychainAPI throws(KeychainError) in
        guard keychainOrArray.path != keychainAPI.paths.database else { throw KeychainError(status: OSStatusCode.wrPerm) }
        try keychainAPI.call(Service.DeleteKeychain(path: keychainOrArray.path))
    }
}

/// Unlocks a keychain with its password (nil: the login keychain). Without `usePassword`
/// macOS would ask the user: there is nobody to ask, errSecInteractionNotAllowed.
public func SecKeychainUnlock(_ keychain: SecKeychain?, _ passwordLength: UInt32, _ password: UnsafeRawPointer?, _ usePassword: Bool) -> OSStatus {
    guard usePassword, let password else { return errSecInteractionNotAllowed }
    let bytes = SecretBytes(UnsafeRawBufferPointer(start: password, count: Int(passwordLength)))
    return keychainCall { keychainAPI throws(KeychainError) in
        if let keychain, keychain.path != keychainAPI.paths.database {
            try keychainAPI.call(Service.UnlockKeychain(path: keychain.path, password: bytes))
        } else {
            try keychainAPI.call(Service.Unlock(passcode: bytes))
        }
    }
}

/// Locks a keychain (nil: the login keychain).
public func SecKeychainLock(_ keychain: SecKeychain?) -> OSStatus {
    keychainCall { keychainAPI throws(KeychainError) in
        if let keychain, keychain.path != keychainAPI.paths.database {
            try keychainAPI.call(Service.LockKeychain(path: keychain.path))
        } else {
            try keychainAPI.call(Service.Lock())
        }
    }
}

/// Locks every keychain.
public func SecKeychainLockAll() -> OSStatus {
    keychainCall { keychainAPI throws(KeychainError) in
        try keychainAPI.call(Service.LockKeychain(path: nil))
        try keychainAPI.call(Service.Lock())
    }
}

/// The default keychain (where macOS's additions without a keychain go).
public func SecKeychainCopyDefault(_ keychain: UnsafeMutablePointer<SecKeychain?>) -> OSStatus {
    keychainCall { keychainAPI throws(KeychainError) in
        let path = try keychainAPI.call(Service.DefaultKeychain(replacement: nil)).paths.first ?? keychainAPI.paths.database
        keychain.pointee = SecKeychain(path: path)
    }
}

/// Makes `keychain` the default keychain.
public func SecKeychainSetDefault(_ keychain: SecKeychain?) -> OSStatus {
    guard let keychain else { return errSecParam }
    return keychainCall { keychainAPI throws(KeychainError) in
        try keychainAPI.call(Service.DefaultKeychain(replacement: keychain.path))
    }
}

/// The user's search list, an array of `SecKeychain`.
public func SecKeychainCopySearchList(_ searchList: UnsafeMutablePointer<CFArray?>) -> OSStatus {
    keychainCall { keychainAPI throws(KeychainError) in
        let paths = try keychainAPI.call(Service.SearchList(replacement: nil)).paths
        searchList.pointee = paths.map { SecKeychain(path: $0) } as CFArray
    }
}

/// Replaces the user's search list with an array of `SecKeychain`.
public func SecKeychainSetSearchList(_ searchList: CFArray) -> OSStatus {
    guard let keychains = (searchList as NSArray) as? [SecKeychain] else { return errSecParam }
    return keychainCall { keychainAPI throws(KeychainError) in
        try keychainAPI.call(Service.SearchList(replacement: keychains.map(\.path)))
    }
}

/// Copies the keychain's path, NUL-terminated, into `pathName` (`ioPathLength` bytes);
/// on return `ioPathLength` is the path's length. errSecBufferTooSmall when it does not fit.
public func SecKeychainGetPath(_ keychain: SecKeychain?, _ ioPathLength: UnsafeMutablePointer<UInt32>, _ pathName: UnsafeMutablePointer<CChar>) -> OSStatus {
    guard let keychain else { return errSecParam }
    let bytes = Array(keychain.path.utf8)
    guard bytes.count < Int(ioPathLength.pointee) else { return errSecBufferTooSmall }
    for (index, byte) in bytes.enumerated() { pathName[index] = CChar(bitPattern: byte) }
    pathName[bytes.count] = 0
    ioPathLength.pointee = UInt32(bytes.count)
    return errSecSuccess
}

private func resolve(_ pathName: UnsafePointer<CChar>, _ keychain: Keychain) -> KeychainName {
    KeychainName.resolve(String(cString: pathName), keychain.paths)
}

private func keychainCall(_ body: (Keychain) throws(KeychainError) -> Void) -> OSStatus {
    do {
        try body(ProcessKeychain.keychain)
        return errSecSuccess
    } catch {
        return error.status.rawValue
    }
}
