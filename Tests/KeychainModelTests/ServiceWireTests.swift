import FoundationEssentials
import KeychainModel
import KeychainProtocol
import Testing

@Suite struct ServiceWireTests {
    static let query: [String: KeychainValue] = [
        "class": .string("genp"), "acct": .string("ålice"), "v_Data": .data(Data([0, 255])), "port": .number(-1),
        "cdat": .date(Date(timeIntervalSinceReferenceDate: 1.5)), "sync": .bool(true),
        "list": .array([.string("a"), .dictionary(["k": .number(1)])]),
    ]

    /// One instance of every request of the catalog (a test below checks none is missing).
    static let samples: [any ServiceRequest] = [
        Service.Add(query), Service.CopyMatching(query), Service.Update(query, attributes: ["labl": .string("x")]),
        Service.Delete(query), Service.KeychainStatusRequest(), Service.Unlock(passcode: SecretBytes("1234".utf8)), Service.Lock(),
        Service.ChangePasscode(old: nil, new: SecretBytes("n".utf8)), Service.UpdateSettings(autoLockSeconds: 60),
        Service.MigrateToTPM(tcti: nil, passcode: SecretBytes("1234".utf8)),
        Service.IssueDeveloperCertificate(team: "AAAAAAAAAA", applicationGroups: ["group.a"], publicKey: Data(repeating: 7, count: 64)),
        Service.Authenticate(AuthenticationRequest(context: Data(repeating: 1, count: 16), evidence: .biometry(reason: "why"))),
        Service.InvalidateAuthentication(context: Data(repeating: 2, count: 16)), Service.AuthenticationCapabilitiesRequest(),
        Service.CreateBackup(path: "/tmp/b", password: SecretBytes("pw".utf8)),
        Service.RestoreBackup(path: "/tmp/b", password: SecretBytes("pw".utf8)),
        Service.CreateEscrow(), Service.UnlockWithEscrow(id: Data(repeating: 3, count: 16), secret: SecretBytes([1, 2, 3])),
        Service.RevokeEscrow(id: Data(repeating: 3, count: 16)),
        Service.EvaluateTrust(
            certificates: [Data(repeating: 0x30, count: 40), Data([1])], policies: [.basicX509, .ssl(server: true, hostname: "example.com"), .ssl(server: false, hostname: nil), .codeSigning],
            anchors: [Data([2, 3])], trustsSystemRoots: false, verifyDate: Date(timeIntervalSinceReferenceDate: 800_000_000.5)),
        Service.DecodePKCS12(file: Data([0x30, 1, 2]), passphrase: SecretBytes("pw".utf8)),
        Service.EncodePKCS12(privateKey: SecretBytes([1, 2]), certificates: [Data([3])], passphrase: SecretBytes("pw".utf8), name: "n"),
        Service.EncodePKCS12(privateKey: nil, certificates: [], passphrase: SecretBytes([]), name: nil),
        Service.SetTrustSettings(
            domain: .admin,
            record: TrustSettingsRecord(
                certificate: Data([0x30]),
                constraints: [TrustUsageConstraint(policy: "ssl", policyString: "a.example", allowedError: -5, keyUsage: 1, application: "/bin/x", result: .deny), TrustUsageConstraint()])),
        Service.RemoveTrustSettings(domain: .user, certificate: Data([0x30, 0])), Service.CopyTrustSettings(domain: .system),
        Service.CreateEnclaveKey(protection: .whenUnlockedThisDeviceOnly, access: try! AccessControl(protection: .whenUnlockedThisDeviceOnly, flags: [.privateKeyUsage, .devicePasscode]), context: nil),
        Service.UseEnclaveKey(blob: Data([1, 2]), operation: .decrypt(algorithm: "algid:encrypt:ECIES:ECDH:KDFX963:SHA256:AESGCM", data: Data([3])), context: Data(count: 16), prompt: "Sign"),
        Service.CreateKeychain(path: "/tmp/a.keychain-db", password: SecretBytes("pw".utf8), settings: KeychainSettings(autoLockSeconds: 300, lockOnSleep: true)),
        Service.DeleteKeychain(path: "/tmp/a.keychain-db"), Service.UnlockKeychain(path: "/tmp/a.keychain-db", password: SecretBytes("pw".utf8)),
        Service.LockKeychain(path: nil), Service.LockKeychain(path: "/tmp/a.keychain-db"), Service.KeychainInfo(path: "/tmp/a.keychain-db"),
        Service.SetKeychainSettings(path: "/tmp/a.keychain-db", settings: KeychainSettings()),
        Service.ChangeKeychainPassword(path: "/tmp/a.keychain-db", old: SecretBytes("a".utf8), new: SecretBytes("b".utf8)),
        Service.SearchList(replacement: nil), Service.SearchList(replacement: ["/a", "/b"]),
        Service.DefaultKeychain(replacement: nil), Service.DefaultKeychain(replacement: "/a"),
        Service.InstallProfile(file: Data("<plist/>".utf8)), Service.RemoveProfile(identifier: "com.example.profile"), Service.CopyProfiles(), Service.CopySecurityActivity(),
        Service.ServeSecretService(busAddress: "unix:path=/run/user/1000/bus"),
        Service.ImportKeyring(file: Data("GnomeKeyring\n\r\0\n".utf8), password: SecretBytes("pw".utf8)),
        Service.EnableSync(server: "https://sync.example.org"), Service.DisableSync(), Service.SyncNow(), Service.CopySyncStatus(),
        Service.StartSyncPairing(), Service.AwaitSyncPairing(nameplate: 42), Service.ApproveSyncPairing(nameplate: 42, approve: true),
        Service.JoinSync(server: "https://sync.example.org", code: "42-1234-5678"),
        Service.CopySyncHistory(account: "alice", service: "mail.example", withSecrets: true),
        Service.RemoveSyncDevice(device: "0b3c1f6e-4d2a-4b8e-9f1a-2c5d7e9a1b3c"), Service.CreateSyncRecoveryKey(),
        Service.RecoverSync(server: "https://sync.example.org", key: SecretBytes("ABCD-EFGH".utf8)),
    ]

