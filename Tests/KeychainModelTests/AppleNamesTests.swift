import Foundation
import KeychainModel
import Testing

/// The `Security` module's public `kSec…` constants and the parser that reads the
/// dictionaries built with them must agree: every key the module declares is one the parser
/// knows — supported, or refused as errSecUnimplemented — never "unknown" (errSecParam).
/// (A query with `kSecMatchIssuers` once got errSecParam: the parser knew another name.)
@Suite struct AppleNamesTests {
    /// Every `public let kSec…: CFString = "…"` in Sources/Security, by name.
    static var declaredConstants: [(name: String, value: String)] {
        let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Sources/Security")
        let files = (try? FileManager.default.contentsOfDirectory(atPath: sources.path)) ?? []
        let pattern = try! Regex(#"public let (kSec\w+): CFString = "([^"]*)""#)  // a literal pattern
        return files.filter { $0.hasSuffix(".swift") }.flatMap { file -> [(name: String, value: String)] in
            let text = (try? String(contentsOf: sources.appendingPathComponent(file), encoding: .utf8)) ?? ""
            return text.matches(of: pattern).compactMap { match in
                guard let name = match.output[1].substring, let value = match.output[2].substring else { return nil }
                return (String(name), String(value))
            }
        }
    }

    /// Families of values, named after their key (`kSecAttrAccessibleWhenUnlocked`).
    static let valueFamilies = ["kSecClass", "kSecAttrAccessible", "kSecAttrProtocol", "kSecAttrAuthenticationType", "kSecAttrKeyClass", "kSecAttrKeyType"]
    /// Single values.
    static let values: Set = [
        "kSecAttrSynchronizableAny", "kSecMatchLimitOne", "kSecMatchLimitAll", "kSecUseAuthenticationUIAllow",
        "kSecUseAuthenticationUIFail", "kSecUseAuthenticationUISkip",
    ]

    static func isKey(_ name: String) -> Bool {
        guard !values.contains(name), !valueFamilies.contains(where: { name.hasPrefix($0) && name != $0 }) else { return false }
        return name == "kSecClass" || ["kSecAttr", "kSecMatch", "kSecReturn", "kSecValue", "kSecUse"].contains { name.hasPrefix($0) }
    }

    @Test func theSourceIsRead() {
        let names = Self.declaredConstants.map(\.name)
        #expect(names.count > 100)
        #expect(names.contains("kSecMatchIssuers"))
    }

    @Test func everyDeclaredKeyIsKnownToTheParser() {
        let keys = Self.declaredConstants.filter { Self.isKey($0.name) }
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
}
