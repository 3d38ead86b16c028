import Foundation
import KeychainClient
import KeychainModel
import KeychainProtocol
import KeychainTestSupport
import Testing

/// Whether securityd and its enclave run with no memory both writable and executable — what
/// the service unit's `MemoryDenyWriteExecute=yes` enforces — measured, not assumed: the
/// kernel's own form of it (`PR_SET_MDWE`, `PR_MDWE_REFUSE_EXEC_GAIN`, inherited across
/// exec and fork) is set on the daemon before it starts, and the daemon and the enclave it
/// starts then add, read, lock, unlock and sign with an enclave key as usual.
@Suite final class MemoryDenyWriteExecuteTests {
    static let probe = """
        import ctypes, os, sys
        libc = ctypes.CDLL(None, use_errno=True)
        PR_SET_MDWE, PR_GET_MDWE, REFUSE_EXEC_GAIN = 65, 66, 1
        if libc.prctl(PR_SET_MDWE, REFUSE_EXEC_GAIN, 0, 0, 0) != 0 or libc.prctl(PR_GET_MDWE, 0, 0, 0, 0) != REFUSE_EXEC_GAIN:
            sys.exit(3)
        if len(sys.argv) > 1:
            os.execv(sys.argv[1], sys.argv[1:])
        """
    static var kernelHasMDWE: Bool {
        (try? CommandRunner.run(executable: "/usr/bin/python3", ["-c", probe], environment: [:], clearing: true).status) == 0
    }

    @Test(.enabled(if: kernelHasMDWE, "this kernel has no PR_SET_MDWE (Linux 6.3 and later have it)"))
    func theDaemonAndTheEnclaveRunWithoutWritableExecutableMemory() throws {
        let keychain = try DaemonKeychain()
        let wrapper = keychain.directory + "/mdwe-securityd"
        try """
            #!/bin/sh
            exec /usr/bin/python3 -c '\(Self.probe)' \(DaemonKeychain.daemonExecutable) "$@"
            """.write(toFile: wrapper, atomically: true, encoding: .utf8)
        chmod(wrapper, 0o755)
        keychain.daemon = wrapper
        let client = try keychain.connect()
        // Both run (the probe starts the daemon only once MDWE is set, and the enclave
        // inherits it).
        #expect(!keychain.daemons().isEmpty && !keychain.enclaves().isEmpty)

        _ = try client.add(genericPassword(account: "mdwe", ["v_Data": .utf8("no W+X")]))
        #expect(try client.copyMatching(genericPassword(account: "mdwe", ["r_Data": .bool(true)])) == .utf8("no W+X"))
        try client.call(Service.Lock())
        try client.call(Service.Unlock(passcode: SecretBytes([])))
        let created = try client.call(Service.CreateEnclaveKey(protection: .whenUnlockedThisDeviceOnly, access: nil, context: nil))
        let signature = try client.call(
            Service.UseEnclaveKey(blob: created.blob, operation: .sign(algorithm: "algid:sign:ECDSA:message-X962:SHA256", data: Data("w^x".utf8)), context: nil))
        #expect(signature.output.count > 60)
        // A private mapping that asks for write and execute at once is what MDWE refuses; the
        // Swift runtime never asks (no JIT), so everything above worked. The log says no more.
        #expect(!keychain.logText.contains("crashed"), "\(keychain.logText)")
    }
}
