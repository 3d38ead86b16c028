public import FoundationEssentials
public import KeychainCrypto
public import KeychainModel
import KeychainSystem
public import EnclaveProtocol

/// The keybag itself: seven class keys kept in the keybag file wrapped under the device key
/// (class D, and A and C while no passcode is set) or under the passcode entangled with the
/// device key; the lock state machine; passcode set, change and removal; the failed-unlock
/// throttle. This is the enclave's software backend: it runs inside the enclave process,
/// and in-process only in unit tests.
public final class SoftwareKeybag: Keybag {
    /// Tunables; the defaults are the production values.
    public struct Configuration: Sendable {
        /// The time one passcode derivation should take at least; calibrated when a passcode is set.
        public var passcodeKDFTarget: Double = 0.1
        /// The smallest scrypt cost, log2 N.
        public var minimumLogN: UInt8 = 14
        /// Seconds since 1970; replaceable so tests can move time.
        public var clock: @Sendable () -> Double = { Date().timeIntervalSince1970 }
        /// The biometric sensor this keybag trusts, if any.
        public var biometricSensor: (any BiometricSensor)?
        /// The time one backup password derivation should take at least: a backup leaves
        /// the device, so it must resist guessing offline.
        public var backupKDFTarget: Double = 0.5
        /// The smallest scrypt cost of a backup password, log2 N (2^16: 64 MiB).
        public var minimumBackupLogN: UInt8 = 16
        /// Where the device key goes when the keychain moves onto a TPM and no TCTI is named.
        public var deviceKeyBackend = DeviceKeyBackend.automatic
        #if TROUSSEAU_TEST_HOOKS
        /// Enclave keys derived from this seed and their ids, not random: a leak test can
        /// then look for their private bytes (test builds only).
        public var testEnclaveKeySeed: Data?
        #endif

        public init() {}
    }

    struct State: Sendable {
        var file: KeybagFile
        var keys: [ProtectionClass: ClassKey]
        var lockState: LockState
        var lastActivity: Double
    }

    private static let passcodeClasses: [ProtectionClass] = [
        .whenUnlocked, .whenUnlockedThisDeviceOnly, .afterFirstUnlock, .afterFirstUnlockThisDeviceOnly,
        .whenPasscodeSetThisDeviceOnly,
    ]
    private static let deviceClasses: [ProtectionClass] = [.always, .alwaysThisDeviceOnly]

    let directory: String
    /// The device key; replaced once, by an equal one in a TPM (``migrateToTPM(tcti:passcode:)``).
    let deviceKeyHolder: BlockingMutex<any DeviceKey>
    var deviceKey: any DeviceKey { deviceKeyHolder.withLock { $0 } }
    let configuration: Configuration
    let state: BlockingMutex<State>
    /// Open backup keybags by session id: made for a backup, or opened for a restore.
    let backups = BlockingMutex<[Data: BackupSession]>([:])
    /// The keys of the file keychains unlocked now, by keychain.
    let fileKeychains = BlockingMutex<[UUID: FileKeychainKeys]>([:])
    /// Authentication contexts and their proofs, for items with an access control.
    public let presence: PresenceAuthority

    /// Opens the keybag in `directory`, creating one without a passcode on first use.
    /// With a passcode set it starts before first unlock: only class D is available.
    /// The process that calls this holds class keys: harden it first (``ProcessHardening``,
    /// which `trousseau-enclave` applies in its `main`).
    ///
    /// - Throws: `errSecDecode` when the keybag does not belong to this device key (nothing
    ///   is overwritten), `errSecIO` when it cannot be read or written.
    public init(directory: String, deviceKey: any DeviceKey, configuration: Configuration = Configuration()) throws {
        self.directory = directory
        deviceKeyHolder = BlockingMutex(deviceKey)
        self.configuration = configuration
        presence = PresenceAuthority(
            sensor: configuration.biometricSensor,
            enrollmentKey: try deviceKey.authenticationCode(for: Data("trousseau biometric enrollment key".utf8)),
            clock: configuration.clock)
        let now = configuration.clock()
        if let file = try KeybagFile.load(from: directory) {
            state = BlockingMutex(try Self.open(file, deviceKey: deviceKey, now: now))
        } else {
            let (file, keys) = try Self.newKeybag(deviceKey: deviceKey)
            if try file.create(in: directory) {
                state = BlockingMutex(State(file: file, keys: keys, lockState: .unlocked, lastActivity: now))
            } else if let existing = try KeybagFile.load(from: directory) {
                // Another process created the keybag first: use that one.
                state = BlockingMutex(try Self.open(existing, deviceKey: deviceKey, now: now))
            } else {
                throw KeychainError(status: OSStatusCode.io, message: "the keybag vanished while it was created")
            }
        }
    }

