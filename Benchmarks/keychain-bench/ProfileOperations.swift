import Crypto
import Foundation
import SwiftASN1
import X509

/// `security profiles install` of a profile with a root certificate and a Wi-Fi password, as
/// a whole process (securityd reads the property list and certificate, and writes the two
/// items and the profile's record in one transaction, replacing the previous install), beside
/// its floor: `security add-generic-password -U` as a whole process, the least any write
/// through the tool costs.
enum ProfileOperations {
    static func measure(_ keychain: BenchKeychain, security: String, count: Int) throws -> BenchReport.KeyOperation {
        let path = keychain.directory + "/bench-\(getpid()).mobileconfig"
        try profile().write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let environment = ProcessInfo.processInfo.environment.merging(["KEYCHAIN_HOME": keychain.paths.home]) { $1 }
        func run(_ arguments: [String]) throws {
            let status = try ChildProcess.run(security, arguments, environment: environment)
            guard status == 0 else { throw BenchError("security \(arguments[0]) exited \(status)") }
        }
        let row = try KeyOperations.row(
            "security profiles install (root + Wi-Fi), process", floor: "security add-generic-password -U, process", count: count,
            { try run(["profiles", "install", path]) },
            floor: { try run(["add-generic-password", "-U", "-s", "bench.profile", "-a", "floor", "-w", "wifi-pass"]) })
        try run(["profiles", "remove", "com.example.bench"])
        return row
    }

    /// An XML profile: a self-signed P-256 root and a Wi-Fi network's password.
    private static func profile() throws -> Data {
        let key = P256.Signing.PrivateKey()
        let name = try DistinguishedName { CommonName("Bench Profile Root") }
        let root = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: .init(key.publicKey), notValidBefore: Date() - 3600,
            notValidAfter: Date() + 86_400 * 30, issuer: name, subject: name, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions { Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil)) },
            issuerPrivateKey: .init(key))
        var serializer = DER.Serializer()
        try serializer.serialize(root)
        let payloads: [[String: Any]] = [
            [
                "PayloadType": "com.apple.security.root", "PayloadIdentifier": "com.example.bench.root", "PayloadUUID": "B-ROOT",
                "PayloadVersion": 1, "PayloadContent": Data(serializer.serializedBytes),
            ],
            [
                "PayloadType": "com.apple.wifi.managed", "PayloadIdentifier": "com.example.bench.wifi", "PayloadUUID": "B-WIFI",
                "PayloadVersion": 1, "SSID_STR": "Bench Net", "Password": "wifi-pass",
            ],
        ]
        let top: [String: Any] = [
            "PayloadType": "Configuration", "PayloadIdentifier": "com.example.bench", "PayloadUUID": "B", "PayloadVersion": 1,
            "PayloadContent": payloads,
        ]
        return try PropertyListSerialization.data(fromPropertyList: top, format: .xml, options: 0)
    }
}
