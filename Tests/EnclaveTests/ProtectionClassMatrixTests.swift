import Enclave
import FoundationEssentials
import KeychainModel
import KeychainSystem
import KeychainStore
import KeychainTestSupport
import Glibc
import EnclaveBackend
import Testing
@testable import KeychainCallers

/// Every protection class × lock state × operation, against a real enclave process.
@Suite struct ProtectionClassMatrixTests {
    enum State: String, CaseIterable { case noPasscode, unlocked, locked, beforeFirstUnlock }
    enum Operation: String, CaseIterable { case readAttributes, readData, update, delete, add }

    static let classA: Set<ProtectionClass> = [.whenUnlocked, .whenUnlockedThisDeviceOnly, .whenPasscodeSetThisDeviceOnly]
    static let classD: Set<ProtectionClass> = [.always, .alwaysThisDeviceOnly]

    /// The OSStatus each cell must give.
    static func expected(_ state: State, _ protection: ProtectionClass, _ operation: Operation) -> OSStatusCode {
        switch state {
        case .noPasscode:
            guard protection == .whenPasscodeSetThisDeviceOnly else { return .success }
            return operation == .add ? .authFailed : .itemNotFound  // akpu cannot exist without a passcode
        case .unlocked: return .success
        case .locked: return classA.contains(protection) ? .interactionNotAllowed : .success
        case .beforeFirstUnlock: return classD.contains(protection) ? .success : .interactionNotAllowed
        }
    }

    func account(_ state: State, _ protection: ProtectionClass) -> String { "\(state.rawValue)-\(protection.rawValue)" }

    func add(_ keychain: EnclaveKeychain, _ account: String, _ protection: ProtectionClass) -> OSStatusCode {
        osStatus {
            try keychain.store.add(
                genericPassword(account: account, ["pdmn": .string(protection.rawValue), "v_Data": .utf8("secret")]),
                caller: keychain.caller)
        }
    }

    func run(_ operation: Operation, _ keychain: EnclaveKeychain, _ state: State, _ protection: ProtectionClass) -> OSStatusCode {
        let name = account(state, protection)
        let store = keychain.store, caller = keychain.caller
        switch operation {
        case .readAttributes: return osStatus { try store.copyMatching(genericPassword(account: name, ["r_Attributes": .bool(true)]), caller: caller) }
        case .readData: return osStatus { try store.copyMatching(genericPassword(account: name, ["r_Data": .bool(true)]), caller: caller) }
        case .update: return osStatus { try store.update(genericPassword(account: name), attributes: ["labl": .string("x")], caller: caller) }
        case .delete: return osStatus { try store.delete(genericPassword(account: name), caller: caller) }
        case .add: return add(keychain, name + "-new", protection)
        }
    }

    func checkRow(_ keychain: EnclaveKeychain, _ state: State) {
        for protection in ProtectionClass.allCases {
            for operation in Operation.allCases {
                let status = run(operation, keychain, state, protection)
                #expect(status == Self.expected(state, protection, operation),
                        "\(state) \(protection.rawValue) \(operation): \(status)")
            }
        }
    }

    @Test func fullMatrix() throws {
        let keychain = try EnclaveKeychain()
        let passcode = SecretBytes("1234".utf8)

        for protection in ProtectionClass.allCases where protection != .whenPasscodeSetThisDeviceOnly {
            #expect(add(keychain, account(.noPasscode, protection), protection) == OSStatusCode.success)
        }
        checkRow(keychain, .noPasscode)

        try keychain.enclave.changePasscode(old: nil, new: passcode)
        for state in [State.unlocked, .locked, .beforeFirstUnlock] {
            for protection in ProtectionClass.allCases {
                #expect(add(keychain, account(state, protection), protection) == OSStatusCode.success)
            }
        }
        checkRow(keychain, .unlocked)

        try keychain.enclave.lock()
        #expect(try keychain.enclave.status().keybag.lockState == .locked)
        checkRow(keychain, .locked)
        // An add to a locked class is -25308 even when it would be a duplicate.
        #expect(add(keychain, account(.beforeFirstUnlock, .whenUnlocked), .whenUnlocked) == OSStatusCode.interactionNotAllowed)

        try keychain.restart()
        #expect(try keychain.enclave.status().keybag.lockState == .beforeFirstUnlock)
        checkRow(keychain, .beforeFirstUnlock)

        // After the first unlock, the items the locked states kept from reach (and so
        // did not delete) read back.
        try keychain.enclave.unlock(passcode: passcode)
        for protection in ProtectionClass.allCases where Self.expected(.beforeFirstUnlock, protection, .delete) != OSStatusCode.success {
            #expect(run(.readData, keychain, .beforeFirstUnlock, protection) == OSStatusCode.success, "\(protection.rawValue)")
        }
    }
}

@Suite struct EnclaveProcessTests {
    let passcode = SecretBytes("1234".utf8)

    @Test func removingThePasscodeMakesAkpuItemsUnreadableAndPurgesThem() throws {
        let keychain = try EnclaveKeychain()
        try keychain.enclave.changePasscode(old: nil, new: passcode)
        _ = try keychain.store.add(genericPassword(account: "pinned", ["pdmn": .string("akpu"), "v_Data": .utf8("x")]), caller: keychain.caller)
        _ = try keychain.store.add(genericPassword(account: "plain", ["v_Data": .utf8("y")]), caller: keychain.caller)

        #expect(try keychain.enclave.changePasscode(old: passcode, new: nil) == true)
        #expect(osStatus { try keychain.store.copyMatching(genericPassword(account: "pinned", ["r_Data": .bool(true)]), caller: keychain.caller) } == OSStatusCode.authFailed)
        #expect(try keychain.store.purge(.whenPasscodeSetThisDeviceOnly) == 1)
        #expect(osStatus { try keychain.store.copyMatching(genericPassword(account: "pinned"), caller: keychain.caller) } == OSStatusCode.itemNotFound)
        #expect(try keychain.store.copyMatching(genericPassword(account: "plain", ["r_Data": .bool(true)]), caller: keychain.caller) == .utf8("y"))
    }