    static func frame(_ request: some WireMessage, presence: SecretBytes? = nil) -> [UInt8] {
        ServiceWire.encode(request, presence: presence).bytes
    }

    static func decode(_ bytes: [UInt8]) throws -> (request: any WireMessage, presence: SecretBytes?) {
        var reader = ByteReader(Data(bytes))
        return try ServiceWire.decodeRequest(&reader)
    }

    @Test func everyRequestRoundTripsWithItsOwnCodec() throws {
        #expect(Set(Self.samples.map { ObjectIdentifier(type(of: $0)) }) == Set(ServiceCatalog.requests.map { ObjectIdentifier($0) }))
        for request in Self.samples {
            for presence in [nil, SecretBytes("1234".utf8)] {
                let encoded = Self.frame(request, presence: presence)
                let (decoded, decodedPresence) = try Self.decode(encoded)
                #expect(type(of: decoded) == type(of: request))
                #expect(Self.frame(decoded, presence: decodedPresence) == encoded)
                #expect(decodedPresence?.isEqual(to: SecretBytes("1234".utf8)) ?? (presence == nil))
            }
        }
    }

    @Test func opcodesAreUnique() {
        let opcodes = ServiceCatalog.catalog.requests.map(\.opcode)
        #expect(Set(opcodes).count == opcodes.count)
        #expect(Set(ServiceCatalog.requests.map { ObjectIdentifier($0) }).count == opcodes.count)
        for (opcode, type) in ServiceCatalog.catalog.requests {
            #expect(ServiceCatalog.catalog.opcode(of: type) == opcode)
        }
    }

