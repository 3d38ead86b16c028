import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxMacros

/// `@WireStruct`: a struct that crosses the wire gets the initializer Swift synthesizes, at
/// the struct's own access level (Swift's is internal), and `Codable` (its wire form,
/// `WireEncoder`'s) when it does not declare it. A message crosses modules, so without this
/// each declaration would repeat every property three times (property, parameter,
/// assignment).
///
/// Parameters follow the stored properties in order, labelled by their names; a `var`'s
/// initial value becomes its parameter's default; a `let` with a value, a computed
/// property and a `static` one are left out.
public struct WireStructExpansion: MemberMacro, ExtensionMacro {
    /// `Codable` straight on the struct, in an extension the compiler synthesizes it in (a
    /// protocol refining `Codable` instead would make every message's witness tables be
    /// instantiated at run time: the standard library is resilient).
    public static func expansion(
        of node: AttributeSyntax,
        attachedTo declaration: some DeclGroupSyntax,
        providingExtensionsOf type: some TypeSyntaxProtocol,
        conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [ExtensionDeclSyntax] {
        guard declaration.is(StructDeclSyntax.self), !protocols.isEmpty else { return [] }
        let list = protocols.map(\.trimmedDescription).joined(separator: ", ")
        return [try ExtensionDeclSyntax("extension \(type.trimmed): \(raw: list) {}")]
    }

    public static func expansion(
        of node: AttributeSyntax,
        providingMembersOf declaration: some DeclGroupSyntax,
        conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        guard let structure = declaration.as(StructDeclSyntax.self) else {
            throw MacroExpansionErrorMessage("@WireStruct applies to a struct")
        }
        var parameters: [String] = []
        var assignments: [String] = []
        for member in structure.memberBlock.members {
            guard let variable = member.decl.as(VariableDeclSyntax.self),
                !variable.modifiers.contains(where: { $0.name.tokenKind == .keyword(.static) })
            else { continue }
            let isLet = variable.bindingSpecifier.tokenKind == .keyword(.let)
            for binding in variable.bindings {
                if let accessors = binding.accessorBlock, !accessors.isObserversOnly { continue }
                guard let name = binding.pattern.as(IdentifierPatternSyntax.self)?.identifier.trimmedDescription else {
                    continue
                }
                if isLet && binding.initializer != nil { continue }
                guard let type = binding.typeAnnotation?.type.trimmedDescription else {
                    throw MacroExpansionErrorMessage("@WireStruct needs the type of '\(name)' written out")
                }
                let defaultValue = binding.initializer.map { " = \($0.value.trimmedDescription)" } ?? ""
                parameters.append("\(name): \(type)\(defaultValue)")
                assignments.append("self.\(name) = \(name)")
            }
        }
        let access = structure.modifiers.first { modifier in
            [.keyword(.public), .keyword(.package), .keyword(.internal), .keyword(.fileprivate)]
                .contains(modifier.name.tokenKind)
        }.map { "\($0.name.text) " } ?? ""
        let body = assignments.isEmpty ? "{}" : "{\n\(assignments.joined(separator: "\n"))\n}"
        return ["\(raw: access)init(\(raw: parameters.joined(separator: ", "))) \(raw: body)"]
    }
}

extension AccessorBlockSyntax {
    /// `willSet`/`didSet` only: the property is still stored.
    fileprivate var isObserversOnly: Bool {
        guard case .accessors(let list) = accessors else { return false }
        return list.allSatisfy { [.keyword(.willSet), .keyword(.didSet)].contains($0.accessorSpecifier.tokenKind) }
    }
}
