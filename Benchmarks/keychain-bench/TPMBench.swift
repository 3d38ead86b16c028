import BenchWorkload
import CTPM
import Foundation
import KeychainClient
import KeychainModel
import KeychainProtocol

#if canImport(Glibc)
import Glibc
#endif

/// The enclave on a TPM 2.0 (`--tpm`): swtpm started here as this user (as `nobody` when
/// root) on a Unix socket, one keychain on it and one in software, both with a passcode.
/// Unlock and an enclave-key signature on the TPM beside one HMAC round trip to swtpm
/// through the same shim (open, storage root key, salted session, load, HMAC, flush: what
/// each TPM use costs at least); the same two on the software keychain beside the same
/// floor; find with data on the TPM keychain beside the software one (the TPM is not on
/// that path: the ratio should be 1).
enum TPMBench {
    static let passcode = "bench passcode"

    static func measure(products: Products, directory: String, count: Int) throws -> [BenchReport.KeyOperation] {
        guard access("/usr/bin/swtpm", X_OK) == 0 else { throw BenchError("--tpm needs swtpm (apt-get install swtpm)") }
        // Its own directory: the keychains' is 0700, and swtpm runs as nobody under root.
        var template = Array("/tmp/keychain-bench-swtpm-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw BenchError("mkdtemp: \(String(cString: strerror(errno)))") }
        let state = String(cString: made)
        defer { try? FileManager.default.removeItem(atPath: state) }
        try FileManager.default.createDirectory(atPath: state + "/state", withIntermediateDirectories: true)
        if geteuid() == 0, let nobody = getpwnam("nobody") {
            for path in [state, state + "/state"] { chown(path, nobody.pointee.pw_uid, nobody.pointee.pw_gid) }
        }
        let socket = state + "/tpm.sock"
        let swtpm = try ChildProcess.spawn(
            "/usr/bin/swtpm",
            [
                "socket", "--tpm2", "--tpmstate", "dir=\(state)/state", "--server", "type=unixio,path=\(socket)",
                "--ctrl", "type=unixio,path=\(socket).ctrl", "--flags", "not-need-init,startup-clear",
            ] + (geteuid() == 0 ? ["--runas", "nobody"] : []), environment: ["PATH": "/usr/bin:/bin"])
        defer { ChildProcess.stop(swtpm) }
        for _ in 0..<500 where access(socket, F_OK) != 0 { usleep(10_000) }
        let tcti = "swtpm:path=\(socket)"

        let onTPM = try BenchKeychain(daemon: products.securityd, directory: directory, daemonEnvironment: ["TROUSSEAU_TPM": tcti])
        let inSoftware = try BenchKeychain(daemon: products.securityd, directory: directory, daemonEnvironment: ["TROUSSEAU_TPM": "off"])
        defer {
            onTPM.remove()
            inSoftware.remove()
        }
        var rows: [BenchReport.KeyOperation] = []
        let floor = try TPMRoundTrip(tcti: tcti)
        var keys: [(client: KeychainClient, keychain: Keychain, blob: Data)] = []
        for bench in [onTPM, inSoftware] {
            let client = try bench.connect()
            _ = try bench.fill(to: 100, clients: 1)
            let set = try ChildProcess.run(
                products.security, ["set-keychain-password", "-p", passcode],
                environment: ["KEYCHAIN_HOME": bench.paths.home, "TROUSSEAU_TPM": bench.daemonEnvironment["TROUSSEAU_TPM"] ?? "off"])
            guard set == 0 else { throw BenchError("set-keychain-password exited \(set)") }
            let keychain = Keychain(paths: bench.paths, daemonEnvironment: bench.daemonEnvironment)
            let blob = try keychain.createEnclaveKey(protection: .whenUnlockedThisDeviceOnly, access: nil, context: nil)
            keys.append((client, keychain, blob))
        }
        for (index, name) in ["TPM keychain (swtpm)", "software keychain"].enumerated() {
            let (client, keychain, blob) = keys[index]
            rows.append(
                try KeyOperations.row(
                    "unlock, \(name)", floor: "one TPM HMAC round trip (swtpm)", count: max(count / 100, 3),
                    { try client.call(Service.Unlock(passcode: SecretBytes(passcode.utf8))) }, floor: { try floor.hmac() }))
            rows.append(
                try KeyOperations.row(
                    "P-256 sign (enclave key), \(name)", floor: "one TPM HMAC round trip (swtpm)", count: max(count / 10, 3),
                    {
                        _ = try keychain.useEnclaveKey(
                            blob, .sign(algorithm: "algid:sign:ECDSA:message-X962:SHA256", data: KeyOperations.message), context: nil, prompt: nil)
                    }, floor: { try floor.hmac() }))
        }
        var find = BenchItems.query(account: "item-7")
        find[QueryKey.returnData] = .bool(true)
        rows.append(
            try KeyOperations.row(
                "find with data, TPM keychain (swtpm)", floor: "find with data, software keychain", count: count,
                { _ = try keys[0].client.call(Service.CopyMatching(find)) }, floor: { _ = try keys[1].client.call(Service.CopyMatching(find)) }))
        return rows
    }
}

/// swtpm's own HMAC round trip through the CTPM shim, on a key made once.
private final class TPMRoundTrip {
    let tcti: String
    var blob = [UInt8](repeating: 0, count: 1024)
    var length = 0

    init(tcti: String) throws {
        self.tcti = tcti
        let tpm = try Self.open(tcti)
        defer { trousseau_tpm_close(tpm) }
        let rc = trousseau_tpm_create_hmac_key(tpm, nil, 0, 0, nil, 0, &blob, blob.count, &length)
        guard rc == 0 else { throw BenchError("swtpm: \(String(cString: trousseau_tpm_describe(rc)))") }
    }

    /// Connects, makes the storage root key, and MACs 32 bytes, as the enclave does per use.
    func hmac() throws {
        let tpm = try Self.open(tcti)
        defer { trousseau_tpm_close(tpm) }
        var mac = [UInt8](repeating: 0, count: 32)
        let message = [UInt8](repeating: 7, count: 32)
        let rc = trousseau_tpm_hmac(tpm, blob, length, nil, 0, message, message.count, &mac)
        guard rc == 0 else { throw BenchError("swtpm: \(String(cString: trousseau_tpm_describe(rc)))") }
    }

    private static func open(_ tcti: String) throws -> OpaquePointer {
        var tpm: OpaquePointer?
        let rc = trousseau_tpm_open(tcti, 0, &tpm)
        guard rc == 0, let tpm else { throw BenchError("swtpm: \(String(cString: trousseau_tpm_describe(rc)))") }
        return tpm
    }
}
