import ArgumentParser
import FoundationEssentials
import KeychainModel

#if canImport(Glibc)
import Glibc
#endif

/// Reports a keychain error as macOS's `security` does — `security: <function>: <message>`
/// on standard error — and exits with the OSStatus's low byte (errSecItemNotFound → 44,
/// errSecDuplicateItem → 45), as macOS's tool does.
func fail(_ function: String, _ error: any Error) -> ExitCode {
    let keychainError = error as? KeychainError ?? KeychainError(status: OSStatusCode.internalComponent)
    writeToStandardError("security: \(function): \(KeychainError.appleMessage(for: keychainError.status))\n")
    if ProcessInfo.processInfo.environment["TROUSSEAU_DEBUG"] != nil { writeToStandardError("detail: \(keychainError.message)\n") }
    return ExitCode(Int32(UInt8(truncatingIfNeeded: keychainError.status)))
}

func writeToStandardError(_ text: String) {
    var text = text
    text.withUTF8 { bytes in
        _ = write(2, bytes.baseAddress, bytes.count)
    }
}
