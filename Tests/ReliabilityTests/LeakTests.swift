import EnclaveBackend
import Foundation
import KeychainClient
import KeychainModel
import KeychainProtocol
import KeychainTestSupport
import Testing

/// No secret, account, service or label in the daemon's log, in error messages (the
/// client's and the tool's), in any file of the keychain, or in a core file — there are
/// none: securityd and the enclave crash without dumping.
@Suite struct LeakTests {
    static let account = "acct-Zq7xK2", service = "svce-Wm3kT8", secret = "secret-Pv9rB4", label = "labl-Hs2dN6"
    static let needles = [account, service, secret, label]

    static func leaks(in bytes: Data, _ place: String) -> [String] {
        needles.filter { bytes.range(of: Data($0.utf8)) != nil }.map { "\($0) in \(place)" }
    }

    @Test func noSecretOrAttributeLeaksAnywhere() throws {
        let start = ContinuousClock.now
        let keychain = try DaemonKeychain()
        let client = try keychain.connect()
        var found: [String] = []
        let item = genericPassword(account: Self.account, service: Self.service, ["v_Data": .utf8(Self.secret), "labl": .string(Self.label)])
        _ = try client.add(item)
        // Failing calls that carry the values: duplicate, missing, wrong types, bad keys.
        let failing: [() throws -> Void] = [
            { _ = try client.add(item) },
            { try client.update(genericPassword(account: Self.secret), attributes: ["labl": .string(Self.label)]) },
            { try client.update(genericPassword(account: Self.account), attributes: ["acct": .data(Data(Self.secret.utf8)), "svce": .bool(true)]) },
            { _ = try client.copyMatching(genericPassword(account: Self.account, ["m_Limit": .string(Self.secret)])) },
            { _ = try client.copyMatching(["class": .string("nope"), "acct": .string(Self.account), "svce": .data(Data(Self.service.utf8))]) },
            { _ = try client.add(genericPassword(account: Self.account, ["nope": .utf8(Self.secret)])) },
            { _ = try client.add(genericPassword(account: Self.account, ["v_Data": .string(Self.secret), "pdmn": .string(Self.label)])) },
            { try client.delete(genericPassword(account: Self.secret, service: Self.label)) },
        ]
        for (index, call) in failing.enumerated() {
            do {
                try call()
                found.append("failing call \(index) succeeded")
            } catch let error as KeychainError {
                found += Self.leaks(in: Data("\(error.description) \(error.message) \(String(describing: error.details))".utf8), "error \(error.status)")
            }
        }
        // The tool's messages.
        let environment = keychain.environment.merging(["KEYCHAIN_HOME": keychain.home]) { _, new in new }
        let added = try CommandRunner.run(
            "security", ["add-generic-password", "-a", Self.account, "-s", Self.service, "-w", Self.secret, "-l", Self.label], environment: environment)
        #expect(added.status == 0, "\(added.stderr)")
        for arguments in [
            ["add-generic-password", "-a", Self.account, "-s", Self.service, "-w", Self.secret, "-l", Self.label],
            ["find-generic-password", "-a", Self.secret, "-s", Self.label],
            ["delete-generic-password", "-a", Self.secret],
            ["add-generic-password", "-a", Self.account, "-s", Self.service, "-X", "0g" + Self.secret],
        ] {
            let result = try CommandRunner.run("security", arguments, environment: environment)
            #expect(result.status != 0)
            found += Self.leaks(in: result.standardError + result.standardOutput, "security \(arguments[0])'s output")
        }

        // Crashes: no core file (RLIMIT_CORE 0 and non-dumpable), wherever it would go.
        let daemon = try #require(keychain.daemons().first), enclave = try #require(keychain.enclaves().first)
        var directories = Set([keychain.home])
        for pid in [daemon, enclave] {
            let limits = try String(contentsOfFile: "/proc/\(pid)/limits", encoding: .utf8)
            #expect(limits.split(separator: "\n").contains { $0.hasPrefix("Max core file size") && $0.split(separator: " ").contains("0") })
            if let cwd = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/cwd") { directories.insert(cwd) }
        }
        let before = directories.map { Set((try? FileManager.default.contentsOfDirectory(atPath: $0)) ?? []) }
        kill(enclave, SIGABRT)
        kill(daemon, SIGSEGV)
        for pid in [daemon, enclave] { while DaemonControl.isRunning(pid) { usleep(1_000) } }
        usleep(100_000)
        for (directory, earlier) in zip(directories, before) {
            let now = Set((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [])
            #expect(now.subtracting(earlier).filter { $0.hasPrefix("core") }.isEmpty, "a core file in \(directory)")
        }

        // Every file of the keychain (database, WAL, keybag, throttle, …) and the log.
        _ = try keychain.connect().copyMatching(genericPassword(account: Self.account))  // a new daemon, new writes
        let enumerator = FileManager.default.enumerator(atPath: keychain.directory)
        var scanned = 0
        while let name = enumerator?.nextObject() as? String {
            let path = keychain.directory + "/" + name
            guard let bytes = FileManager.default.contents(atPath: path) else { continue }
            scanned += 1
            found += Self.leaks(in: bytes, name)
        }
        #expect(keychain.logText.contains("starting"), "the log was written")
        // No crash report: the runtime's would print registers and the memory they point at.
        #expect(!keychain.logText.contains("Registers") && !keychain.logText.contains("crashed"), "\(keychain.logText)")
        #expect(scanned >= 6)
        #expect(found.isEmpty, "\(found)")
        RunLength.report(
            "leaks: secret, account, service, label",
            "8 failing client calls and 4 tool commands carrying them, SIGSEGV of securityd and SIGABRT of the enclave, "
                + "\(scanned) files scanned (database, WAL, keybag, throttle, log): \(found.count) found, no core file, no crash report", since: start)
    }

    /// An enclave key's private bytes (known here through the test builds' derivation hook)
    /// appear nowhere outside the enclave: not in securityd's memory after it created,
    /// stored and used the key, not in any file or log, not in any response.
    @Test func anEnclaveKeysPrivateBytesStayInTheEnclave() throws {
        let start = ContinuousClock.now
        let seed = "seed-" + UUID().uuidString
        let keychain = try DaemonKeychain(daemonEnvironment: ["TROUSSEAU_TEST_ENCLAVE_KEY_SEED": seed])
        let client = try keychain.connect()
        let blob = try client.call(Service.CreateEnclaveKey(protection: .whenUnlockedThisDeviceOnly, access: nil, context: nil)).blob
        let parsed = try EnclaveKeyBlob(data: blob)
        // On the TPM backend (scripts/test's second pass) the key is made in the TPM: there is
        // no scalar outside it to look for (TPMBackendTests checks its attributes), and this
        // scan is of the one the seed would have given.
        #expect((parsed.tpmKey != nil) == (SoftwareTPM.suiteTPM != nil), "an enclave key is made where the device key is")
        let scalar = SoftwareKeybag.testScalar(seed: Data(seed.utf8), keyID: parsed.keyID)
        _ = try client.add([
            "class": .string("keys"), "kcls": .number(1), "type": .number(73), "bsiz": .number(256), "tkid": .string(EnclaveKeyBlob.tokenID),
            "labl": .string("enclave key"), "pdmn": .string("aku"), "v_Data": .data(blob),
        ])
        var responses = Data(blob)
        for index in 0..<20 {
            let operation = EnclaveKeyOperation.sign(algorithm: "algid:sign:ECDSA:message-X962:SHA256", data: Data("message \(index)".utf8))
            try client.call(Service.UseEnclaveKey(blob: blob, operation: operation, context: nil)).output.withUnsafeBytes { responses.append(contentsOf: $0) }
        }
        _ = try? client.call(Service.UseEnclaveKey(blob: blob, operation: .decrypt(algorithm: "algid:encrypt:ECIES:ECDHC:KDFX963:SHA256:AESGCM", data: Data(count: 80)), context: nil))
        if case .dictionary(let item)? = try client.copyMatching(["class": .string("keys"), "labl": .string("enclave key"), "r_Data": .bool(true), "r_Attributes": .bool(true)]),
            case .data(let stored)? = item["v_Data"]
        {
            responses.append(stored)
        }
        var found: [String] = []
        if responses.range(of: scalar) != nil { found.append("in a response") }

        // securityd's memory: every readable mapping. The public key is there (it passed
        // through), which shows the scan reads the memory; the private key is not.
        let daemon = try #require(keychain.daemons().first)
        let memory = Self.readableMemory(of: daemon)
        // Root may read a non-dumpable process's memory; another user may not (then the
        // files and responses are what this test checks).
        if getuid() == 0 { #expect(memory.error == nil, "securityd's memory could not be read: \(memory.error ?? "")") }
        if memory.error == nil {
            #expect(memory.bytes.range(of: parsed.publicKey) != nil, "the scan did not see the public key it must see")
            if memory.bytes.range(of: scalar) != nil { found.append("in securityd's memory") }
        }
        // Every file of the keychain, and the log.
        let enumerator = FileManager.default.enumerator(atPath: keychain.directory)
        var scanned = 0
        while let name = enumerator?.nextObject() as? String {
            guard let bytes = FileManager.default.contents(atPath: keychain.directory + "/" + name) else { continue }
            scanned += 1
            if bytes.range(of: scalar) != nil { found.append("in \(name)") }
        }
        #expect(scanned >= 4)
        #expect(found.isEmpty, "the enclave key's private bytes: \(found)")
        RunLength.report(
            "leaks: enclave key",
            "21 operations and a stored key: private bytes absent from securityd's memory (\(memory.bytes.count / 1_048_576) MiB scanned), "
                + "\(scanned) files and the log, every response", since: start)
    }

    /// The readable mappings of `pid` (reading another process's memory needs ptrace rights:
    /// root, or the same user with a dumpable process — securityd is not dumpable).
    static func readableMemory(of pid: pid_t) -> (bytes: Data, error: String?) {
        guard let maps = try? String(contentsOfFile: "/proc/\(pid)/maps", encoding: .utf8) else { return (Data(), "no maps") }
        let fd = open("/proc/\(pid)/mem", O_RDONLY)
        guard fd >= 0 else { return (Data(), "cannot open /proc/\(pid)/mem: errno \(errno)") }
        defer { close(fd) }
        var bytes = Data()
        for line in maps.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 2, fields[1].hasPrefix("r"), !line.hasSuffix("[vvar]"), !line.hasSuffix("[vsyscall]") else { continue }
            let range = fields[0].split(separator: "-").compactMap { UInt64($0, radix: 16) }
            guard range.count == 2, range[1] > range[0], range[1] - range[0] <= 1 << 30 else { continue }
            var chunk = [UInt8](repeating: 0, count: Int(range[1] - range[0]))
            let count = chunk.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, off_t(range[0])) }
            if count > 0 { bytes.append(contentsOf: chunk.prefix(count)) }
        }
        return (bytes, bytes.isEmpty ? "nothing readable" : nil)
    }
}