    /// The state of an existing keybag: class D keys unwrapped, and A and C when no
    /// passcode protects them.
    private static func open(_ file: KeybagFile, deviceKey: any DeviceKey, now: Double) throws -> State {
        let deviceWrapping = try deviceWrappingKey(file, deviceKey)
        var keys: [ProtectionClass: ClassKey] = [:]
        for (protection, entry) in file.entries where entry.wrapping == .device {
            keys[protection] = try deviceWrapping.unwrap(
                entry.wrappedKey, associatedData: file.associatedData(for: protection, wrapping: .device))
        }
        guard keys[.always] != nil, keys[.alwaysThisDeviceOnly] != nil else {
            throw KeychainError.decode("the keybag has no class D keys")
        }
        let lockState: LockState = file.passcodeKDF == nil ? .unlocked : .beforeFirstUnlock
        return State(file: file, keys: keys, lockState: lockState, lastActivity: now)
    }

    // MARK: - Keybag

    public func indexKey() throws -> IndexKey {
        try classKey(.always).indexKey()
    }

    public func metadataKey(for protection: ProtectionClass) throws -> MetadataKey {
        try classKey(protection).metadataKey()
    }

    public func wrapItemKey(
        _ itemKey: ItemKey, for protection: ProtectionClass, associatedData: Data, access: AccessControl?, context: Data?
    ) throws -> (wrapped: Data, access: AccessControl?) {
        try wrap(itemKey, for: protection, associatedData: associatedData, access: access, context: context) { $0 }
    }

    /// Wraps `itemKey` under the key `wrapping` derives from the class key (the class key
    /// itself for item keys; another for enclave keys).
    func wrap(
        _ itemKey: ItemKey, for protection: ProtectionClass, associatedData: Data, access: AccessControl?, context: Data?,
        wrapping: (ClassKey) -> ClassKey
    ) throws -> (wrapped: Data, access: AccessControl?) {
        guard var access else { return (try wrapping(classKey(protection)).wrap(itemKey, associatedData: associatedData), nil) }
        // Bind what the access control will be checked against, and refuse one nobody could satisfy.
        // Asking the sensor costs a process with fprintd: only for a biometric constraint.
        let biometric = !Set(access.factors).isDisjoint(with: [.biometryAny, .biometryCurrentSet])
        let enrollment = biometric ? try presence.enrollmentDigest() : Data()
        if access.factors.contains(.biometryCurrentSet) { access.enrollment = enrollment }
        var available: Set<AccessControl.Factor> = []
        if status().hasPasscode { available.insert(.passcode) }
        if !enrollment.isEmpty { available.formUnion([.biometryAny, .biometryCurrentSet]) }
        guard access.isSatisfied(by: available) else {
            throw KeychainError(
                status: OSStatusCode.authFailed,
                message: "the access control cannot be satisfied: no keychain passcode is set or no finger is enrolled")
        }
        var password: SecretBytes?
        if access.requiresApplicationPassword {
            password = try applicationPassword(context: context)
            access.passwordSalt = AccessBinding.passwordSalt(logN: configuration.minimumLogN)
        }
        let bound = AccessBinding.associatedData(associatedData, access: access)
        var wrapped = try wrapping(classKey(protection)).wrap(itemKey, associatedData: bound)
        if let password {
            wrapped = try AccessBinding.seal(wrapped, password: password, salt: access.passwordSalt, associatedData: bound)
        }
        return (wrapped, access)
    }

