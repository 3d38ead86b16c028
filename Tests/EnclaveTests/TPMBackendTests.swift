import Foundation
import KeychainCrypto
import KeychainKeys
import KeychainClient
import KeychainModel
import KeychainTestSupport
import Testing

@testable import EnclaveBackend

/// The enclave on a TPM 2.0 (swtpm, one per test, as an ordinary user), through `security`
/// and real securityd and enclave processes: the device key and the passcode's key are in
/// the TPM; a copy of the home directory does not open on another TPM; wrong passcodes
/// reach the TPM's dictionary-attack lockout, which deleting files does not reset; nothing
/// derived from the passcode, and no key, crosses the TPM's bus in clear; a cleared TPM is
/// reported and changes nothing, and a backup restores onto a new keychain.
@Suite(.enabled(if: SoftwareTPM.isAvailable, "swtpm is not installed")) final class TPMBackendTests {
    let tpm: SoftwareTPM
    let keychain: DaemonKeychain
    let passcode = "correct horse battery staple"

    init() throws {
        tpm = try SoftwareTPM()
        keychain = try DaemonKeychain(daemonEnvironment: ["TROUSSEAU_TPM": tpm.tcti])
    }

    /// `security` on the keychain (TROUSSEAU_DEBUG: the enclave's reason after Apple's message).
    func security(_ arguments: String..., home: String? = nil, tcti: String? = nil, input: String = "") throws -> CommandResult {
        try CommandRunner.run(
            "security", arguments,
            environment: ["KEYCHAIN_HOME": home ?? keychain.home, "TROUSSEAU_TPM": tcti ?? tpm.tcti, "TROUSSEAU_DEBUG": "1"], input: input)
    }

    /// Stops securityd (and with it the enclave): the next call starts both, before first unlock.
    func reboot(_ home: String? = nil) {
        DaemonControl.stop(home: home ?? keychain.home)
    }

    /// A keychain on the TPM with one password item and a passcode.
    func populate(tcti: String? = nil) throws {
        let added = try security("add-generic-password", "-a", "alice", "-s", "mail", "-w", "s3cret", tcti: tcti)
        try #require(added.status == 0, "\(added.stderr)")
        let set = try security("set-keychain-password", "-p", passcode, tcti: tcti)
        try #require(set.status == 0, "\(set.stderr)")
    }

    func readSecret(home: String? = nil, tcti: String? = nil) throws -> CommandResult {
        try security("find-generic-password", "-a", "alice", "-s", "mail", "-w", home: home, tcti: tcti)
    }

    @Test func theDeviceKeyIsInTheTPMAndThePasscodeLocksAndUnlocks() throws {
        try populate()
        let files = try FileManager.default.contentsOfDirectory(atPath: keychain.home)
        #expect(files.contains(TPMDeviceKey.fileName) && !files.contains(FileDeviceKey.fileName), "\(files)")
        let info = try security("show-keychain-info")
        #expect(info.stdout.contains("device key: TPM 2.0 (\(tpm.tcti))"), "\(info.stdout)\(info.stderr)")

        #expect(try security("lock-keychain").status == 0)
        #expect(try readSecret().status == 36, "locked: class A needs the passcode")
        #expect(try security("unlock-keychain", "-p", passcode).status == 0)
        #expect(try readSecret().stdout == "s3cret\n")

        reboot()
        #expect(try readSecret().status == 36, "after a restart, before first unlock")
        #expect(try security("unlock-keychain", "-p", passcode).status == 0)
        #expect(try readSecret().stdout == "s3cret\n")
        #expect(try tpm.lockoutCounter() == 0, "right passcodes count nothing")

        // Changing the passcode makes a new TPM key; the old passcode no longer opens it.
        #expect(try security("set-keychain-password", "-o", passcode, "-p", "new passcode").status == 0)
        reboot()
        #expect(try security("unlock-keychain", "-p", passcode).status == 51)
        #expect(try security("unlock-keychain", "-p", "new passcode").status == 0)
        #expect(try readSecret().stdout == "s3cret\n")
    }

    @Test func aCopyOfTheHomeOnAnotherTPMDoesNotOpenWithTheRightPasscode() throws {
        try populate()
        reboot()
        let other = try SoftwareTPM()
        let thief = try DaemonKeychain()
        try? FileManager.default.removeItem(atPath: thief.home)
        try FileManager.default.copyItem(atPath: keychain.home, toPath: thief.home)

        let unlock = try security("unlock-keychain", "-p", passcode, home: thief.home, tcti: other.tcti)
        #expect(unlock.status != 0)
        #expect(unlock.stderr.contains("cleared or replaced"), "\(unlock.stderr)")
        #expect(try readSecret(home: thief.home, tcti: other.tcti).stdout.isEmpty)
        #expect(try other.lockoutCounter() == 0)

        // The original, on its own TPM, is untouched.
        #expect(try security("unlock-keychain", "-p", passcode).status == 0)
        #expect(try readSecret().stdout == "s3cret\n")
    }

    @Test func wrongPasscodesReachTheTPMLockoutWhichDeletingFilesDoesNotReset() throws {
        try populate()
        #expect(try security("lock-keychain").status == 0)
        // swtpm's defaults: three failures, then lockout; one forgiven every 1000 s.
        for attempt in 1...3 {
            let wrong = try security("unlock-keychain", "-p", "guess \(attempt)")
            #expect(wrong.status == 51 && wrong.stderr.contains("not correct"), "\(wrong.stderr)")
            #expect(try tpm.lockoutCounter() == attempt, "the TPM counted guess \(attempt)")
        }
        let right = try security("unlock-keychain", "-p", passcode)
        #expect(right.status == 51 && right.stderr.contains("disabled") && right.stderr.contains("17 minutes"), "\(right.stderr)")
        #expect(try readSecret().status == 36)

        // A process of the user deletes every file but the database and the keys it cannot
        // do without, and restarts the daemon: the TPM still refuses.
        reboot()
        for file in try FileManager.default.contentsOfDirectory(atPath: keychain.home)
        where ![TPMDeviceKey.fileName, KeybagFile.fileName].contains(file) && !file.hasPrefix("keychain") {
            try FileManager.default.removeItem(atPath: keychain.home + "/" + file)
        }
        let again = try security("unlock-keychain", "-p", passcode)
        #expect(again.status == 51 && again.stderr.contains("disabled"), "\(again.stderr)")

        // The TPM's owner clears the lockout (tpm2-tools, as an administrator): the right
        // passcode opens the keychain, nothing lost.
        let cleared = try tpm.tool("tpm2_dictionarylockout", ["--clear-lockout"])
        #expect(cleared.status == 0, "\(cleared.stderr)")
        #expect(try security("unlock-keychain", "-p", passcode).status == 0)
        #expect(try readSecret().stdout == "s3cret\n")
    }

    @Test func aClearedTPMIsReportedChangesNothingAndABackupRestoresOntoANewKeychain() throws {
        try populate()
        let backup = keychain.directory + "/before.backup"
        let made = try security("backup", "create", "--out", backup, input: "backup pw\nbackup pw\n\(passcode)\n")
        try #require(made.status == 0, "\(made.stdout)\(made.stderr)")
        reboot()
        let before = try Self.contents(of: keychain.home)

        let clear = try tpm.tool("tpm2_clear", ["-c", "p"])
        try #require(clear.status == 0, "\(clear.stderr)")
        let unlock = try security("unlock-keychain", "-p", passcode)
        #expect(unlock.status != 0 && unlock.stderr.contains("cleared or replaced"), "\(unlock.stderr)")
        #expect(try readSecret().stdout.isEmpty)
        reboot()
        let after = try Self.contents(of: keychain.home)
        #expect(after == before && after.keys.contains(KeybagFile.fileName), "nothing was re-keyed or rewritten: \(after.keys.sorted())")

        // The user's choice: the old keychain aside, a new one on the (cleared) TPM, the backup restored.
        try FileManager.default.moveItem(atPath: keychain.home, toPath: keychain.directory + "/old-keychain")
        let restored = try security("backup", "restore", backup, input: "backup pw\n")
        #expect(restored.status == 0, "\(restored.stdout)\(restored.stderr)")
        #expect(try readSecret().stdout == "s3cret\n")
        #expect(FileManager.default.fileExists(atPath: keychain.home + "/" + TPMDeviceKey.fileName))
    }

    @Test func aSoftwareKeychainMovesOntoTheTPMWithEveryItem() throws {
        // Made before there was a TPM: software, with items in three classes and a passcode.
        try populate(tcti: "off")
        let client = try keychain.connect()
        for (account, protection) in [("d", "dk"), ("c", "ck"), ("a", "aku")] {
            _ = try client.add(genericPassword(account: account, service: "classes", ["v_Data": .utf8("secret-\(account)"), "pdmn": .string(protection)]))
        }
        #expect(FileManager.default.fileExists(atPath: keychain.home + "/" + FileDeviceKey.fileName))
        #expect(try security("keychain-migrate", "--tpm", "--tcti", tpm.tcti, "-p", "wrong", tcti: "off").status == 51)
        #expect(FileManager.default.fileExists(atPath: keychain.home + "/" + FileDeviceKey.fileName), "a refused move changes nothing")

        // The TPM the daemon's TROUSSEAU_TPM names, with no --tcti (the daemon restarted with it;
        // the keychain stays in software until moved).
        reboot()
        #expect(try security("show-keychain-info").stdout.contains("device key: software"))
        let moved = try security("keychain-migrate", "--tpm", "-p", passcode)
        #expect(moved.status == 0 && moved.stdout == "device key: TPM 2.0 (\(tpm.tcti))\n", "\(moved.stdout)\(moved.stderr)")
        let files = try FileManager.default.contentsOfDirectory(atPath: keychain.home)
        #expect(files.contains(TPMDeviceKey.fileName) && !files.contains(FileDeviceKey.fileName), "\(files)")
        #expect(try security("unlock-keychain", "-p", passcode, tcti: "off").status == 0)
        #expect(try readSecret(tcti: "off").stdout == "s3cret\n", "nothing re-encrypted")
        let again = try security("keychain-migrate", "--tpm", "-p", passcode, tcti: "off")
        #expect(again.status == 206 && again.stderr.contains("in a TPM already"), "errSecParam (-50): \(again.stderr)")

        // After a restart the TPM holds the keys: the passcode is checked by it, and counted.
        reboot()
        #expect(try security("unlock-keychain", "-p", "a guess", tcti: "off").status == 51)
        #expect(try tpm.lockoutCounter() == 1)
        #expect(try security("unlock-keychain", "-p", passcode, tcti: "off").status == 0)
        #expect(try readSecret(tcti: "off").stdout == "s3cret\n")
        let reader = try keychain.connect()
        for account in ["d", "c", "a"] {
            let item = try reader.copyMatching(genericPassword(account: account, service: "classes", ["r_Data": .bool(true)]))
            #expect(item == .utf8("secret-\(account)"), "\(String(describing: item))")
        }
        #expect(try security("show-keychain-info", tcti: "off").stdout.contains("device key: TPM 2.0 (\(tpm.tcti))"))
    }

    /// Faults: swtpm killed and restarted while unlocks and locks run leaves a keychain that
    /// opens with everything in it (a call that met the dead TPM says so: errSecNotAvailable);
    /// a damaged TPM blob is errSecDecode and changes nothing.
    @Test func aTPMThatGoesAwayOrADamagedBlobLosesNothing() throws {
        try populate()
        // A TPM killed after a DA-protected use counts a failure (pitfall P2: no
        // TPM2_Shutdown); three kills would reach swtpm's default limit of 3.
        #expect(try tpm.tool("tpm2_dictionarylockout", ["--setup-parameters", "--max-tries=10"]).status == 0)
        var outcomes: [Int32: Int] = [:]
        for round in 0..<12 {
            if round % 4 == 1 { tpm.stop() }
            let unlock = try security("unlock-keychain", "-p", passcode)
            outcomes[unlock.status, default: 0] += 1
            if unlock.status != 0 {
                #expect(unlock.stderr.contains("does not answer"), "\(unlock.stderr)")
            }
            #expect(try security("lock-keychain").status == 0)
            if round % 4 == 2 { try tpm.start() }
        }
        #expect(outcomes[0, default: 0] >= 6 && outcomes.keys.allSatisfy { [0, 53].contains($0) }, "\(outcomes)")
        #expect(try security("unlock-keychain", "-p", passcode).status == 0)
        #expect(try readSecret().stdout == "s3cret\n")
        // Each kill without TPM2_Shutdown after a DA-protected use counts one failure (pitfall
        // P2); the right passcode's uses count none.
        #expect(try tpm.lockoutCounter() ?? 99 <= 3)
        _ = try tpm.tool("tpm2_dictionarylockout", ["--clear-lockout"])

        // The TPM away when the enclave starts: refused, and the next call, once it is back,
        // starts an enclave that opens the keychain.
        reboot()
        tpm.stop()
        let away = try security("unlock-keychain", "-p", passcode)
        #expect(away.status == 53 && away.stderr.contains("does not answer"), "errSecNotAvailable: \(away.stderr)")
        try tpm.start()
        #expect(try security("unlock-keychain", "-p", passcode).status == 0)
        #expect(try readSecret().stdout == "s3cret\n")

        reboot()
        let path = keychain.home + "/" + TPMDeviceKey.fileName
        var blob = try Data(contentsOf: URL(fileURLWithPath: path))
        let pristine = blob
        blob[blob.count - 20] ^= 0x40  // inside the key's private area
        try blob.write(to: URL(fileURLWithPath: path))
        let damaged = try security("unlock-keychain", "-p", passcode)
        #expect(damaged.status == 93 && damaged.stderr.contains("damaged"), "errSecDecode (-26275): \(damaged.stderr)")
        reboot()
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == blob, "nothing rewrote it")
        try pristine.write(to: URL(fileURLWithPath: path))
        #expect(try security("unlock-keychain", "-p", passcode).status == 0)
        #expect(try readSecret().stdout == "s3cret\n")

        // The passcode's own TPM key damaged in the keybag: the right passcode is not called
        // wrong (nor counted towards an erase), and the keychain opens once it is repaired.
        reboot()
        let original = try #require(try KeybagFile.load(from: keychain.home))
        var broken = original
        var key = try #require(original.passcodeKey)
        key[key.count - 20] ^= 0x40
        broken.passcodeKey = key
        try broken.save(to: keychain.home)
        let refused = try security("unlock-keychain", "-p", passcode)
        #expect(refused.status == 93 && refused.stderr.contains("damaged") && !refused.stderr.contains("not correct"), "\(refused.stderr)")
        #expect(try tpm.lockoutCounter() ?? 99 <= 3, "a damaged blob is no guess")
        reboot()
        try original.save(to: keychain.home)
        #expect(try security("unlock-keychain", "-p", passcode).status == 0)
        #expect(try readSecret().stdout == "s3cret\n")
    }

    /// Enclave keys (`kSecAttrTokenIDSecureEnclave`) on a TPM keychain are made in the TPM:
    /// fixedTPM and TPM-generated (tpm2_print reads the blob's public area), so no process
    /// ever holds their scalar; they sign, decrypt ECIES and agree as a software key would,
    /// and follow their class's lock state.
    @Test func enclaveKeysAreMadeAndUsedInTheTPM() throws {
        try populate()
        let client = Keychain(paths: keychain.paths, daemonEnvironment: keychain.environment)
        let data = try client.createEnclaveKey(protection: .whenUnlockedThisDeviceOnly, access: nil, context: nil)
        let blob = try EnclaveKeyBlob(data: data)
        let tpmKey = try #require(blob.tpmKey, "made in the TPM")
        let publicArea = keychain.directory + "/enclave-key.pub"
        let publicLength = Int(tpmKey[tpmKey.startIndex]) << 8 | Int(tpmKey[tpmKey.startIndex + 1])
        try tpmKey.prefix(2 + publicLength).write(to: URL(fileURLWithPath: publicArea))
        let printed = try tpm.tool("tpm2_print", ["-t", "TPM2B_PUBLIC", publicArea])
        #expect(printed.status == 0 && ["fixedtpm", "fixedparent", "sensitivedataorigin", "sign", "decrypt"].allSatisfy(printed.stdout.contains),
                "\(printed.stdout)\(printed.stderr)")

        let publicKey = try AsymmetricKey(externalRepresentation: blob.publicKey, type: .ellipticCurve, keyClass: .public)
        let message = Data("signed in the TPM".utf8)
        for name in ["algid:sign:ECDSA:message-X962:SHA256", "algid:sign:ECDSA:message-RFC4754:SHA384", "algid:sign:ECDSA:digest-X962:SHA256"] {
            let input = name.contains("digest") ? Data(repeating: 9, count: 32) : message
            let signature = try client.useEnclaveKey(data, .sign(algorithm: name, data: input), context: nil, prompt: nil)
            let raw = signature.withUnsafeBytes { Data($0) }
            #expect(try publicKey.verify(try #require(KeyAlgorithm(name)), name: name, signature: raw, for: input), "\(name)")
        }
        let ecies = "algid:encrypt:ECIES:ECDH:KDFX963:SHA256:AESGCM-KDFIV"
        let sealed = try publicKey.encrypt(try #require(KeyAlgorithm(ecies)), name: ecies, Data("to the TPM".utf8))
        let opened = try client.useEnclaveKey(data, .decrypt(algorithm: ecies, data: sealed), context: nil, prompt: nil)
        #expect(opened.withUnsafeBytes { Data($0) } == Data("to the TPM".utf8))
        let exchange = "algid:keyexchange:ECDH:KDFX963:SHA256"
        let other = try AsymmetricKey.generate(.ellipticCurve, bits: 256)
        let ours = try client.useEnclaveKey(
            data, .keyExchange(algorithm: exchange, publicKey: other.publicKeyBytes, requestedSize: 32, sharedInfo: Data("info".utf8)), context: nil, prompt: nil)
        let theirs = try other.keyExchange(try #require(KeyAlgorithm(exchange)), name: exchange, with: publicKey, requestedSize: 32, sharedInfo: Data("info".utf8))
        #expect(ours.withUnsafeBytes { Data($0) } == theirs)

        // Its class locks with the keychain; the TPM's blob alone opens nothing.
        #expect(try security("lock-keychain").status == 0)
        #expect(throws: KeychainError(status: OSStatusCode.interactionNotAllowed)) {
            try client.useEnclaveKey(data, .sign(algorithm: "algid:sign:ECDSA:message-X962:SHA256", data: message), context: nil, prompt: nil)
        }
        #expect(try security("unlock-keychain", "-p", passcode).status == 0)
        #expect(throws: Never.self) {
            try client.useEnclaveKey(data, .sign(algorithm: "algid:sign:ECDSA:message-X962:SHA256", data: message), context: nil, prompt: nil)
        }
    }

    /// The bytes of the keychain's key files (the keybag, the TPM blob, the throttle).
    static func contents(of directory: String) throws -> [String: Data] {
        var out: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory)
        where !name.hasPrefix("keychain.db") && name != "securityd.lock" {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: directory + "/" + name, isDirectory: &isDirectory), !isDirectory.boolValue {
                out[name] = try Data(contentsOf: URL(fileURLWithPath: directory + "/" + name))
            }
        }
        return out
    }
}

