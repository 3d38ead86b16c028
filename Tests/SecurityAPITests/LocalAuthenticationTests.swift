import Foundation
import LocalAuthentication
import Security
import Testing

extension SecurityAPI {
    /// LAContext over the shared test keychain (no passcode, no biometric sensor) and
    /// `kSecUseAuthenticationContext` through the Security functions.
    @Suite struct LocalAuthenticationTests {
        let service = SecurityAPI.useSharedKeychain()

        @Test func policiesThisKeychainCannotEvaluate() {
            let context = LAContext()
            var error: NSError?
            #expect(!context.canEvaluatePolicy(.deviceOwnerAuthentication, error: &error))
            #expect(error?.code == LAError.Code.passcodeNotSet.rawValue && error?.domain == LAErrorDomain)
            #expect(!context.canEvaluatePolicy(.deviceOwnerAuthenticationWithBiometrics, error: &error))
            #expect(error?.code == LAError.Code.biometryNotAvailable.rawValue)
            #expect(context.biometryType == .none && context.evaluatedPolicyDomainState == nil)
        }

        @Test func evaluatingFailsWithLAErrorsAndAnInvalidatedContextStaysInvalid() async {
            let context = LAContext()
            await #expect(throws: LAError(.passcodeNotSet)) { try await context.evaluatePolicy(.deviceOwnerAuthentication, localizedReason: "test") }
            context.invalidate()
            await #expect(throws: LAError(.invalidContext)) { try await context.evaluatePolicy(.deviceOwnerAuthentication, localizedReason: "test") }
        }

        /// An item protected by an application password: stored and read with the password
        /// set on the context, refused with a wrong one, and unreadable without asking when
        /// the context may not interact.
        @Test func applicationPasswordThroughTheContext() throws {
            var error: Unmanaged<CFError>?
            let access = try #require(SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleWhenUnlocked, .applicationPassword, &error))
            let context = LAContext()
            #expect(context.setCredential(Data("app-pw".utf8), type: .applicationPassword))
            #expect(context.isCredentialSet(.applicationPassword))
            let item = SecurityAPI.genericPassword(service: service, account: "a", [
                kSecAttrAccessControl as String: access, kSecUseAuthenticationContext as String: context,
                kSecValueData as String: Data("s3cret".utf8),
            ])
            #expect(SecItemAdd(item as CFDictionary, nil) == errSecSuccess)

            func read(_ context: LAContext) -> (OSStatus, Data?) {
                var result: CFTypeRef?
                let query = SecurityAPI.genericPassword(service: service, account: "a", [
                    kSecReturnData as String: true, kSecUseAuthenticationContext as String: context,
                ])
                let status = SecItemCopyMatching(query as CFDictionary, &result)
                return (status, result as? Data)
            }
            #expect(read(context).1 == Data("s3cret".utf8))

            let wrong = LAContext()
            wrong.setCredential(Data("guess".utf8), type: .applicationPassword)
            #expect(read(wrong).0 == errSecAuthFailed)

            let silent = LAContext()
            silent.interactionNotAllowed = true
            #expect(read(silent).0 == errSecInteractionNotAllowed)

            var attributes: CFTypeRef?
            let search = SecurityAPI.genericPassword(service: service, account: "a", [kSecReturnAttributes as String: true])
            #expect(SecItemCopyMatching(search as CFDictionary, &attributes) == errSecSuccess, "attributes need no password")
            #expect(SecItemDelete(SecurityAPI.genericPassword(service: service, account: "a") as CFDictionary) == errSecSuccess)
        }
    }
}
