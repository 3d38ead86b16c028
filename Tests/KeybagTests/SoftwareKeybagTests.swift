import FoundationEssentials
import KeychainCrypto
import KeychainModel
import KeychainTestSupport
import EnclaveBackend
import Testing

/// A clock tests can move.
final class TestClock: Sendable {
    private let now = BlockingMutex<Double>(1_800_000_000)
    func advance(_ seconds: Double) { now.withLock { $0 += seconds } }
    var read: @Sendable () -> Double { { [self] in now.withLock { $0 } } }
}

extension SoftwareKeybag.Configuration {
    /// Fast passcode derivation for tests (scrypt N = 2^10, no calibration).
    static func fast(clock: TestClock = TestClock()) -> Self {
        var configuration = Self()
        configuration.passcodeKDFTarget = 0
        configuration.minimumLogN = 10
        configuration.clock = clock.read
        return configuration
    }
}

@Suite struct SoftwareKeybagTests {
    let home: String
    let clock = TestClock()
    init() throws { home = try TemporaryKeychain.makeTemporaryDirectory() }

    func keybag() throws -> SoftwareKeybag {
        try SoftwareKeybag(directory: home, deviceKey: FileDeviceKey(directory: home), configuration: .fast(clock: clock))
    }

    func available(_ keybag: SoftwareKeybag) -> [ProtectionClass] {
        ProtectionClass.allCases.filter { (try? keybag.metadataKey(for: $0)) != nil }
    }

    let passcode = SecretBytes("1234".utf8)

