import KeychainMacroExpansions
import SwiftCompilerPlugin
import SwiftSyntax
import SwiftSyntaxMacros

@main
struct KeychainMacrosPlugin: CompilerPlugin {
    let providingMacros: [any Macro.Type] = [WireStructMacro.self]
}

/// `@WireStruct` as the compiler names it: `#externalMacro(module: "KeychainMacros", type:
/// "WireStructMacro")` finds the type by its module-qualified name, so it lives here and
/// hands each expansion to `WireStructExpansion`. That one sits in a library the tests link,
/// because a test target depending on a macro target makes SwiftPM build the whole test
/// bundle, and every module under it, a second time for the host.
public struct WireStructMacro: MemberMacro, ExtensionMacro {
    public static func expansion(
        of node: AttributeSyntax,
        providingMembersOf declaration: some DeclGroupSyntax,
        conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        try WireStructExpansion.expansion(of: node, providingMembersOf: declaration, conformingTo: protocols, in: context)
    }

    public static func expansion(
        of node: AttributeSyntax,
        attachedTo declaration: some DeclGroupSyntax,
        providingExtensionsOf type: some TypeSyntaxProtocol,
        conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [ExtensionDeclSyntax] {
        try WireStructExpansion.expansion(of: node, attachedTo: declaration, providingExtensionsOf: type, conformingTo: protocols, in: context)
    }
}