/// What crosses the bus between the enclave and the TPM: a relay on Unix sockets in front of
/// swtpm's (the command socket and its `.ctrl`), recording every byte both ways. (tpm2-tss's
/// pcap TCTI would need TCTI_PCAP_FILE in the enclave's environment, and the enclave gets
/// none.)
@Suite(.enabled(if: SoftwareTPM.isAvailable, "swtpm is not installed")) final class TPMBusTests {
    static let relay = """
        import os, socket, sys, threading
        listen, target, capture = sys.argv[1:4]
        out = open(capture, "ab", buffering=0)
        lock = threading.Lock()
        def pump(a, b):
            while True:
                data = a.recv(65536)
                if not data:
                    break
                with lock:
                    out.write(data)
                b.sendall(data)
            for s in (a, b):
                try: s.shutdown(socket.SHUT_RDWR)
                except OSError: pass
        def serve(path, to):
            server = socket.socket(socket.AF_UNIX)
            server.bind(path)
            server.listen(8)
            while True:
                client, _ = server.accept()
                upstream = socket.socket(socket.AF_UNIX)
                upstream.connect(to)
                threading.Thread(target=pump, args=(client, upstream), daemon=True).start()
                threading.Thread(target=pump, args=(upstream, client), daemon=True).start()
        threading.Thread(target=serve, args=(listen + ".ctrl", target + ".ctrl"), daemon=True).start()
        serve(listen, target)
        """

    @Test func anUnlockSendsNoPasscodeDerivativeAndNoKeyInClear() throws {
        let tpm = try SoftwareTPM()
        let directory = try TemporaryKeychain.makeTemporaryDirectory()
        defer { try? FileManagerLite.removeTree(directory) }
        let listen = directory + "/relay.sock", capture = directory + "/bus.capture"
        let relay = Process()
        relay.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        relay.arguments = ["-c", Self.relay, listen, tpm.socket, capture]
        try relay.run()
        defer {
            kill(relay.processIdentifier, SIGKILL)
            relay.waitUntilExit()
        }
        for _ in 0..<300 where !FileManager.default.fileExists(atPath: listen) { usleep(10_000) }

        let keychain = try DaemonKeychain()
        let passcode = "PIN-4711-correct-horse"
        func security(_ arguments: String...) throws -> CommandResult {
            try CommandRunner.run("security", arguments, environment: ["KEYCHAIN_HOME": keychain.home, "TROUSSEAU_TPM": "swtpm:path=\(listen)"])
        }
        #expect(try security("add-generic-password", "-a", "alice", "-s", "mail", "-w", "s3cret").status == 0)
        #expect(try security("set-keychain-password", "-p", passcode).status == 0)
        DaemonControl.stop(home: keychain.home)
        #expect(try security("unlock-keychain", "-p", "a wrong guess").status == 51)
        #expect(try security("unlock-keychain", "-p", passcode).status == 0)
        #expect(try security("find-generic-password", "-a", "alice", "-w").stdout == "s3cret\n")
        DaemonControl.stop(home: keychain.home)

        // What an unlock computes, recomputed here against swtpm directly (not through the relay).
        let bus = try Data(contentsOf: URL(fileURLWithPath: capture))
        let keybag = try #require(try KeybagFile.load(from: keychain.home))
        let stretched = try #require(keybag.passcodeKDF).derive(SecretBytes(Array(passcode.utf8)))
        let halves = TPMPasscodeHalves(stretched)
        let deviceKey = try TPMDeviceKey(directory: keychain.home, tcti: tpm.tcti)
        var message = Data("trousseau keybag passcode".utf8)
        withUnsafeBytes(of: keybag.uuid.uuid) { message.append(contentsOf: $0) }
        let passcodeMAC = try deviceKey.passcodeAuthenticationCode(key: try #require(keybag.passcodeKey), auth: halves.authValue, message: message)
        var deviceMessage = Data("trousseau keybag device".utf8)
        withUnsafeBytes(of: keybag.uuid.uuid) { deviceMessage.append(contentsOf: $0) }
        let deviceMAC = try deviceKey.authenticationCode(for: deviceMessage)
        let secrets: [(String, Data)] = [
            ("the passcode", Data(passcode.utf8)), ("its scrypt output", Self.bytes(stretched)),
            ("the authValue half", Self.bytes(halves.authValue)), ("the kept half", Self.bytes(halves.kept)),
            ("the passcode key's MAC", Self.bytes(passcodeMAC)), ("the device key's MAC", Self.bytes(deviceMAC)),
            ("the item's secret", Data("s3cret".utf8)),
        ]
        for (name, secret) in secrets {
            // Any 8 bytes of it would do for a search; none may appear.
            for start in stride(from: 0, to: secret.count - 7, by: 8) {
                #expect(bus.range(of: secret[start..<start + 8]) == nil, "\(name) crossed the bus in clear")
            }
        }
        // The capture is the traffic: it holds the TPM_CC_HMAC command code and the passcode
        // key's public area, which is sent in clear with its Load.
        #expect(bus.count > 4_000 && bus.range(of: Data([0, 0, 0x01, 0x55])) != nil, "\(bus.count) bytes")
        #expect(bus.range(of: try #require(keybag.passcodeKey).prefix(40)) != nil)
    }

    static func bytes(_ secret: SecretBytes) -> Data { secret.withUnsafeBytes { Data($0) } }
}
