// swift-tools-version:6.1
import PackageDescription

// Targets follow trust boundaries (see ARCHITECTURE.md): the model is dependency-free,
// only KeychainCrypto and Keybag import Crypto, only KeychainStore imports GRDB.
let package = Package(
    name: "Trousseau",
    platforms: [.macOS(.v14)],
    products: [
        .library(name: "KeychainModel", targets: ["KeychainModel"]),
        .library(name: "KeychainStore", targets: ["KeychainStore"]),
        .executable(name: "security", targets: ["security"]),
        .executable(name: "trousseau-enclave", targets: ["trousseau-enclave"]),
        .executable(name: "securityd", targets: ["securityd"]),
        .library(name: "KeychainClient", targets: ["KeychainClient"]),
        .library(name: "Security", targets: ["Security"]),
        .library(name: "LocalAuthentication", targets: ["LocalAuthentication"]),
        // For the libFuzzer package in Fuzz/.
        .library(name: "KeychainFuzzTargets", targets: ["KeychainFuzzTargets"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-certificates", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1", from: "1.7.4"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    ],
    targets: [
        .target(name: "KeychainModel"),
        .target(name: "CSystemShims"),
        .target(
            name: "KeychainCrypto",
            dependencies: [
                "KeychainModel",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ]
        ),
        .target(
            name: "Keybag",
            dependencies: [
                "CSystemShims",
                "KeychainModel",
                "KeychainCrypto",
            ]
        ),
        .target(
            name: "Enclave",
            dependencies: ["KeychainModel", "KeychainCrypto", "Keybag"]
        ),
        .executableTarget(
            name: "trousseau-enclave",
            dependencies: ["CSystemShims", "Enclave", "Keybag", "KeychainModel"]
        ),
        .target(
            name: "CodeSigning",
            dependencies: [
                "KeychainModel",
                "KeychainCrypto",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ]
        ),
        .target(
            name: "KeychainStore",
            dependencies: [
                "KeychainModel",
                "KeychainCrypto",
                "Keybag",
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        .target(
            name: "KeychainServer",
            dependencies: [
                "CSystemShims", "CodeSigning", "KeychainModel", "KeychainCrypto", "KeychainStore", "Enclave",
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .executableTarget(
            name: "securityd",
            dependencies: ["CSystemShims", "CodeSigning", "KeychainServer", "KeychainStore", "Enclave", "Keybag", "KeychainModel"]
        ),
        .target(
            name: "KeychainClient",
            dependencies: ["KeychainModel"]
        ),
        .target(
            name: "Security",
            // X509 is not imported, only built first: swift-certificates compiles SecCertificate
            // glue under `#if canImport(Security)`, and building it first keeps that glue out of
            // a clean build (see SecCertificate.swift for an incremental one).
            dependencies: [
                "KeychainClient", "KeychainModel",
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "X509", package: "swift-certificates"),
            ]
        ),
        .executableTarget(
            name: "security",
            dependencies: [
                "CodeSigning",
                "KeychainModel",
                "KeychainClient",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
            ]
        ),
        .target(
            name: "KeychainTestSupport",
            dependencies: ["KeychainModel", "KeychainStore", "Keybag", "Enclave", "KeychainClient"],
            path: "Tests/KeychainTestSupport"
        ),
        .target(
            name: "LocalAuthentication",
            dependencies: ["Security", "KeychainClient", "KeychainModel"]
        ),
        .executableTarget(
            name: "keychain-example",
            dependencies: ["Security"],
            path: "Examples/KeychainExample"
        ),
        .executableTarget(
            // Measures the daemon against the machine's floors (docs/PERFORMANCE.md).
            name: "keychain-bench",
            dependencies: [
                "KeychainClient", "KeychainModel",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Benchmarks/keychain-bench"
        ),
        .executableTarget(
            name: "keychain-probe",
            dependencies: ["KeychainClient", "KeychainModel"],
            path: "Tests/Probe"
        ),
        .testTarget(
            name: "CodeSigningTests",
            dependencies: [
                "CodeSigning", "KeychainModel",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
            ]
        ),
        .testTarget(
            name: "SecurityAPITests",
            dependencies: [
                "Security", "LocalAuthentication", "KeychainClient", "KeychainTestSupport", "securityd", "trousseau-enclave", "security",
                "keychain-example",
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        .testTarget(name: "KeychainModelTests", dependencies: ["KeychainModel"]),
        .testTarget(
            name: "KeychainCryptoTests",
            dependencies: ["KeychainCrypto", "KeychainModel"],
            exclude: ["Vectors/make_vectors.py"]
        ),
        .testTarget(
            name: "KeychainStoreTests",
            dependencies: [
                "KeychainStore", "KeychainModel", "Keybag", "KeychainCrypto", "KeychainTestSupport", "Enclave",
                "trousseau-enclave",
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        .testTarget(
            name: "EnclaveTests",
            dependencies: [
                "Enclave", "Keybag", "KeychainCrypto", "KeychainModel", "KeychainStore", "KeychainTestSupport",
                "trousseau-enclave",
            ]
        ),
        .testTarget(
            name: "SecurityDaemonTests",
            dependencies: [
                "KeychainClient", "KeychainModel", "KeychainCrypto", "KeychainTestSupport", "securityd", "trousseau-enclave", "security",
                "keychain-probe", "keychain-bench", "CodeSigning",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "X509", package: "swift-certificates"),
            ]
        ),
        .target(
            // The decoders of untrusted bytes as fuzz targets (Fuzz/, scripts/fuzz).
            name: "KeychainFuzzTargets",
            dependencies: ["KeychainModel", "KeychainCrypto", "Enclave"]
        ),
        .testTarget(
            // Crash safety, disk faults, concurrency against a model, tampering, brute force,
            // leaks and the fuzz corpora (docs/RELIABILITY.md); TROUSSEAU_LONG_RUNS=1 for long runs.
            name: "ReliabilityTests",
            dependencies: [
                "KeychainClient", "KeychainModel", "KeychainTestSupport", "KeychainFuzzTargets", "securityd", "trousseau-enclave",
                "security",
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        .testTarget(
            name: "SecurityToolTests",
            dependencies: ["security", "securityd", "trousseau-enclave", "KeychainTestSupport"],
            exclude: ["Golden"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
