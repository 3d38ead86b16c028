// Test support: compiled in debug builds only (`swift build -c release` builds the products,
// and a release build cannot `@testable import`).
#if TROUSSEAU_TEST_HOOKS
@testable public import KeychainCallers

// Reaches tests name directly: only KeychainCallers makes them in the product.
extension AccessGroups {
    /// `groups`, as a caller entitled to them would have them.
    public static func test(_ groups: [String]) -> AccessGroups { AccessGroups(groups) }
}

extension SecretScope {
    /// A Secret Service scope whose only group is `group`.
    public static func test(_ group: String) -> SecretScope { SecretScope(description: "test \(group)", groups: [group]) }
}
#endif