    public func unwrapItemKey(
        _ wrapped: Data, for protection: ProtectionClass, associatedData: Data, access: AccessControl?, context: Data?
    ) throws -> ItemKey {
        try unwrap(wrapped, for: protection, associatedData: associatedData, access: access, context: context) { $0 }
    }

    /// Unwraps what ``wrap(_:for:associatedData:access:context:wrapping:)`` made with the
    /// same `wrapping`, once the context has proven what the access control asks.
    func unwrap(
        _ wrapped: Data, for protection: ProtectionClass, associatedData: Data, access: AccessControl?, context: Data?,
        wrapping: (ClassKey) -> ClassKey
    ) throws -> ItemKey {
        guard let access else { return try wrapping(classKey(protection)).unwrap(wrapped, associatedData: associatedData) }
        let key = wrapping(try classKey(protection))  // the lock state first, as for any item
        try presence.authorize(access, operation: AccessBinding.operation(associatedData: associatedData), context: context)
        let bound = AccessBinding.associatedData(associatedData, access: access)
        var classWrapped = wrapped
        if access.requiresApplicationPassword {
            classWrapped = try AccessBinding.open(
                wrapped, password: try applicationPassword(context: context), salt: access.passwordSalt, associatedData: bound)
        }
        return try key.unwrap(classWrapped, associatedData: bound)
    }

    private func applicationPassword(context: Data?) throws -> SecretBytes {
        guard let password = presence.applicationPassword(context: context) else {
            throw KeychainError(status: OSStatusCode.authNeeded, message: "the item needs its application password")
        }
        return password
    }

    /// Checks evidence of the user's presence and records the proof in its context.
    ///
    /// - Throws: `errSecAuthFailed` for a wrong passcode (counted and throttled as an
    ///   unlock) or when no passcode is set; the sensor's errors for biometry.
    public func authenticate(_ request: AuthenticationRequest) throws {
        switch request.evidence {
        case .passcode(let passcode):
            guard status().hasPasscode else {
                throw KeychainError(status: OSStatusCode.authFailed, message: "no keychain passcode is set")
            }
            try unlock(passcode: passcode)
            presence.record(.passcode, for: request)
        case .biometry(let reason):
            try presence.scan(for: request, reason: reason)
        case .applicationPassword(let password):
            presence.setApplicationPassword(password, context: request.context)
        }
    }

    /// What this keybag can check.
    public func capabilities() throws -> AuthenticationCapabilities {
        let enrollment = try presence.enrollmentDigest()
        return AuthenticationCapabilities(
            passcodeSet: status().hasPasscode, biometryAvailable: presence.sensor != nil,
            biometryEnrolled: !enrollment.isEmpty, enrollmentState: enrollment)
    }

    /// The class key of `protection` if the lock state allows it; it never leaves the keybag.
    func classKey(_ protection: ProtectionClass) throws -> ClassKey {
        let now = configuration.clock()
        return try state.withLock { state in
            Self.applyAutoLock(&state, now: now)
            if protection == .whenPasscodeSetThisDeviceOnly, state.file.passcodeKDF == nil {
                throw KeychainError(status: OSStatusCode.authFailed,
                                    message: "WhenPasscodeSetThisDeviceOnly items need a passcode, and none is set")
            }
            guard Self.status(of: state).isAvailable(protection), let key = state.keys[protection] else {
                throw KeychainError(status: OSStatusCode.interactionNotAllowed,
                                    message: "protection class \(protection.rawValue) is not available while the keychain is \(Self.describe(state.lockState))")
            }
            state.lastActivity = now
            return key
        }
    }

    // MARK: - Lock state and passcode

    /// The lock state, passcode state and settings.
    public func status() -> KeybagStatus {
        let now = configuration.clock()
        let throttle = (try? UnlockThrottle.load(from: directory)) ?? UnlockThrottle()
        return state.withLock { state in
            Self.applyAutoLock(&state, now: now)
            var status = Self.status(of: state)
            status.failedUnlocks = throttle.failures
            return status
        }
    }

