/// Gives a struct the memberwise initializer at the struct's own access level (Swift's
/// synthesized one is internal): parameters in the order of the stored properties, named
/// by them, a `var`'s initial value as its default. For the wire's messages, which every
/// module that speaks a protocol builds.
@attached(member, names: named(init))
public macro MemberwiseInit() = #externalMacro(module: "KeychainMacros", type: "MemberwiseInitMacro")