    @Test func responsesRoundTrip() throws {
        let result: KeychainValue? = .array([.dictionary(Self.query)])
        var success = ByteReader(Data(ServiceWire.success(result).bytes))
        #expect(try ServiceWire.decodeResponse(&success, to: Service.CopyMatching.self) == result)
        let status = Service.KeychainStatus(lockState: .locked, hasPasscode: true, autoLockSeconds: 300, failedUnlocks: 2, memoryLocked: true, changeCount: 7, deviceKey: "TPM 2.0 (swtpm:path=/tmp/t/tpm.sock)")
        var statusReader = ByteReader(Data(ServiceWire.success(status).bytes))
        #expect(try ServiceWire.decodeResponse(&statusReader, to: Service.KeychainStatusRequest.self) == status)
        let profile = ProfileRecord(
            identifier: "com.example.corp", uuid: "U", displayName: "Corp", description: nil, organization: "Example", version: 1,
            removalDisallowed: true, verification: .unverified, signer: "Signer", encrypted: true,
            installationDate: Date(timeIntervalSince1970: 1_800_000_000),
            payloads: [ProfilePayloadRecord(type: "com.apple.dock", identifier: "d", uuid: "D", displayName: nil, supported: false, items: 0)])
        var profileReader = ByteReader(Data(ServiceWire.success(Service.ProfileList(profiles: [profile])).bytes))
        #expect(try ServiceWire.decodeResponse(&profileReader, to: Service.CopyProfiles.self).profiles == [profile])
        let report = Service.KeyringImportReport(label: "Login", imported: 3, updated: 1, unchanged: 2)
        var reportReader = ByteReader(Data(ServiceWire.success(report).bytes))
        #expect(try ServiceWire.decodeResponse(&reportReader, to: Service.ImportKeyring.self) == report)
        let failure = KeychainError(status: OSStatusCode.authNeeded, message: "needs you", details: .dictionary(["f": .number(1)]))
        var failed = ByteReader(Data(ServiceWire.failure(failure).bytes))
        do {
            _ = try ServiceWire.decodeResponse(&failed, to: Service.CopyMatching.self)
            Issue.record("a failure decoded as a success")
        } catch let error as KeychainError {
            #expect(error == .authNeeded && error.message == "needs you" && error.details == failure.details)
        }
    }

    @Test func everyTruncationIsRefused() {
        for request in [Self.frame(Service.Update(Self.query, attributes: ["labl": .string("x")])),
                        Self.frame(Service.CopyMatching(Self.query), presence: SecretBytes("1234".utf8))] {
            for length in 0..<request.count {
                #expect(throws: KeychainError.decode) { try Self.decode(Array(request.prefix(length))) }
            }
            #expect(throws: KeychainError.decode) { try Self.decode(request + [0]) }
        }
    }

    @Test func unknownVersionsAndOpcodesAreRefused() {
        var frame = Self.frame(Service.Lock())
        frame[1] = 255
        #expect(throws: KeychainError.decode) { try Self.decode(frame) }
        frame = Self.frame(Service.Lock())
        frame[0] = 1  // the first protocol, whose frames this one does not read
        #expect(throws: KeychainError.decode) { try Self.decode(frame) }
    }

    @Test func hostileValuesAreRefused() {
        let header: [UInt8] = [ServiceWire.version, ServiceCatalog.catalog.opcode(of: Service.Add.self), 0]
        // Nesting past the limit.
        var deep = KeychainValue.string("x")
        for _ in 0..<20 { deep = .array([deep]) }
        var out = ByteWriter()
        KeychainValue.dictionary(["k": deep]).encode(to: &out)
        #expect(throws: KeychainError.decode) { try Self.decode(header + out.bytes) }
        // A count far beyond the bytes that follow.
        var lying = ByteWriter()
        lying.append(7)
        lying.appendInteger(UInt32.max)
        #expect(throws: KeychainError.decode) { try Self.decode(header + lying.bytes) }
        // A query that is not a dictionary, and invalid UTF-8.
        var notDictionary = ByteWriter()
        KeychainValue.string("genp").encode(to: &notDictionary)
        #expect(throws: KeychainError.decode) { try Self.decode(header + notDictionary.bytes) }
        var badString = ByteWriter()
        badString.append(1)
        badString.appendLengthPrefixed(Data([0xFF, 0xFE]))
        #expect(throws: KeychainError.decode) { try Self.decode(header + badString.bytes) }
        // A presence byte that is neither 0 nor 1 is a secret of whatever length follows: refused.
        #expect(throws: KeychainError.decode) { try Self.decode([ServiceWire.version, ServiceCatalog.catalog.opcode(of: Service.Lock.self), 1, 0xFF, 0xFF, 0xFF, 0xFF]) }
    }
}
