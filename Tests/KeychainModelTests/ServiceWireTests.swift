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

    /// The bytes of every sample request, as shipped clients send them: a change to a
    /// message's properties, their order or their codec shows here (a daemon of this version
    /// must read what an older `security` or library wrote).
    @Test func requestsEncodeAsShippedClientsSendThem() {
        let fingerprints = Self.samples.map { WireFingerprint.of(Self.frame($0)) }
        for (index, (now, shipped)) in zip(fingerprints, Self.shippedRequestFingerprints).enumerated() {
            #expect(now == shipped, "\(type(of: Self.samples[index])) (sample \(index)) encodes differently")
        }
        #expect(fingerprints.count == Self.shippedRequestFingerprints.count)
    }

    /// The same for the responses a client decodes.
    @Test func responsesEncodeAsShippedClientsReadThem() {
        let fingerprints = Self.sampleResponses.map { WireFingerprint.of(ServiceWire.success($0).bytes) }
        #expect(fingerprints == Self.shippedResponseFingerprints)
    }

    static let sampleResponses: [any WireCodable] = [
        Service.KeychainStatus(lockState: .locked, hasPasscode: true, autoLockSeconds: 300, failedUnlocks: 2, memoryLocked: true, changeCount: 7, deviceKey: "TPM 2.0 (swtpm:path=/tmp/t/tpm.sock)"),
        Service.KeyringImportReport(label: "Login", imported: 3, updated: 1, unchanged: 2),
        Service.ProfileList(profiles: [ProfileRecord(
            identifier: "com.example.corp", uuid: "U", displayName: "Corp", description: nil, organization: "Example", version: 1,
            removalDisallowed: true, verification: .unverified, signer: "Signer", encrypted: true,
            installationDate: Date(timeIntervalSince1970: 1_800_000_000),
            payloads: [ProfilePayloadRecord(type: "com.apple.dock", identifier: "d", uuid: "D", displayName: nil, supported: false, items: 0)])]),
    ]

    static let shippedRequestFingerprints: [String] = [
        "ee38f896eb375133/144", "b791efcc104c5306/144", "97b8c8b7de1c1d88/163", "e4a49f60a1506158/144",
        "e20af11871088158/3", "e9e8ab14b42fbef5/11", "e21f55187119d44e/3", "224b525d42365f93/10",
        "89aa99cce29f6803/8", "2103c58f826f7fea/13", "ea84efa43b61fde6/100", "8939e500d7d2864f/40",
        "568d70c2cfc52373/23", "e277b1187164e678/3", "81f14ca13d363e5a/19", "e082e4809552ef6f/19",
        "e255b518714806de/3", "f30ed3576bf9980e/30", "4839808bc0b4586c/23", "2168f3e065ff26cf/102",
        "476b711820c6e508/16", "601ec8c69ac7e98c/31", "784773339452fba/13", "29eabb345ba55889/65",
        "e2a81666504825ce/10", "54214189505b7559/4", "f9c5db5a597490d0/40", "6cb70fd1d3d4dab9/95",
        "aba248d6c7e6150/36", "60ad906c5297062/25", "47cf22cea0fc8482/31", "9590ad88e46b8f41/4",
        "fd4450012ac04ee5/26", "26fe7c51f41cb037/25", "dfce3e2dac79194a/30", "c9998e14c8fff244/35",
        "b8369988f80b89ed/4", "95e2f77595966789/20", "9e3a2888e9538dec/4", "238625a105e05afd/10",
        "dc0fc9bac2679ad8/15", "4fb0bf675b7a7c4f/26", "e2b84318719bc283/3", "e357fd187223770a/3",
        "6f970673df9220a3/35", "b323311a265b4514/29", "ea0453032d52064a/31", "e2c5db1871a74f27/3",
        "e2bba918719ea5ac/3", "e2bf0f1871a188d5/3", "e33ccd18720c5dc2/3", "4fd0cb28e6207879/11",
        "2e4bea96a5dc23bd/12", "ecf67850c3f2bc69/47", "35d7b1b1c75ccf1b/29", "70706fbf829e48f5/43",
        "e343991872122414/3", "af05fda595bdbfe1/44",
    ]
    static let shippedResponseFingerprints: [String] = [
        "9d354143026f4e9a/64", "3e97221305a76e0e/26", "9c2a922ce9cf3438/122",
    ]

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

/// FNV-1a (64 bits) of a frame: enough to see that its bytes changed, and short.
enum WireFingerprint {
    static func of(_ bytes: [UInt8]) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        return String(hash, radix: 16) + "/\(bytes.count)"
    }
}