    /// Unlocks with the passcode: classes A, C and akpu become available. Without a passcode
    /// there is nothing to unlock and this succeeds.
    ///
    /// - Throws: `errSecAuthFailed` for a wrong passcode (counted, and delayed after the
    ///   fourth failure in a row) or while the throttle delay runs.
    public func unlock(passcode: SecretBytes) throws {
        let file = state.withLock { $0.file }
        guard file.passcodeKDF != nil else { return }
        let keys = try verifiedPasscodeKeys(file, passcode)
        let now = configuration.clock()
        state.withLock { state in
            // A passcode change between the check and now would have replaced the file.
            guard state.file.uuid == file.uuid else { return }
            state.keys.merge(keys) { _, unwrapped in unwrapped }
            state.lockState = .unlocked
            state.lastActivity = now
        }
    }

    /// Locks: class A and akpu keys are dropped (and zeroed), class C stays.
    /// Without a passcode the keychain cannot lock and this does nothing.
    public func lock() {
        state.withLock { Self.lock(&$0) }
    }

    /// Sets, changes or removes the passcode. Class keys are rewrapped, never replaced, so
    /// no item is re-encrypted — except that removing the passcode destroys the akpu class
    /// key, whose items the caller must purge.
    ///
    /// - Parameters:
    ///   - old: the current passcode; required when one is set.
    ///   - new: the new passcode, or nil to remove it.
    /// - Returns: whether the akpu class key was destroyed.
    /// - Throws: `errSecAuthFailed` for a wrong or missing current passcode (throttled like
    ///   an unlock), `errSecParam` for an empty new passcode.
    @discardableResult
    public func changePasscode(old: SecretBytes?, new: SecretBytes?) throws -> Bool {
        if let new, new.isEmpty { throw KeychainError.param("an empty passcode is no passcode: remove it instead") }
        let (file, current) = state.withLock { ($0.file, $0.keys) }
        var keys = current
        if file.passcodeKDF != nil {
            guard let old else {
                throw KeychainError(status: OSStatusCode.authFailed, message: "the current passcode is required")
            }
            keys.merge(try verifiedPasscodeKeys(file, old)) { _, unwrapped in unwrapped }
        } else if new == nil {
            return false  // no passcode to remove
        }

        var changed = file
        let destroysPasscodeClass: Bool
        if let new {
            if keys[.whenPasscodeSetThisDeviceOnly] == nil { keys[.whenPasscodeSetThisDeviceOnly] = .generate() }
            let kdf = try PasscodeKDF.calibrated(
                target: configuration.passcodeKDFTarget, minimumLogN: configuration.minimumLogN, salt: Self.randomBytes(32))
            changed.passcodeKDF = kdf
            let stretched = try kdf.derive(new)
            // On a TPM, a new key whose authValue is this passcode's half (the old one's blob is dropped).
            changed.passcodeKey = try (deviceKey as? TPMDeviceKey)?.createPasscodeKey(auth: TPMPasscodeHalves(stretched).authValue)
            let wrapping = try passcodeWrappingKey(changed, stretched: stretched)
            for protection in Self.passcodeClasses {
                guard let key = keys[protection] else { throw KeychainError.internalComponent }
                changed.entries[protection] = KeybagFile.Entry(
                    wrapping: .passcode,
                    wrappedKey: try wrapping.wrap(key, associatedData: changed.associatedData(for: protection, wrapping: .passcode)))
            }
            destroysPasscodeClass = false
        } else {
            changed.passcodeKDF = nil
            changed.passcodeKey = nil
            let wrapping = try Self.deviceWrappingKey(changed, deviceKey)
            for protection in Self.passcodeClasses where protection != .whenPasscodeSetThisDeviceOnly {
                guard let key = keys[protection] else { throw KeychainError.internalComponent }
                changed.entries[protection] = KeybagFile.Entry(
                    wrapping: .device,
                    wrappedKey: try wrapping.wrap(key, associatedData: changed.associatedData(for: protection, wrapping: .device)))
            }
            changed.entries[.whenPasscodeSetThisDeviceOnly] = nil
            keys[.whenPasscodeSetThisDeviceOnly] = nil
            destroysPasscodeClass = true
        }
        try changed.save(to: directory)
        let now = configuration.clock()
        state.withLock { state in
            state.file = changed
            state.keys = keys
            state.lockState = .unlocked
            state.lastActivity = now
        }
        return destroysPasscodeClass
    }

