import KeychainMacroExpansions
import SwiftSyntaxMacroExpansion
import SwiftSyntaxMacrosGenericTestSupport
import Testing

/// `@WireStruct` expands to the initializer Swift would synthesize, at the struct's access
/// level (stored properties in order, a `var`'s value as the default), and to `Codable` in
/// an extension when the struct does not declare it (the compiler passes the conformances
/// still missing; here, as for a struct without one, `Codable`).
struct WireStructTests {
    static let macros: [String: MacroSpec] = ["WireStruct": MacroSpec(type: WireStructExpansion.self, conformances: ["Codable"])]

    func expect(_ source: String, expands expanded: String, diagnostics: [DiagnosticSpec] = [], sourceLocation: SourceLocation = #_sourceLocation) {
        assertMacroExpansion(source, expandedSource: expanded, diagnostics: diagnostics, macroSpecs: Self.macros) { failure in
            Issue.record(Comment(rawValue: failure.message), sourceLocation: sourceLocation)
        }
    }

    @Test func storedPropertiesInOrderWithDefaultsAtTheStructsAccessLevel() {
        expect(
            """
            @WireStruct
            public struct CreateKeychain {
                public static let authorization = Authorization.anyCaller
                static let limit = 64
                public var path: String
                public var password: SecretBytes?
                public let kind = "file"
                public var settings: KeychainSettings = KeychainSettings()
                public var count: Int { 1 }
                public var observed: Int { didSet { } }
            }
            """,
            expands: """
            public struct CreateKeychain {
                public static let authorization = Authorization.anyCaller
                static let limit = 64
                public var path: String
                public var password: SecretBytes?
                public let kind = "file"
                public var settings: KeychainSettings = KeychainSettings()
                public var count: Int { 1 }
                public var observed: Int { didSet { } }

                public init(path: String, password: SecretBytes?, settings: KeychainSettings = KeychainSettings(), observed: Int) {
                    self.path = path
                    self.password = password
                    self.settings = settings
                    self.observed = observed
                }
            }

            extension CreateKeychain: Codable {
            }
            """)
    }

    @Test func anEmptyPackageStructGetsAnEmptyInitializer() {
        expect(
            """
            @WireStruct
            package struct Lock {
            }
            """,
            expands: """
            package struct Lock {

                package init() {
                }
            }

            extension Lock: Codable {
            }
            """)
    }

    @Test func aPropertyWithoutItsTypeOrAnEnumIsAnError() {
        expect(
            """
            @WireStruct
            struct Guess {
                var count = 1
            }
            """,
            expands: """
            struct Guess {
                var count = 1
            }

            extension Guess: Codable {
            }
            """,
            diagnostics: [DiagnosticSpec(message: "@WireStruct needs the type of 'count' written out", line: 1, column: 1)])
        expect(
            """
            @WireStruct
            enum Kind {
            }
            """,
            expands: """
            enum Kind {
            }
            """,
            diagnostics: [DiagnosticSpec(message: "@WireStruct applies to a struct", line: 1, column: 1)])
    }
}
