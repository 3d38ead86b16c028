import KeychainMacros
import SwiftSyntaxMacroExpansion
import SwiftSyntaxMacrosGenericTestSupport
import Testing

/// `@MemberwiseInit` expands to the initializer Swift would synthesize, at the struct's
/// access level: stored properties in order, a `var`'s value as the default.
struct MemberwiseInitTests {
    static let macros: [String: MacroSpec] = ["MemberwiseInit": MacroSpec(type: MemberwiseInitMacro.self)]

    func expect(_ source: String, expands expanded: String, diagnostics: [DiagnosticSpec] = [], sourceLocation: SourceLocation = #_sourceLocation) {
        assertMacroExpansion(source, expandedSource: expanded, diagnostics: diagnostics, macroSpecs: Self.macros) { failure in
            Issue.record(Comment(rawValue: failure.message), sourceLocation: sourceLocation)
        }
    }

    @Test func storedPropertiesInOrderWithDefaultsAtTheStructsAccessLevel() {
        expect(
            """
            @MemberwiseInit
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
            """)
    }

    @Test func anEmptyPackageStructGetsAnEmptyInitializer() {
        expect(
            """
            @MemberwiseInit
            package struct Lock {
            }
            """,
            expands: """
            package struct Lock {

                package init() {
                }
            }
            """)
    }

    @Test func aPropertyWithoutItsTypeOrAnEnumIsAnError() {
        expect(
            """
            @MemberwiseInit
            struct Guess {
                var count = 1
            }
            """,
            expands: """
            struct Guess {
                var count = 1
            }
            """,
            diagnostics: [DiagnosticSpec(message: "@MemberwiseInit needs the type of 'count' written out", line: 1, column: 1)])
        expect(
            """
            @MemberwiseInit
            enum Kind {
            }
            """,
            expands: """
            enum Kind {
            }
            """,
            diagnostics: [DiagnosticSpec(message: "@MemberwiseInit applies to a struct", line: 1, column: 1)])
    }
}
