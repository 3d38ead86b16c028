// swift-tools-version:6.1
import PackageDescription

// Modules follow the process boundaries (docs/ARCHITECTURE.md): securityd links the
// enclave's client and protocol, never the keybag (EnclaveBackend), which only
// trousseau-enclave and tests link; only KeychainCrypto and EnclaveBackend import Crypto
// for keys; only KeychainStore imports GRDB; KeychainSystem is the one syscall layer.
//
// Debug builds are test builds: they carry the test hooks (a scripted biometric sensor,
// a fast passcode KDF, another enclave binary), which release builds do not contain.
let testHooks: [SwiftSetting] = [.define("TROUSSEAU_TEST_HOOKS", .when(configuration: .debug))]

let package = Package(
    name: "Trousseau",
    platforms: [.macOS(.v14)],
    products: [
        .library(name: "KeychainModel", targets: ["KeychainModel"]),
        .executable(name: "security", targets: ["SecurityTool"]),
        .executable(name: "trousseau-enclave", targets: ["trousseau-enclave"]),
        .executable(name: "securityd", targets: ["securityd"]),
        .executable(name: "trousseau-syncd", targets: ["trousseau-syncd"]),
        .executable(name: "trousseau-sync-agent", targets: ["trousseau-sync-agent"]),
        .executable(name: "keychain-access", targets: ["keychain-access"]),
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
        // trousseau-syncd only: the HTTP server (WebSocket hints, TLS) and its two databases through one SQL layer.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.1"),
        // securityd's HTTP to the sync server (NIO, as the hint socket; not URLSession: see SyncServerClient).
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/vapor/sql-kit", from: "3.36.0"),
        .package(url: "https://github.com/vapor/sqlite-kit", from: "4.5.2"),
        .package(url: "https://github.com/vapor/postgres-kit", from: "2.17.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        // keychain-access only: its pages from templates that escape by default.
        .package(url: "https://github.com/hummingbird-project/swift-mustache", from: "2.1.1"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        // `swift package generate-documentation`: the DocC catalogs of Security, LocalAuthentication
        // and KeychainClient (scripts/build-docs). A command plugin: nothing of it is linked.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // Shared by every process.
        .target(name: "KeychainModel"),
        .target(name: "CSystemShims"),
        // One thin shim per C library, for securityd only. Debian's libcrypto (OpenSSL 3):
        // PKCS#12, CMS, the Secret Service's Diffie-Hellman group.
        .target(name: "COpenSSL", linkerSettings: [.linkedLibrary("crypto")]),
        // Debian's libsystemd (sd-bus): the Secret Service's bus and logind's PrepareForSleep.
        .target(name: "CSystemd", linkerSettings: [.linkedLibrary("systemd")]),
        // Debian's libsodium: ristretto255 for CPace (joining a device to the sync circle), and
        // the keychain's AES-256-GCM and HMAC-SHA256 (KeychainCrypto: a fraction of swift-crypto's cost per call).
        .target(name: "CSodium", linkerSettings: [.linkedLibrary("sodium")]),
        // Debian's tpm2-tss (libtss2-esys and its TCTI loader): the enclave's TPM 2.0 backend.
        .target(
            name: "CTPM",
            linkerSettings: [
                .linkedLibrary("tss2-esys"), .linkedLibrary("tss2-sys"), .linkedLibrary("tss2-tctildr"), .linkedLibrary("tss2-mu"),
                .linkedLibrary("tss2-rc"),
            ]
        ),
        // GLib's GVariant (Debian's libglib2.0-0, opened when first needed), reading
        // libsecret's version 1 keyring files.
        .target(name: "CGVariant"),
        // gnome-keyring's and libsecret's keyring files (`security import-keyring`), read in securityd.
        .target(
            name: "KeyringFiles",
            dependencies: [
                "CGVariant", "KeychainModel",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ]
        ),
        .target(name: "KeychainSystem", dependencies: ["KeychainModel"], swiftSettings: testHooks),
        // The daemon's log (swift-log with journald's priorities): securityd's side only, so a
        // client of the Security API links no logging library.
        .target(name: "KeychainLogging", dependencies: [.product(name: "Logging", package: "swift-log")]),
        // Called from the main of each process that holds keys. Apart from the system layer:
        // it needs a C shim, and nothing a client links may (swift-certificates imports
        // `Security` when it can, and a C module in its closure would break that build).
        .target(name: "KeychainHardening", dependencies: ["CSystemShims", "KeychainModel", "KeychainSystem"]),
        // The backup archive's format and the scrypt KDF: what `security backup inspect`
        // reads without linking the blobs' cipher (KeychainCrypto re-exports it).
        .target(
            name: "KeychainBackupFormat",
            dependencies: [
                "KeychainModel",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ]
        ),
        .target(
            name: "KeychainCrypto",
            dependencies: [
                "CSodium", "KeychainBackupFormat", "KeychainModel",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ]
        ),
        // What a SecKey does, in the process that holds it: RSA and elliptic-curve keys,
        // their external representations, Apple's signature, encryption and key-exchange
        // algorithms, on swift-crypto. No I/O.
        .target(
            name: "KeychainKeys",
            dependencies: [
                "KeychainModel",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ]
        ),
        // What a SecCertificate reads from a DER certificate, and the attributes Apple gives a
        // certificate item. swift-asn1 only: `Security` uses it and must not depend on
        // swift-certificates (docs/ARCHITECTURE.md).
        .target(
            name: "KeychainCertificates",
            dependencies: [
                "KeychainModel",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ]
        ),
        // PKCS#12 files (securityd's decoder and encoder, a fuzz target).
        .target(name: "KeychainPKCS12", dependencies: ["COpenSSL", "KeychainModel", "KeychainProtocol"]),
        // Configuration profiles: property lists, their CMS signatures and encrypted payloads
        // (OpenSSL through COpenSSL), and the items their payloads install. securityd only.
        .target(
            name: "KeychainProfiles",
            dependencies: [
                "COpenSSL", "KeychainCertificates", "KeychainKeys", "KeychainModel", "KeychainPKCS12", "KeychainProtocol",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ]
        ),
        // securityd's protocol (clients ↔ securityd) and the enclave's (securityd ↔ enclave):
        // messages and their codecs, no I/O.
        .target(name: "KeychainProtocol", dependencies: ["KeychainModel"]),
        .target(name: "EnclaveProtocol", dependencies: ["KeychainModel", "KeychainCrypto", "SyncCrypto", "SyncProtocol"]),

        // trousseau-enclave: the keybag, device key, sensors and the enclave server.
        .target(
            name: "EnclaveBackend",
            dependencies: [
                "CSystemShims", "CTPM", "KeychainModel", "KeychainCrypto", "KeychainKeys", "KeychainSystem", "EnclaveProtocol", "SyncCrypto",
                "SyncProtocol",
            ],
            swiftSettings: testHooks
        ),
        .executableTarget(
            name: "trousseau-enclave",
            dependencies: ["CSystemShims", "EnclaveBackend", "EnclaveProtocol", "KeychainHardening", "KeychainSystem", "KeychainModel"],
            swiftSettings: testHooks
        ),

        // securityd: callers, the store, the enclave's client.
        .target(
            name: "Enclave",
            dependencies: ["KeychainModel", "KeychainCrypto", "KeychainSystem", "EnclaveProtocol", "SyncCrypto", "SyncProtocol"],
            swiftSettings: testHooks
        ),
        .target(
            name: "CodeSigning",
            dependencies: [
                "KeychainModel", "KeychainSystem",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ]
        ),
        // Who a caller is and what it may reach: the one place that pins a caller's process
        // (a pidfd), reads its code signature, and makes the `AccessGroups` the store obeys.
        .target(
            name: "KeychainCallers",
            dependencies: ["CSystemShims", "CodeSigning", "KeychainModel", "KeychainCrypto", "KeychainLogging", "KeychainSystem"],
            swiftSettings: testHooks
        ),
        .target(
            name: "KeychainStore",
            dependencies: [
                "KeychainCallers", "KeychainModel", "KeychainCrypto", "KeychainSystem", "EnclaveProtocol",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ]
        ),
        // The freedesktop Secret Service: securityd's D-Bus front end (sd-bus through CSystemd),
        // its session algorithms (Diffie-Hellman through COpenSSL, HKDF and AES-CBC
        // from swift-crypto), callers' scopes, over the store's Secret Service items.
        .target(
            name: "SecretService",
            dependencies: [
                "COpenSSL", "CSystemd", "KeychainCallers", "KeychainModel", "KeychainStore", "KeyringFiles",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ]
        ),
        .target(
            name: "KeychainServer",
            dependencies: [
                "CSystemShims", "CSystemd", "CodeSigning", "KeychainCallers", "SecretService", "KeyringFiles", "KeychainCertificates", "KeychainKeys", "KeychainPKCS12", "KeychainProfiles",
                "KeychainModel", "KeychainCrypto", "KeychainStore",
                "KeychainLogging", "KeychainSystem", "KeychainProtocol", "Enclave", "EnclaveProtocol", "KeychainSync", "SyncCrypto", "SyncEngine", "SyncJoin", "SyncProtocol", "SyncTransport",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "X509", package: "swift-certificates"),
            ],
            swiftSettings: testHooks
        ),
        .executableTarget(
            name: "securityd",
            dependencies: [
                "CSystemShims", "CodeSigning", "KeychainCallers", "KeychainHardening", "KeychainLogging", "KeychainServer", "KeychainStore", "KeychainSystem", "Enclave",
                "KeychainModel",
            ],
            swiftSettings: testHooks
        ),

        // Clients.
        .target(
            name: "KeychainClient",
            dependencies: ["KeychainModel", "KeychainProtocol", "KeychainSystem"],
            swiftSettings: testHooks
        ),
        .target(
            name: "Security",
            // X509 is not imported, only built first: swift-certificates compiles SecCertificate
            // glue under `#if canImport(Security)`, and building it first keeps that glue out of
            // a clean build (see SecCertificate.swift for an incremental one).
            dependencies: [
                "KeychainCertificates", "KeychainClient", "KeychainKeys", "KeychainModel", "KeychainProtocol",
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "X509", package: "swift-certificates"),
            ]
        ),
        .executableTarget(
            // The `security` program (its product's name); the target has another name so
            // that no two modules or folders differ only in case from `Security`.
            name: "SecurityTool",
            dependencies: [
                "CodeSigning", "KeychainBackupFormat", "KeychainCertificates", "KeychainImport", "KeychainKeys", "KeychainSystem",
                "KeychainModel",
                "KeychainClient",
                "KeychainProtocol",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "X509", package: "swift-certificates"),
            ]
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
                "BenchWorkload", "CSystemd", "CTPM", "Enclave", "KeychainClient", "KeychainModel", "KeychainProtocol", "KeychainSystem", "Security", "SyncCrypto",
                "SyncProtocol",
                "KeychainStore", "KeychainSync", "EnclaveBackend", "KeychainCallers", "SyncNetwork", "SyncTransport",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PostgresKit", package: "postgres-kit"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Benchmarks/keychain-bench"
        ),
        .target(
            // The SecItem operations both benchmarks run (keychain-bench times them,
            // keychain-instructions counts their instructions), and the instructions report.
            name: "BenchWorkload",
            dependencies: ["KeychainClient", "KeychainModel"],
            path: "Benchmarks/BenchWorkload"
        ),
        .executableTarget(
            // Instructions per operation in securityd, the enclave and the client under
            // callgrind, against a committed baseline (scripts/bench-instructions; CI's gate).
            // Apart from keychain-bench so that CI's release build of it stays small.
            name: "keychain-instructions",
            dependencies: [
                "BenchWorkload", "KeychainClient", "KeychainModel", "KeychainSystem",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Benchmarks/keychain-instructions"
        ),
        .target(
            // The decoders of untrusted bytes as fuzz targets (Fuzz/, scripts/fuzz).
            name: "KeychainFuzzTargets",
            dependencies: [
                "KeychainModel", "KeychainCertificates", "KeychainCrypto", "KeychainKeys", "KeychainPKCS12", "KeychainProfiles", "KeychainProtocol",
                "EnclaveProtocol", "KeyringFiles", "SyncProtocol", "SyncCrypto", "SyncJoin", "SyncEngine", "SyncTransport",
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),

        // Sync between a user's devices: the records and requests both sides speak (no
        // dependencies), the server's store and routes, and the server's thin executable.
        .target(name: "SyncProtocol"),
        // A device's side: records sealed under fresh keys, bound to where they sit, signed.
        .target(
            name: "SyncCrypto",
            dependencies: ["SyncProtocol", "KeychainModel", .product(name: "Crypto", package: "swift-crypto")]
        ),
        .target(
            // Joining a device with a code (CPace on libsodium): the tool and the engine's, not
            // securityd's or the enclave's, which link SyncCrypto without libsodium.
            name: "SyncJoin",
            dependencies: ["CSodium", "SyncCrypto", "SyncProtocol", "KeychainModel", .product(name: "Crypto", package: "swift-crypto")]
        ),
        // The engine's pure parts (securityd's side): an item's record plaintext and the
        // three-way merge.
        .target(name: "SyncEngine", dependencies: ["KeychainModel", "KeychainCallers", "SyncProtocol"]),
        // The engine that drives them over a keychain store, a sealer (the enclave) and a
        // transport (the server).
        .target(
            name: "KeychainSync",
            dependencies: [
                "KeychainModel", "KeychainStore", "SyncEngine", "SyncCrypto", "SyncProtocol", "SyncTransport",
                .product(name: "Logging", package: "swift-log"),
            ]),
        // HTTP to the server as bytes, and the sync agent's frames: securityd's side of the
        // network, which links no network stack.
        .target(name: "SyncTransport", dependencies: ["KeychainModel", "KeychainSystem", "SyncProtocol"]),
        .target(
            // The network itself: the sync agent's (and a benchmark's or a test's in process).
            name: "SyncNetwork",
            dependencies: [
                "KeychainModel", "KeychainSystem", "SyncProtocol", "SyncTransport",
                // HTTP and change hints (a WebSocket; Debian's libcurl has none for URLSession).
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            // The keychain's one process that speaks to the network (securityd starts it while sync is on).
            name: "trousseau-sync-agent",
            dependencies: ["CSystemShims", "KeychainHardening", "KeychainModel", "KeychainSystem", "SyncNetwork"]
        ),
        .target(
            name: "SyncServer",
            dependencies: [
                "KeychainModel", "SyncProtocol", "SyncCrypto",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SQLKit", package: "sql-kit"),
                .product(name: "SQLiteKit", package: "sqlite-kit"),
                .product(name: "PostgresKit", package: "postgres-kit"),
            ]
        ),
        .executableTarget(
            name: "trousseau-syncd",
            dependencies: [
                "SyncServer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),

        // Files to import (PKCS#12, PEM, DER) read and added: `security import` and the window.
        .target(
            name: "KeychainImport",
            dependencies: [
                "KeychainCertificates", "KeychainKeys", "KeychainModel", "KeychainProtocol",
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ]
        ),
        // keychain-access: the Keychain Access window, a client of securityd with the security
        // tool's reach, served to the user's browser on loopback (docs/ARCHITECTURE.md).
        .target(
            name: "KeychainAccess",
            dependencies: [
                "KeychainClient", "KeychainModel", "KeychainProtocol", "KeychainSystem", "KeychainCertificates", "KeychainImport", "KeychainKeys",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "Mustache", package: "swift-mustache"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "keychain-access",
            dependencies: [
                "KeychainAccess", "KeychainHardening", "KeychainSystem",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),

        // Tests.
        .target(
            name: "KeychainTestSupport",
            dependencies: [
                "KeychainCallers", "KeychainModel", "KeychainStore", "EnclaveBackend", "EnclaveProtocol", "Enclave", "KeychainClient",
                "KeychainProtocol", "KeychainSystem",
            ],
            path: "Tests/KeychainTestSupport",
            swiftSettings: testHooks
        ),
        .executableTarget(
            name: "keychain-probe",
            dependencies: ["KeychainClient", "KeychainHardening", "KeychainModel", "KeychainProtocol", "KeychainSystem"],
            path: "Tests/Probe"
        ),
        .testTarget(
            name: "CodeSigningTests",
            dependencies: [
                "CodeSigning", "KeychainModel",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
            ],
            swiftSettings: testHooks
        ),
        .testTarget(
            name: "SecurityAPITests",
            dependencies: [
                "Security", "LocalAuthentication", "KeychainClient", "KeychainTestSupport", "securityd", "trousseau-enclave", "SecurityTool",
                "keychain-example",
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            exclude: ["Fixtures/apple_seckey_reference.py"],
            swiftSettings: testHooks
        ),
        .testTarget(
            name: "KeychainAccessTests",
            dependencies: ["KeychainAccess", "KeychainTestSupport", "keychain-access", "securityd", "trousseau-enclave", "SecurityTool"]
        ),
        .testTarget(
            name: "SecretServiceTests",
            dependencies: ["SecretService", "EnclaveProtocol", "KeychainCrypto", "KeychainCallers", "KeychainModel", "KeychainStore", "KeychainTestSupport"],
            swiftSettings: testHooks
        ),
        .testTarget(name: "KeychainModelTests", dependencies: ["KeychainModel", "KeychainProtocol", "KeychainSystem"], swiftSettings: testHooks),
        .testTarget(
            name: "KeychainCryptoTests",
            dependencies: ["KeychainCrypto", "KeychainModel", "KeychainTestSupport", .product(name: "Crypto", package: "swift-crypto")],
            exclude: ["Vectors/make_vectors.py"],
            swiftSettings: testHooks
        ),
        .testTarget(
            name: "KeybagTests",
            dependencies: ["EnclaveBackend", "EnclaveProtocol", "KeychainCrypto", "KeychainModel", "KeychainSystem", "KeychainTestSupport"],
            swiftSettings: testHooks
        ),
        .testTarget(
            name: "KeychainStoreTests",
            dependencies: [
                "KeychainStore", "KeychainModel", "EnclaveBackend", "EnclaveProtocol", "KeychainCrypto", "KeychainTestSupport",
                "Enclave", "KeychainSystem", "trousseau-enclave",
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: testHooks
        ),
        .testTarget(
            name: "EnclaveTests",
            dependencies: [
                "Enclave", "EnclaveBackend", "EnclaveProtocol", "KeychainCrypto", "KeychainModel", "KeychainStore",
                "KeychainTestSupport", "KeychainSystem", "SyncCrypto", "SyncProtocol", "trousseau-enclave", "KeychainClient", "KeychainKeys", "securityd",
                "SecurityTool",
            ],
            swiftSettings: testHooks
        ),
        .testTarget(
            name: "SecurityDaemonTests",
            dependencies: [
                "KeychainClient", "KeychainModel", "KeychainCrypto", "KeychainProtocol", "KeychainSystem", "KeychainTestSupport",
                "KeychainServer", "securityd", "trousseau-enclave", "trousseau-sync-agent", "SecurityTool",
                "keychain-probe", "keychain-bench", "BenchWorkload", "keychain-access", "CodeSigning",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "X509", package: "swift-certificates"),
            ],
            swiftSettings: testHooks
        ),
        .testTarget(
            // Crash safety, disk faults, concurrency against a model, tampering, brute force,
            // leaks and the fuzz corpora (docs/RELIABILITY.md); TROUSSEAU_LONG_RUNS=1 for long runs.
            name: "ReliabilityTests",
            dependencies: [
                "EnclaveBackend", "KeychainClient", "KeychainModel", "KeychainProtocol", "KeychainTestSupport", "KeychainFuzzTargets",
                "securityd", "trousseau-enclave", "SecurityTool",
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: testHooks
        ),
        .testTarget(
            // scripts/install into a temporary prefix, used by another package's program
            // (slow: a release build of the programs, cached in .build-install).
            name: "InstallationTests",
            dependencies: ["KeychainTestSupport"]
        ),
        .testTarget(
            // The SyncStore conformance suite on SQLite and PostgreSQL, and trousseau-syncd's HTTP API.
            name: "SyncServerTests",
            dependencies: [
                "SyncServer", "SyncProtocol", "SyncCrypto", "SyncJoin", "KeychainTestSupport", "trousseau-syncd",
                // The end-to-end tests' devices: each home its own securityd and enclave, driven by `security`.
                "securityd", "trousseau-enclave", "trousseau-sync-agent", "SecurityTool", "keychain-example", "SyncTransport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                // The lying server: trousseau-syncd's routes in the test's process.
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .testTarget(name: "SyncEngineTests", dependencies: ["SyncEngine", "KeychainModel", "KeychainTestSupport"]),
        .testTarget(
            name: "KeychainSyncTests",
            dependencies: [
                "KeychainSync", "KeychainStore", "KeychainModel", "KeychainTestSupport", "SyncServer", "SyncCrypto", "SyncEngine", "SyncProtocol",
                "EnclaveBackend", "EnclaveProtocol",
                .product(name: "Crypto", package: "swift-crypto"), .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "SyncCryptoTests",
            dependencies: ["SyncCrypto", "SyncJoin", "SyncProtocol", "KeychainModel", .product(name: "Crypto", package: "swift-crypto")]
        ),
        .testTarget(
            name: "SecurityToolTests",
            dependencies: ["SecurityTool", "securityd", "trousseau-enclave", "KeychainTestSupport"],
            exclude: ["Golden", "Fixtures"],
            swiftSettings: testHooks
        ),
    ],
    swiftLanguageModes: [.v6]
)