    @Test func withoutAPasscodeEverythingButAkpuIsAvailable() throws {
        let bag = try keybag()
        #expect(bag.status().lockState == .unlocked)
        #expect(!bag.status().hasPasscode)
        #expect(available(bag) == [.whenUnlocked, .afterFirstUnlock, .always, .whenUnlockedThisDeviceOnly,
                                   .afterFirstUnlockThisDeviceOnly, .alwaysThisDeviceOnly])
        #expect(throws: KeychainError.authFailed) { try bag.metadataKey(for: .whenPasscodeSetThisDeviceOnly) }
        bag.lock()
        #expect(bag.status().lockState == .unlocked, "without a passcode there is nothing to lock")
    }

    @Test func lockStatesFollowTheClasses() throws {
        let bag = try keybag()
        try bag.changePasscode(old: nil, new: passcode)
        #expect(available(bag).count == 7)

        let booted = try keybag()  // an enclave restart
        #expect(booted.status().lockState == .beforeFirstUnlock)
        #expect(available(booted) == [.always, .alwaysThisDeviceOnly])
        #expect(throws: KeychainError.interactionNotAllowed) { try booted.metadataKey(for: .afterFirstUnlock) }

        try booted.unlock(passcode: passcode)
        #expect(booted.status().lockState == .unlocked)
        #expect(available(booted).count == 7)

        booted.lock()
        #expect(booted.status().lockState == .locked)
        #expect(available(booted) == [.afterFirstUnlock, .always, .afterFirstUnlockThisDeviceOnly, .alwaysThisDeviceOnly])
    }

    @Test func itemKeysWrappedBeforeAPasscodeChangeStillUnwrap() throws {
        let bag = try keybag()
        let itemKey = ItemKey.generate()
        let ad = Data("row".utf8)
        let wrapped = try bag.wrapItemKey(itemKey, for: .whenUnlocked, associatedData: ad)
        try bag.changePasscode(old: nil, new: passcode)
        try bag.changePasscode(old: passcode, new: SecretBytes("5678".utf8))
        let reopened = try keybag()
        try reopened.unlock(passcode: SecretBytes("5678".utf8))
        let unwrapped = try reopened.unwrapItemKey(wrapped, for: .whenUnlocked, associatedData: ad)
        #expect(unwrapped.secretBytes.isEqual(to: itemKey.secretBytes), "a passcode change rewraps class keys, not items")
        #expect(throws: KeychainError.authFailed) { try reopened.unlock(passcode: self.passcode) }
    }

    @Test func removingThePasscodeDestroysTheAkpuKey() throws {
        let bag = try keybag()
        try bag.changePasscode(old: nil, new: passcode)
        let wrapped = try bag.wrapItemKey(ItemKey.generate(), for: .whenPasscodeSetThisDeviceOnly, associatedData: Data())
        #expect(try bag.changePasscode(old: passcode, new: nil) == true)
        #expect(throws: KeychainError.authFailed) { try bag.unwrapItemKey(wrapped, for: .whenPasscodeSetThisDeviceOnly, associatedData: Data()) }
        // Setting a passcode again makes a new akpu key: the old item key stays unreadable.
        try bag.changePasscode(old: nil, new: passcode)
        #expect(throws: KeychainError.decode) { try bag.unwrapItemKey(wrapped, for: .whenPasscodeSetThisDeviceOnly, associatedData: Data()) }
        // And after a restart, classes A and C are the device key's again.
        #expect(try bag.changePasscode(old: passcode, new: nil) == true)
        #expect(available(try keybag()).count == 6)
    }

    @Test func aWrongPasscodeChangesNothingAndIsThrottled() throws {
        let bag = try keybag()
        try bag.changePasscode(old: nil, new: passcode)
        bag.lock()
        for attempt in 1...5 {
            #expect(throws: KeychainError.authFailed) { try bag.unlock(passcode: SecretBytes("0000".utf8)) }
            #expect(bag.status().failedUnlocks == UInt32(attempt))
            #expect(bag.status().lockState == .locked)
        }
        // The fifth failure starts a one-minute delay: even the right passcode waits.
        #expect(throws: KeychainError.authFailed) { try bag.unlock(passcode: self.passcode) }
        clock.advance(61)
        try bag.unlock(passcode: passcode)
        #expect(bag.status().failedUnlocks == 0)
    }

    @Test func theThrottleSurvivesARestart() throws {
        try keybag().changePasscode(old: nil, new: passcode)
        let first = try keybag()
        for _ in 1...5 {
            #expect(throws: KeychainError.authFailed) { try first.unlock(passcode: SecretBytes("0000".utf8)) }
        }
        let restarted = try keybag()
        #expect(restarted.status().failedUnlocks == 5)
        do {
            try restarted.unlock(passcode: passcode)
            Issue.record("the delay must hold across a restart")
        } catch let error as KeychainError {
            #expect(error.status == OSStatusCode.authFailed)
            #expect(error.message.contains("try again in 60 seconds"))
        }
        clock.advance(3600)
        try restarted.unlock(passcode: passcode)
    }

    @Test func delaysEscalate() {
        #expect((0...4).map { KeybagThrottleSchedule.delay(afterFailures: $0) } == [0, 0, 0, 0, 0])
        #expect([5, 6, 7, 8, 20].map { KeybagThrottleSchedule.delay(afterFailures: $0) } == [60, 300, 900, 3600, 3600])
    }

    @Test func autoLockAfterIdleTime() throws {
        let bag = try keybag()
        try bag.changePasscode(old: nil, new: passcode)
        try bag.updateSettings(autoLockSeconds: 300)
        clock.advance(200)
        _ = try bag.metadataKey(for: .whenUnlocked)  // activity
        clock.advance(200)
        #expect(bag.status().lockState == .unlocked)
        clock.advance(101)
        #expect(throws: KeychainError.interactionNotAllowed) { try bag.metadataKey(for: .whenUnlocked) }
        #expect(bag.status().lockState == .locked)
        #expect(try keybag().status().autoLockSeconds == 300, "the setting is kept in the keybag")
    }

    @Test func eraseAfterTooManyFailures() throws {
        let bag = try keybag()
        let wrapped = try bag.wrapItemKey(ItemKey.generate(), for: .always, associatedData: Data())
        try bag.changePasscode(old: nil, new: passcode)
        try bag.updateSettings(eraseAfterFailures: 3)
        for _ in 1...3 {
            #expect(throws: KeychainError.authFailed) { try bag.unlock(passcode: SecretBytes("0000".utf8)) }
        }
        #expect(!bag.status().hasPasscode, "a new, empty keybag")
        #expect(throws: KeychainError.decode) { try bag.unwrapItemKey(wrapped, for: .always, associatedData: Data()) }
    }

    @Test func aKeybagFromAnotherDeviceDecryptsNothingAndIsNotOverwritten() throws {
        _ = try keybag()
        let other = try TemporaryKeychain.makeTemporaryDirectory()
        let keybagBytes = try Data(contentsOf: URL(fileURLWithPath: home + "/keybag"))
        try keybagBytes.write(to: URL(fileURLWithPath: other + "/keybag"))
        #expect(throws: KeychainError.decode) {
            try SoftwareKeybag(directory: other, deviceKey: FileDeviceKey(directory: other), configuration: .fast())
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: other + "/keybag")) == keybagBytes)
    }

    @Test func calibrationReachesTheTarget() throws {
        let kdf = try PasscodeKDF.calibrated(target: 0.1, salt: Data(count: 32))
        let start = ContinuousClock.now
        _ = try kdf.derive(SecretBytes("x".utf8))
        #expect(ContinuousClock.now - start >= .milliseconds(90) || kdf.logN == 22)
        #expect(kdf.logN >= 14)
    }
}