    @Test func theThrottleDelayPersistsAcrossAnEnclaveRestart() throws {
        let keychain = try EnclaveKeychain()
        try keychain.enclave.changePasscode(old: nil, new: passcode)
        try keychain.restart()
        for _ in 1...5 {
            #expect(throws: KeychainError.authFailed) { try keychain.enclave.unlock(passcode: SecretBytes("0000".utf8)) }
        }
        try keychain.restart()
        #expect(try keychain.enclave.status().keybag.failedUnlocks == 5)
        do {
            try keychain.enclave.unlock(passcode: passcode)
            Issue.record("the right passcode must wait out the delay after a restart")
        } catch let error as KeychainError {
            #expect(error.status == OSStatusCode.authFailed)
            #expect(error.message.contains("try again in"))
        }
        #expect(try keychain.enclave.status().keybag.lockState == .beforeFirstUnlock)
    }

    @Test func aCopiedKeychainDecryptsNothingElsewhere() throws {
        let original = try EnclaveKeychain()
        _ = try original.store.add(genericPassword(account: "a", ["pdmn": .string("dk"), "v_Data": .utf8("x")]), caller: original.caller)
        let elsewhere = try TemporaryKeychain.makeTemporaryDirectory()
        for file in ["keychain.db", "keybag"] {
            try Data(contentsOf: URL(fileURLWithPath: original.home + "/" + file)).write(to: URL(fileURLWithPath: elsewhere + "/" + file))
        }
        let keybag = try Data(contentsOf: URL(fileURLWithPath: elsewhere + "/keybag"))
        #expect(throws: KeychainError.decode) { try EnclaveKeychain(home: elsewhere) }
        #expect(try Data(contentsOf: URL(fileURLWithPath: elsewhere + "/keybag")) == keybag, "nothing is overwritten")
    }

    /// PR_SET_DUMPABLE itself is checked in a fresh process (ProcessHardeningTests): from outside, a
    /// root test runner cannot tell. Here: the enclave runs with no core files, untraced.
    @Test func theEnclaveHasNoCoreFilesAndIsNotTraced() throws {
        let keychain = try EnclaveKeychain()
        let pid = try #require(keychain.enclave.processID)
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        #expect(status.contains("TracerPid:\t0"))
        let limits = try String(contentsOfFile: "/proc/\(pid)/limits", encoding: .utf8)
        let core = limits.split(separator: "\n").first { $0.hasPrefix("Max core file size") } ?? ""
        #expect(core.split(separator: " ", omittingEmptySubsequences: true).dropFirst(4).first == "0", "\(core)")
    }
}

@Suite struct EnclaveFaultTests {
    /// SIGKILL the enclave at random moments of a passcode change: afterwards the old or the
    /// new passcode works, never neither (the keybag file is replaced atomically).
    @Test func killedDuringAPasscodeChangeLeavesOldOrNew() async throws {
        let keychain = try EnclaveKeychain()
        var current = SecretBytes("pass-0".utf8)
        try keychain.enclave.changePasscode(old: nil, new: current)
        var generator = SystemRandomNumberGenerator()
        var sawOld = 0, sawNew = 0
        for round in 1...20 {
            try keychain.restart()
            let enclave = keychain.enclave
            let pid = try #require(enclave.processID)
            let next = SecretBytes("pass-\(round)".utf8)
            let old = current
            let change = Task.detached { try? enclave.changePasscode(old: old, new: next) }
            try await Task.sleep(for: .microseconds(Int.random(in: 0...40000, using: &generator)))
            // Only if it is still that enclave: a pid that exited may belong to another process now.
            if ProcessExecutable.path(of: pid)?.hasSuffix("/trousseau-enclave") == true { kill(pid, SIGKILL) }
            _ = await change.value
            try keychain.restart()
            if (try? keychain.enclave.unlock(passcode: next)) != nil {
                current = next
                sawNew += 1
            } else {
                try keychain.enclave.unlock(passcode: current)
                sawOld += 1
            }
        }
        #expect(sawOld + sawNew == 20)
    }

    /// The in-process server speaks the same protocol as the process.
    @Test func inProcessEnclaveServesTheProtocol() throws {
        let home = try TemporaryKeychain.makeTemporaryDirectory()
        var configuration = SoftwareKeybag.Configuration()
        configuration.passcodeKDFTarget = 0
        configuration.minimumLogN = 10
        let client = try EnclaveClient.inProcess(
            SoftwareKeybag(directory: home, deviceKey: FileDeviceKey(directory: home), configuration: configuration))
        #expect(client.processID == nil)
        let store = try KeychainStore(directory: home, keybag: client)
        _ = try store.add(genericPassword(account: "a", ["v_Data": .utf8("x")]), caller: AccessGroups(["g"]))
        try client.changePasscode(old: nil, new: SecretBytes("1".utf8))
        try client.lock()
        #expect(osStatus { try store.copyMatching(genericPassword(account: "a"), caller: AccessGroups(["g"])) } == OSStatusCode.interactionNotAllowed)
        try client.unlock(passcode: SecretBytes("1".utf8))
        #expect(try store.copyMatching(genericPassword(account: "a", ["r_Data": .bool(true)]), caller: AccessGroups(["g"])) == .utf8("x"))
    }
}
