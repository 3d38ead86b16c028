// swift-tools-version:6.1
import PackageDescription

// libFuzzer targets over Trousseau's decoders of untrusted bytes (KeychainFuzzTargets).
// Built and run by scripts/fuzz with -sanitize=fuzzer,address; not part of the main build,
// since a fuzzer supplies its own main.
let targets = ["frame", "query", "blob"]
let package = Package(
    name: "TrousseauFuzz",
    dependencies: [.package(name: "Trousseau", path: "..")],
    targets: targets.map { name in
        .executableTarget(
            name: "fuzz-\(name)",
            dependencies: [.product(name: "KeychainFuzzTargets", package: "Trousseau")]
        )
    },
    swiftLanguageModes: [.v6]
)
