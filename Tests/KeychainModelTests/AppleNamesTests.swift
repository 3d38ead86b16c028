import Foundation
import KeychainModel
import Testing

/// Apple's names come from one table (``SecName``): the `Security` module's public `kSec…`
/// constants are derived from it, and every key in it is one the parser knows —
/// supported, or refused as errSecUnimplemented — never "unknown" (errSecParam). (A query
/// with `kSecMatchIssuers` once got errSecParam: the parser knew another name.)
@Suite struct AppleNamesTests {
    /// Every `public let kSec…: CFString = …` in Sources/Security, with what follows `=`.
    static var declaredConstants: [(name: String, definition: String)] {
        let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Sources/Security")
        let files = (try? FileManager.default.contentsOfDirectory(atPath: sources.path)) ?? []
        let pattern = try! Regex(#"public let (kSec\w+): CFString = (.*)"#)  // a literal pattern
        return files.filter { $0.hasSuffix(".swift") }.flatMap { file -> [(name: String, definition: String)] in
            let text = (try? String(contentsOf: sources.appendingPathComponent(file), encoding: .utf8)) ?? ""
            return text.matches(of: pattern).compactMap { match in
                guard let name = match.output[1].substring, let definition = match.output[2].substring else { return nil }
                return (String(name), String(definition))
            }
        }
    }

    /// Each constant of the Security module is the table's entry of the same name.
    @Test func securityConstantsAreDerivedFromTheTable() {
        let declared = Self.declaredConstants
        #expect(declared.count == SecName.all.count, "declared \(declared.count), table \(SecName.all.count)")
        let table = Set(SecName.all.map(\.name))
        for (name, definition) in declared {
            #expect(definition == "NSString(string: SecName.\(name))", "\(name) = \(definition)")
            #expect(table.contains(name), "\(name) is not in SecName.all")
        }
    }

    /// Families of values, named after their key (`kSecAttrAccessibleWhenUnlocked`).
    static let valueFamilies = ["kSecClass", "kSecAttrAccessible", "kSecAttrProtocol", "kSecAttrAuthenticationType", "kSecAttrKeyClass", "kSecAttrKeyType"]
    /// Single values.
    static let values: Set = [
        "kSecAttrSynchronizableAny", "kSecMatchLimitOne", "kSecMatchLimitAll", "kSecUseAuthenticationUIAllow",
        "kSecUseAuthenticationUIFail", "kSecUseAuthenticationUISkip", "kSecAttrTokenIDSecureEnclave",
    ]

    static func isKey(_ name: String) -> Bool {
        guard !values.contains(name), !valueFamilies.contains(where: { name.hasPrefix($0) && name != $0 }) else { return false }
        return name == "kSecClass" || ["kSecAttr", "kSecMatch", "kSecReturn", "kSecValue", "kSecUse"].contains { name.hasPrefix($0) }
    }

    @Test func everyDeclaredKeyIsKnownToTheParser() {
        let keys = SecName.all.filter { Self.isKey($0.name) }
        #expect(keys.count > 60)
        for (name, key) in keys {
            // Each class that could carry the key; known if any of them accepts or refuses it
            // for a reason other than not knowing it.
            var unknown: [String] = []
            for itemClass in ["genp", "inet", "cert", "keys"] {
                var query: [String: KeychainValue] = ["class": .string(itemClass)]
                if key != "class" { query[key] = .string("x") }
                do {
                    _ = try ItemQuery(query, for: .copyMatching)
                } catch let error as KeychainError {
                    if error.message.contains("unknown") { unknown.append("\(itemClass): \(error.message)") }
                } catch {
                    unknown.append("\(error)")
                }
            }
            #expect(unknown.count < 4, "\(name) (\(key)) is unknown to the parser: \(unknown)")
        }
    }

    /// The typed codes carry Apple's published values (SecBase.h, SecAccessControl.h): the
    /// one place these numbers appear, so a typo in the table fails here.
    @Test func typedCodesCarryApplesValues() {
        let statuses: [(OSStatusCode, Int32)] = [
            (.success, 0), (.unimplemented, -4), (.param, -50), (.allocate, -108), (.userCanceled, -128),
            (.notAvailable, -25291), (.authFailed, -25293), (.duplicateItem, -25299), (.itemNotFound, -25300),
            (.interactionNotAllowed, -25308), (.authNeeded, -25330), (.noAccessForItem, -25243), (.decode, -26275),
            (.missingEntitlement, -34018), (.internalComponent, -2070), (.verifyFailed, -67808), (.hostNameMismatch, -67602),
            (.invalidExtendedKeyUsage, -67609), (.unsupportedKeySize, -67735), (.certificateExpired, -67818), (.notTrusted, -67843),
            (.securityInternal, -26276), (.trustSettingDeny, -67654), (.unknownFormat, -25257), (.noTrustSettings, -25263),
            (.pkcs12VerifyFailure, -25264), (.unsupportedKeyFormat, -67734),
        ]
        for (status, value) in statuses { #expect(status.rawValue == value, "\(status.message)") }
        #expect(OSStatusCode.itemNotFound.message == "The specified item could not be found in the keychain.")
        #expect(OSStatusCode(rawValue: 12345).message == "OSStatus 12345")

        let flags: [(AccessControl.Flags, UInt64)] = [
            (.userPresence, 1 << 0), (.biometryAny, 1 << 1), (.biometryCurrentSet, 1 << 3), (.devicePasscode, 1 << 4),
            (.companion, 1 << 5), (.or, 1 << 14), (.and, 1 << 15), (.privateKeyUsage, 1 << 30), (.applicationPassword, 1 << 31),
        ]
        for (flag, value) in flags { #expect(flag.rawValue == value) }
        #expect(throws: KeychainError.param) { try AccessControl(protection: .whenUnlocked, flags: AccessControl.Flags(rawValue: 1 << 2)) }
    }
}