    /// Sets the idle time after which an unlocked keybag locks (0: never) and the number of
    /// failed unlocks in a row after which the keybag is erased (0: never).
    public func updateSettings(autoLockSeconds: UInt32? = nil, eraseAfterFailures: UInt32? = nil) throws {
        try state.withLock { state in
            var changed = state.file
            if let autoLockSeconds { changed.autoLockSeconds = autoLockSeconds }
            if let eraseAfterFailures { changed.eraseAfterFailures = eraseAfterFailures }
            try changed.save(to: directory)
            state.file = changed
        }
    }

    // MARK: - Internals

    /// The class keys under the passcode, after the throttle allows an attempt and counts it.
    func verifiedPasscodeKeys(_ file: KeybagFile, _ passcode: SecretBytes) throws -> [ProtectionClass: ClassKey] {
        guard let kdf = file.passcodeKDF else { return [:] }
        let throttle = try UnlockThrottle.countAttempt(in: directory, at: configuration.clock())

        var keys: [ProtectionClass: ClassKey] = [:]
        // Only a passcode proven wrong counts (and may erase): a wrapping key that fails to
        // unwrap, or the TPM refusing the authValue. Anything else — a TPM that does not
        // answer, a damaged blob — is reported as itself.
        var wrong = false
        do {
            let wrapping = try passcodeWrappingKey(file, stretched: try kdf.derive(passcode))
            do {
                for (protection, entry) in file.entries where entry.wrapping == .passcode {
                    keys[protection] = try wrapping.unwrap(
                        entry.wrappedKey, associatedData: file.associatedData(for: protection, wrapping: .passcode))
                }
            } catch let error as KeychainError where error == .decode {
                wrong = true
            }
        } catch let failure as TPMFailure where failure.isLockout {
            throw disabled(failure)
        } catch let failure as TPMFailure where failure.isWrongAuthorization {
            wrong = true
        }
        if wrong {
            if file.eraseAfterFailures > 0, throttle.failures >= file.eraseAfterFailures {
                try erase()
                throw KeychainError(status: OSStatusCode.authFailed, message: "too many failed attempts: the keychain was erased")
            }
            throw KeychainError(status: OSStatusCode.authFailed, message: "the passcode is not correct")
        }
        try UnlockThrottle.clear(in: directory)
        return keys
    }

    /// Replaces the keybag with a new one: every item becomes undecryptable.
    private func erase() throws {
        let (file, keys) = try Self.newKeybag(deviceKey: deviceKey)
        try file.save(to: directory)
        try UnlockThrottle.clear(in: directory)
        let now = configuration.clock()
        state.withLock { $0 = State(file: file, keys: keys, lockState: .unlocked, lastActivity: now) }
    }

    /// The key that wraps the passcode classes, from the passcode's scrypt output.
    ///
    /// Software: HKDF(HMAC(device key, "trousseau keybag passcode" ‖ uuid ‖ stretched)). On
    /// a TPM: the stretched passcode is split in two; one half is the authValue of the
    /// passcode's TPM key, which MACs "trousseau keybag passcode" ‖ uuid; the other half and
    /// that MAC make the key. A guess can then be tried only by the TPM, which counts it, and
    /// a TPM that gave its keys away would still leave the passcode to find.
    ///
    /// - Throws: ``TPMFailure`` for a wrong passcode and in lockout, on a TPM.
    func passcodeWrappingKey(_ file: KeybagFile, stretched: SecretBytes, deviceKey: (any DeviceKey)? = nil) throws -> WrappingKey {
        let deviceKey = deviceKey ?? self.deviceKey
        var message = Data("trousseau keybag passcode".utf8)
        withUnsafeBytes(of: file.uuid.uuid) { message.append(contentsOf: $0) }
        if let blob = file.passcodeKey {
            guard let tpm = deviceKey as? TPMDeviceKey else {
                throw KeychainError.decode("the keybag's passcode key is in a TPM, and this keychain's device key is not")
            }
            let halves = TPMPasscodeHalves(stretched)
            let mac = try tpm.passcodeAuthenticationCode(key: blob, auth: halves.authValue, message: message)
            return WrappingKey(deriving: halves.entangled(with: mac), info: "trousseau keybag TPM passcode wrapping key")
        }
        stretched.withUnsafeBytes { message.append(contentsOf: $0) }
        defer { message.withUnsafeMutableBytes { SecretBytes.zero($0) } }
        return WrappingKey(deriving: try deviceKey.authenticationCode(for: message), info: "trousseau keybag passcode wrapping key")
    }

