// Test support: compiled in debug builds only (`swift build -c release` builds the products,
// and a release build cannot `@testable import`).
#if TROUSSEAU_TEST_HOOKS
import Foundation
public import Testing

extension Trait where Self == ConditionTrait {
    /// Runs a suite or test only where each of `programs` is installed in /usr/bin
    /// (scripts/install-deps installs them all, so CI runs every one).
    public static func requires(_ programs: String...) -> Self {
        let installed = programs.allSatisfy { FileManager.default.isExecutableFile(atPath: "/usr/bin/\($0)") }
        return .enabled(if: installed, Comment(rawValue: "needs \(programs.joined(separator: ", ")) (scripts/install-deps)"))
    }
}
#endif
