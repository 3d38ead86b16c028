// swift-tools-version:6.1
import PackageDescription

// libFuzzer driver over Trousseau's decoders of untrusted bytes (KeychainFuzzTargets).
// Built and run by scripts/fuzz with -sanitize=fuzzer,address; not part of the main build,
// since libFuzzer's driver replaces the executable's main.
let package = Package(
    name: "TrousseauFuzz",
    dependencies: [.package(name: "Trousseau", path: "..")],
    targets: [
        .executableTarget(
            name: "keychain-fuzz",
            dependencies: [.product(name: "KeychainFuzzTargets", package: "Trousseau")],
            // KeychainProfiles calls CoreFoundation, whose symbols are in libFoundation on
            // Linux; nothing else in this executable links it.
            linkerSettings: [.linkedLibrary("Foundation")]
        )
    ],
    swiftLanguageModes: [.v6]
)
