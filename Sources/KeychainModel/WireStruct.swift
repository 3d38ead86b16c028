/// A struct that crosses the wire: it gets the memberwise initializer at the struct's own
/// access level (Swift's synthesized one is internal) — parameters in the order of the
/// stored properties, named by them, a `var`'s initial value as its default — and `Codable`,
/// its wire form through ``WireEncoder``, unless it declares that itself. For the messages
/// and the values they carry, which every module that speaks a protocol builds.
@attached(member, names: named(init))
@attached(extension, conformances: Codable)
public macro WireStruct() = #externalMacro(module: "KeychainMacros", type: "WireStructMacro")