    /// The refusal while the TPM's dictionary-attack lockout lasts, in the words Apple uses
    /// for a disabled device, with the time until the TPM forgives one failure.
    private func disabled(_ failure: TPMFailure) -> KeychainError {
        let wait = try? (deviceKey as? TPMDeviceKey)?.lockoutInterval()
        // An interval of 0: failures are never forgiven; only the TPM's owner can clear them.
        let when = wait.map { $0 == 0 ? " Only the TPM's owner can clear it." : " Try again in \(($0 + 59) / 60) minutes." } ?? ""
        return KeychainError(
            status: OSStatusCode.authFailed,
            message: "the keychain is disabled: too many wrong passcodes reached the TPM's dictionary-attack lockout.\(when)")
    }

    private static func deviceWrappingKey(_ file: KeybagFile, _ deviceKey: any DeviceKey) throws -> WrappingKey {
        var message = Data("trousseau keybag device".utf8)
        withUnsafeBytes(of: file.uuid.uuid) { message.append(contentsOf: $0) }
        return WrappingKey(deriving: try deviceKey.authenticationCode(for: message), info: "trousseau keybag device wrapping key")
    }

    /// A new keybag without a passcode: fresh keys for every class but akpu, device-wrapped.
    private static func newKeybag(deviceKey: any DeviceKey) throws -> (KeybagFile, [ProtectionClass: ClassKey]) {
        var file = KeybagFile(uuid: UUID())
        let wrapping = try deviceWrappingKey(file, deviceKey)
        var keys: [ProtectionClass: ClassKey] = [:]
        for protection in ProtectionClass.allCases where protection != .whenPasscodeSetThisDeviceOnly {
            let key = ClassKey.generate()
            keys[protection] = key
            file.entries[protection] = KeybagFile.Entry(
                wrapping: .device,
                wrappedKey: try wrapping.wrap(key, associatedData: file.associatedData(for: protection, wrapping: .device)))
        }
        return (file, keys)
    }

    private static func status(of state: State) -> KeybagStatus {
        KeybagStatus(
            lockState: state.lockState, hasPasscode: state.file.passcodeKDF != nil,
            autoLockSeconds: state.file.autoLockSeconds, failedUnlocks: 0)
    }

    private static func applyAutoLock(_ state: inout State, now: Double) {
        let limit = Double(state.file.autoLockSeconds)
        if limit > 0, state.lockState == .unlocked, now - state.lastActivity >= limit {
            lock(&state)
        }
    }

    private static func lock(_ state: inout State) {
        guard state.file.passcodeKDF != nil, state.lockState == .unlocked else { return }
        for protection in [ProtectionClass.whenUnlocked, .whenUnlockedThisDeviceOnly, .whenPasscodeSetThisDeviceOnly] {
            state.keys[protection] = nil
        }
        state.lockState = .locked
    }

    private static func describe(_ lockState: LockState) -> String {
        switch lockState {
        case .beforeFirstUnlock: "before its first unlock"
        case .unlocked: "unlocked"
        case .locked: "locked"
        }
    }

    static func randomBytes(_ count: Int) -> Data {
        var generator = SystemRandomNumberGenerator()
        return Data((0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) })
    }
}
