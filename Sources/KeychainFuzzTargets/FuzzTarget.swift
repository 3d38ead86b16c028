public import FoundationEssentials
import EnclaveProtocol
import KeychainCertificates
import KeychainCrypto
import KeychainKeys
import KeychainModel
import KeychainPKCS12
import KeychainProfiles
import KeychainProtocol
import KeyringFiles
import SyncCrypto
import SyncEngine
import SyncJoin
import SyncProtocol
import SyncTransport
import Crypto

/// The decoders that read bytes an attacker chooses, as fuzz targets: libFuzzer drives
/// them in `Fuzz/` (scripts/fuzz), and the test suite replays the committed corpus
/// (`Fuzz/Corpus/<target>/`) through the same entry points.
///
/// A target returns for every input; it must never crash, hang or exhaust memory.
public enum FuzzTarget: String, CaseIterable, Sendable {
    /// A request frame as securityd reads it from a client, and as the enclave reads one
    /// from the daemon; the sync agent's frames, as securityd reads one from the agent (the
    /// process that reads the network) and the agent one from securityd.
    case frame
    /// A query: a wire-encoded value, then SecItem parsing for every operation.
    case query
    /// An attribute blob's plaintext, as the store decodes it after decryption.
    case blob
    /// A DER certificate, as `SecCertificate` and certificate items read it.
    case certificate
    /// A key's external representation, as `SecKeyCreateWithData` reads it.
    case key
    /// A PKCS#12 file, as securityd opens it for `SecPKCS12Import` (password "fuzz"), and
    /// the key and certificates it yields, as the client reads them.
    case pkcs12
    /// A file keychain's header, as securityd reads it from a file a client names, and
    /// opened with the password "fuzz" where its parameters are cheap enough for a fuzzer.
    case keychainHeader
    /// A configuration profile file, as securityd reads it for `security profiles install`:
    /// a property list (XML or binary) or CMS SignedData around one, every payload it
    /// carries (certificates, PKCS#12 with its Password, Wi-Fi, VPN, preferences), and the
    /// input as EnvelopedData opened with the certificate seed's key.
    case profile
    /// A gnome-keyring keyring file (version 0 or 1), as securityd reads it for
    /// `security import-keyring`, with the password "fuzz" and at most 4,096 key-derivation
    /// iterations (libsecret's 100,000 are too slow for a fuzzer's loop: version 1 inputs are
    /// read up to the key derivation).
    case keyring
    /// A JSON body of the sync server's API: what trousseau-syncd reads from a device
    /// (account and device registration, a batch, a membership entry) and what a device
    /// reads from a server it does not trust (a feed page, a refused batch, the chain).
    case syncMessage
    /// A sync record's body as a device reads it from the server: the envelope's fields,
    /// then opened with the seed's keys (a mutated seed reaches the signature check, the
    /// unwrapping and the padding); and an item record's plaintext as the engine reads it
    /// once opened, then merged with the seed item.
    case syncRecord
    /// The device circle's bytes as a device reads them from the server or a joining peer: a
    /// membership entry (decoded, then checked as a genesis and as the seed chain's next
    /// entry), a key share (decoded, then opened with the seed device's key), a join
    /// message, and a join request and welcome as the exchange's channel opens them; and the
    /// sync keys' blobs (identity, zone or class key) as the enclave reads them from securityd.
    case syncMembership

    /// Runs the decoder over `input`; errors are expected, crashes are bugs.
    public func run(_ input: Data) {
        switch self {
        case .frame:
            var service = ByteReader(input)
            _ = try? ServiceWire.decodeRequest(&service)
            var enclave = ByteReader(input)
            _ = try? EnclaveWire.decodeRequest(&enclave)
            var event = ByteReader(input)
            _ = try? SyncAgentWire.decodeEvent(&event)
            var agentRequest = ByteReader(input)
            _ = try? SyncAgentWire.decodeRequest(&agentRequest)
        case .query:
            var reader = ByteReader(input)
            guard case .dictionary(let dictionary)? = try? KeychainValue.decode(from: &reader) else { return }
            for operation in [ItemOperation.add, .copyMatching, .update, .delete] {
                _ = try? ItemQuery(dictionary, for: operation)
            }
        case .blob:
            _ = try? AttributeCodec.decode(input)
        case .certificate:
            guard let fields = try? CertificateFields(der: Array(input)) else { return }
            _ = (fields.subjectSummary, fields.itemAttributes, fields.emailAddresses, fields.commonNames)
        case .key:
            for type in [AsymmetricKey.KeyType.rsa, .ellipticCurve] {
                for keyClass in [AsymmetricKey.KeyClass.public, .private] {
                    _ = (try? AsymmetricKey(externalRepresentation: input, type: type, keyClass: keyClass))?.attributes
                }
            }
        case .pkcs12:
            for password in ["fuzz", ""] {
                let request = Service.DecodePKCS12(file: input, passphrase: SecretBytes(Array(password.utf8)))
                guard let contents = try? PKCS12Codec.decode(request) else { continue }
                if let key = contents.privateKey { _ = key.withUnsafeBytes { try? AsymmetricKey(pkcs8: Data($0)) } }
                for certificate in [contents.certificate].compactMap({ $0 }) + contents.otherCertificates {
                    _ = (try? CertificateFields(der: Array(certificate)))?.itemAttributes
                }
            }
        case .keychainHeader:
            guard let header = try? FileKeychainHeader(decoding: input) else { return }
            // open(password:) bounds the work at 2 GiB of scrypt, too slow for a fuzzer's loop.
            guard header.kdf.totalMemoryBytes <= 1 << 21 else { return }
            _ = try? header.open(password: SecretBytes("fuzz".utf8))
        case .profile:
            if let profile = try? ConfigurationProfile(file: input) {
                var opened = profile
                if let message = profile.encryptedPayloads {
                    try? opened.openPayloads { _ throws(KeychainError) in try Self.openSeedEnvelope(message) }
                }
                _ = try? ProfileInstallation(opened)
            }
            _ = try? Self.openSeedEnvelope(input)
        case .keyring:
            _ = try? GnomeKeyringFile.read(input, password: SecretBytes("fuzz".utf8), iterationLimit: 4_096)
        case .syncMessage:
            let decoder = JSONDecoder()
            _ = try? decoder.decode(RegisterAccountRequest.self, from: input)
            _ = try? decoder.decode(RegisterDeviceRequest.self, from: input)
            _ = try? decoder.decode(BatchRequest.self, from: input)
            _ = try? decoder.decode(BatchResponse.self, from: input)
            _ = try? decoder.decode(BatchConflict.self, from: input)
            _ = try? decoder.decode(ChangesResponse.self, from: input)
            _ = try? decoder.decode(MembershipEntry.self, from: input)
            _ = try? decoder.decode(MembershipResponse.self, from: input)
            _ = try? decoder.decode(SyncErrorBody.self, from: input)
            _ = try? decoder.decode(ChangeHint.self, from: input)
            _ = try? decoder.decode(PairingOpened.self, from: input)
            _ = try? decoder.decode(PairingClaim.self, from: input)
            _ = try? decoder.decode(PairingClaimed.self, from: input)
            _ = try? decoder.decode(PairingPost.self, from: input)
            _ = try? decoder.decode(PairingMessages.self, from: input)
        case .syncRecord:
            if let payload = try? SyncItemPayload(decoding: SecretBytes(input)) {
                let seed = SyncSeed.item
                _ = ItemMerge.merge(base: seed, local: seed, remote: payload)
                _ = ItemMerge.merge(base: nil, local: payload, remote: SyncItemPayload.tombstone(of: seed, seed.itemClass, seed.latestEdit!))
            }
            _ = try? SyncHead(decoding: SecretBytes(input))
            _ = try? SyncKeyPointer(decoding: SecretBytes(input))
            guard let envelope = try? SyncRecordEnvelope(decoding: input) else { return }
            let keys = SyncSeed.make()
            _ = try? envelope.open(context: SyncSeed.context, parentKey: { _ in keys.classKey }, writerKey: { _ in keys.signing.publicKey })
        case .syncMembership:
            let device = SyncSeed.device
            if let record = try? MembershipRecord(decoding: input) {
                _ = try? MembershipState(genesis: record)
                if var state = try? MembershipState(genesis: MembershipRecord.genesis(account: SyncSeed.account, founder: device)) {
                    try? state.append(record)
                }
            }
            if let share = try? SyncKeyShare(decoding: input) {
                _ = try? share.open(context: SyncSeed.shareContext, recipient: device, senderKey: { _ in device.signing.publicKey })
            }
            if let genesis = try? MembershipRecord.genesis(account: SyncSeed.account, founder: device) {
                try? SyncRecovery.check(attestation: input, of: device.publicKeys, in: [genesis, genesis])
            }
            _ = try? JoinMessage(decoding: input)
            _ = try? JoinRequest(decoding: input)
            _ = try? JoinWelcome(decoding: input)
            _ = try? SyncIdentityBlob(data: input)
            _ = try? SyncKeyBlob(data: input)
        }
    }

    /// A self-signed P-256 certificate with a SubjectAltName and a PrintableString name,
    /// made by Python's `cryptography` (Tests/SecurityAPITests/Fixtures), and its key.
    /// Computed, not stored: LeakSanitizer does not see a static `Data`'s storage as
    /// reachable, and the `profile` target reads them on every input.
    static var certificateSeed: Data { Data(base64Encoded: "MIIB6jCCAZGgAwIBAgIIASNFZ4mrze8wCgYIKoZIzj0EAwIwUzESMBAGA1UEAwwJVGVzdCBMZWFmMRwwGgYDVQQKExMgIE1peGVkICAgY2FzZSBPcmcgMR8wHQYJKoZIhvcNAQkBFhBsZWFmQGV4YW1wbGUuY29tMB4XDTI2MDEwMjAzMDQwNVoXDTI2MDIwMTAzMDQwNVowUzESMBAGA1UEAwwJVGVzdCBMZWFmMRwwGgYDVQQKExMgIE1peGVkICAgY2FzZSBPcmcgMR8wHQYJKoZIhvcNAQkBFhBsZWFmQGV4YW1wbGUuY29tMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEdBrJ6AlknDdnI7Kkm0uEFQZkeLis3GIy1BLHm504aOV+7FctzYTGIGlGRhsl9e2oYJl0FuGW+fk7BmmPT+B6tqNPME0wLAYDVR0RBCUwI4IQbGVhZi5leGFtcGxlLmNvbYEPYWx0QGV4YW1wbGUuY29tMB0GA1UdDgQWBBTvg58KEGcto6ds6ejCs2H8mG1URTAKBggqhkjOPQQDAgNHADBEAiBIgH1cao5oIctjTBzzCoOwejH/ZQyH77yXW2LINuTzwAIgBYqDVjS7IfL0XCr/B77gTNPRW3q9Pe7uPQ0nwFDR0oo=")! }
    static var keySeed: Data { Data(base64Encoded: "BHQayegJZJw3ZyOypJtLhBUGZHi4rNxiMtQSx5udOGjlfuxXLc2ExiBpRkYbJfXtqGCZdBbhlvn5OwZpj0/gerY6oQnjzuxcm2iDDq2hyNiTh2lJXUGeQ89vdkcnhfBphA==")! }

    /// That certificate and key in PKCS#12 files made by `openssl pkcs12 -export -passout
    /// pass:fuzz -iter 1`, with `-nomaciter` and with `-nomac` (so that changed bytes reach
    /// the decryption and the parser, not only the MAC).
    static let pkcs12Seeds = [
        Data(base64Encoded: "MIIEdgIBAzCCBDAGCSqGSIb3DQEHAaCCBCEEggQdMIIEGTCCAtEGCSqGSIb3DQEHBqCCAsIwggK+AgEAMIICtwYJKoZIhvcNAQcBMFYGCSqGSIb3DQEFDTBJMCgGCSqGSIb3DQEFDDAbBAhc32JrEh26mQIBATAMBggqhkiG9w0CCQUAMB0GCWCGSAFlAwQBKgQQSrp7wK/yVyySpb3sCncAvYCCAlDJ3UOyHKuRhNF5gwiMsTFHj+lxYXVmc3LOha2wtZwQOPvNfhrAXbW/dXQuwbuluCaQqSG3DMDJacRkJxxfxisNw23bsjaZKk/akCOcOnV30TBdJ4y8HDVgbcKm8rEdzwDN5L8mZ7NY14/LsdTDTutgG7RqbUv2poqkzOvitu5SHbyZ9A0z5N9FcJLRmZ2PEvzolYpPOx+I1D0eIXjLJT/qKBuFc2D+IndGHoiQZ0NX0a/kC3J+a2qMCr8QF8NnhFe0HDBAXVPgdjEPuc4J3wrGEGkyHe2ROyjKc8RinVZETcFuSwx/070ZaGVZsVi3QyQku7qNpjZW6xD/CUBGO0/NbP2ZDItE8fKOOoAC0+1PchV4lPuLDTpqdOyHLZD6+2M2MMLt8hY/GsCdvBMXLd+8pWJ/5sZqatdUe6Hsa2pP8TI6x3lu5/NNM6buPqljHsLHXjUfH9oIAAXqldQq/CYFkZMRNTIPTcaNA7Eu9CmaOAQL5DZAFWAGGsP29Zm5WxGvqIdQMPOKZO5Gmt+AEVCSuDA+RG7OhcsCJqJLa2Yws3aZ1uiTeM37y2c+AdMtMRbo8WC3dt0mYa6+7pGylg9riIqJPs/NiZOfPBJug3wYgkh8Z+pFbXjrlY1B5WEdL4QBDcz9nU25DQMpYP1ahS0dr+n8HRYnZTMabE33GtTmt3UoLnn3pmcPrTuj9Edj+TGLZHQYxKaoeD97u+uK+fNLD6XJpgLv8Joqci90d1aHcplsagRZUg/FZiD0knuM9/jEpEpIcIZ0szgJohXiKQwLMIIBQAYJKoZIhvcNAQcBoIIBMQSCAS0wggEpMIIBJQYLKoZIhvcNAQwKAQKgge4wgeswVgYJKoZIhvcNAQUNMEkwKAYJKoZIhvcNAQUMMBsECFLsto7B4odXAgEBMAwGCCqGSIb3DQIJBQAwHQYJYIZIAWUDBAEqBBCin+BkSCensAOxWkNd5pE7BIGQ/aZDS/pBOj/fQ4ZUCqYHsFSdjZ7c/vw87Sa7nmLF3JIKLIpI7wlYgee6/p32X17c9dcnVQ0HLaSWBVDahjfQHGnK4V/oiMj4y66gl8ZtFcTjrR2plsFgDuYl8VcDYsGZdn/lTv7f2RkQ0E/PllVlAirfngPau7PPnqX4ZbLKYrCwyMg2NRmCkCJidw9Pv9yWMSUwIwYJKoZIhvcNAQkVMRYEFF4PLIy/U0ccKF87TEqWsQk5wSzlMD0wMTANBglghkgBZQMEAgEFAAQg2cBXNCch8fe2JGwUaQS/ReSJwMSxsd/78bfrk5gnClwECG9Qacz9vkI/")!,
        Data(base64Encoded: "MIIDvwIBAzCCA7gGCSqGSIb3DQEHAaCCA6kEggOlMIIDoTCCAlkGCSqGSIb3DQEHAaCCAkoEggJGMIICQjCCAj4GCyqGSIb3DQEMCgEDoIICBjCCAgIGCiqGSIb3DQEJFgGgggHyBIIB7jCCAeowggGRoAMCAQICCAEjRWeJq83vMAoGCCqGSM49BAMCMFMxEjAQBgNVBAMMCVRlc3QgTGVhZjEcMBoGA1UEChMTICBNaXhlZCAgIGNhc2UgT3JnIDEfMB0GCSqGSIb3DQEJARYQbGVhZkBleGFtcGxlLmNvbTAeFw0yNjAxMDIwMzA0MDVaFw0yNjAyMDEwMzA0MDVaMFMxEjAQBgNVBAMMCVRlc3QgTGVhZjEcMBoGA1UEChMTICBNaXhlZCAgIGNhc2UgT3JnIDEfMB0GCSqGSIb3DQEJARYQbGVhZkBleGFtcGxlLmNvbTBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABHQayegJZJw3ZyOypJtLhBUGZHi4rNxiMtQSx5udOGjlfuxXLc2ExiBpRkYbJfXtqGCZdBbhlvn5OwZpj0/gerajTzBNMCwGA1UdEQQlMCOCEGxlYWYuZXhhbXBsZS5jb22BD2FsdEBleGFtcGxlLmNvbTAdBgNVHQ4EFgQU74OfChBnLaOnbOnowrNh/JhtVEUwCgYIKoZIzj0EAwIDRwAwRAIgSIB9XGqOaCHLY0wc8wqDsHox/2UMh++8l1tiyDbk88ACIAWKg1Y0uyHy9Fwq/we+4EzT0Vt6vT3u7j0NJ8BQ0dKKMSUwIwYJKoZIhvcNAQkVMRYEFF4PLIy/U0ccKF87TEqWsQk5wSzlMIIBQAYJKoZIhvcNAQcBoIIBMQSCAS0wggEpMIIBJQYLKoZIhvcNAQwKAQKgge4wgeswVgYJKoZIhvcNAQUNMEkwKAYJKoZIhvcNAQUMMBsECHxkc92Z1wXgAgEBMAwGCCqGSIb3DQIJBQAwHQYJYIZIAWUDBAEqBBBDgOBuXx3wjNGQ+Igp3+8PBIGQXWrZo6kgf8usI1lvB/Vu+za+OwlM83JDCkEM1bIXZvlqVTdQGw6lU0fLBslDpkSi9zkrEtHWzalbxKvq2x4zx0NU3hGAHFqTBZ2AWjQeoQ+zaJF+hUgr33rJXr+Z/U0D4AmReBgsnwGZrMZ2zBzt+7DNj4ZkebSPoj1DjusingW+RKUbB5WhiufCSrtRS7NqMSUwIwYJKoZIhvcNAQkVMRYEFF4PLIy/U0ccKF87TEqWsQk5wSzl")!,
    ]

    /// EnvelopedData opened with the certificate seed and its key, when the seed is a
    /// recipient, as securityd opens it (the encrypted seeds of `Fuzz/Corpus/profile` are made
    /// for it).
    static func openSeedEnvelope(_ message: Data) throws(KeychainError) -> SecretBytes {
        guard CMSMessage.isRecipient(certificateSeed, of: message) else { throw KeychainError.decode("not for the seed") }
        let key = try AsymmetricKey(externalRepresentation: keySeed, type: .ellipticCurve, keyClass: .private)
        return try CMSMessage.decrypt(message, key: SecretBytes(key.pkcs8Representation ?? Data()), certificate: certificateSeed)
    }

    /// Valid inputs to start from: encodings of typical requests, queries and attributes.
    public static func seeds(for target: FuzzTarget) -> [Data] {
        let item: [String: KeychainValue] = [
            "class": .string("genp"), "acct": .string("alice"), "svce": .string("example.com"),
            "labl": .string("Example"), "v_Data": .data(Data("secret".utf8)), "pdmn": .string("ak"),
        ]
        let internet: [String: KeychainValue] = [
            "class": .string("inet"), "acct": .string("octocat"), "srvr": .string("github.com"), "ptcl": .string("htps"),
            "port": .number(443), "r_Attributes": .bool(true), "m_Limit": .string("m_LimitAll"),
        ]
        let search: [String: KeychainValue] = [
            "class": .string("genp"), "svce": .string("example.com"), "r_Data": .bool(true), "r_Attributes": .bool(true),
            "r_PersistentRef": .bool(true), "m_Limit": .number(2), "agrp": .string("ABCDE12345.shared"),
        ]
        switch target {
        case .frame:
            return [
                ServiceWire.encode(Service.Add(item)), ServiceWire.encode(Service.CopyMatching(search)),
                ServiceWire.encode(Service.Update(search, attributes: ["labl": .string("new")])),
                ServiceWire.encode(Service.Delete(internet), presence: SecretBytes("1234".utf8)),
                ServiceWire.encode(Service.Lock()), ServiceWire.encode(Service.Unlock(passcode: SecretBytes("1234".utf8))),
                EnclaveWire.encode(EnclaveCall.Status()), EnclaveWire.encode(EnclaveCall.MetadataKey(.whenUnlocked)),
                ServiceWire.encode(
                    Service.EvaluateTrust(
                        certificates: [certificateSeed], policies: [.ssl(server: true, hostname: "leaf.example.com")], anchors: [certificateSeed],
                        trustsSystemRoots: false, verifyDate: Date(timeIntervalSinceReferenceDate: 800_000_000))),
                ServiceWire.encode(Service.DecodePKCS12(file: pkcs12Seeds[0], passphrase: SecretBytes("fuzz".utf8))),
                SyncAgentWire.encode(.exchange(7, SyncHTTPRequest(
                    method: "POST", url: "http://127.0.0.1:8080/v1/zones/keychain/batch", authorization: SecretBytes("Bearer AAAA".utf8), body: Data("{}".utf8)))),
                SyncAgentWire.encode(.answered(7, SyncHTTPResponse(status: 200, body: Data(#"{"seqs":[1]}"#.utf8)))),
                SyncAgentWire.encode(.failed(8, KeychainError(status: .notAvailable, message: "the sync server cannot be reached"))),
                SyncAgentWire.encode(.hint(ChangeHint(zone: SyncIdentifier("keychain")!, seq: 4))),
            ].map { Data($0.bytes) }
        case .query:
            return [item, internet, search].map { query in
                var out = Data()
                KeychainValue.dictionary(query).encode(to: &out)
                return out
            }
        case .certificate:
            return [certificateSeed]
        case .key:
            return [keySeed, keySeed.prefix(65)]
        case .pkcs12:
            return pkcs12Seeds
        case .keychainHeader:
            // N = 2^10: a seed whose mutations still reach the unwrapping.
            let made = try? FileKeychainHeader.create(password: SecretBytes("fuzz".utf8), kdf: PasscodeKDF(logN: 10, salt: Data(repeating: 1, count: 32)))
            return made.map { [$0.0.encoded] } ?? []
        case .profile:
            // Committed files made by plistlib and openssl (XML, binary, signed, encrypted).
            return []
        case .keyring:
            // Committed files written by gnome-keyring-daemon (version 0) and libsecret's file backend (version 1).
            return []
        case .syncRecord:
            let keys = SyncSeed.make()
            let envelopes = [Data(), Data("a password".utf8), Data(repeating: 7, count: 2000)].compactMap { plaintext in
                try? SyncRecordEnvelope.seal(
                    SecretBytes(plaintext), context: SyncSeed.context, parent: (SyncIdentifier("class-a")!, keys.classKey),
                    writer: SyncIdentifier("device")!, signingKey: keys.signing
                ).encoded
            }
            let item = SyncSeed.item
            let deleted = SyncItemPayload.tombstone(of: item, item.itemClass, .init(clock: HybridLogicalClock(rawValue: 2 << 16), writer: "other"))
            let head = SyncHead(
                device: SyncIdentifier("device")!, zone: SyncSeed.context.zone, seq: 42, root: Data(repeating: 3, count: 32),
                membership: MembershipPin(length: 2, head: Data(repeating: 4, count: 32)), written: 1_800_000_000)
            let pointer = SyncKeyPointer(
                zone: SyncSeed.context.zone, zoneKey: SyncIdentifier("zone-key")!, classA: SyncIdentifier("class-a")!, classC: SyncIdentifier("class-c")!,
                epoch: 3)
            return envelopes + [item.encoded, deleted.encoded, head.encoded, pointer.encoded].map { $0.withUnsafeBytes { Data($0) } }
        case .syncMembership:
            let device = SyncSeed.device
            guard let genesis = try? MembershipRecord.genesis(account: SyncSeed.account, founder: device),
                let state = try? MembershipState(genesis: genesis),
                let other = try? SyncDeviceKeys(device: SyncIdentifier("other")!, seeds: SecretBytes(Data(repeating: 0x31, count: 64))),
                let add = try? state.sign(.add(other.publicKeys), by: device),
                let remove = try? state.sign(.remove(device.device), by: device),
                let attestation = try? SyncRecovery.attestation(of: add, member: device.publicKeys).signed(with: device.signing),
                let share = try? SyncKeyShare.seal(SyncSeed.make().classKey, keyID: SyncIdentifier("zone-key")!, context: SyncSeed.shareContext, to: device.publicKeys, from: device)
            else { return [] }
            let join = JoinMessage(kind: .share, share: Data(repeating: 1, count: 32), associatedData: Data("new device d".utf8), confirmation: Data(repeating: 2, count: 64))
            return [genesis.encoded, add.encoded, remove.encoded, share.encoded, join.encoded,
                    JoinRequest(keys: other.publicKeys, credential: Data(count: 32)).encoded, JoinWelcome(account: SyncSeed.account, pin: state.pin).encoded, attestation.encoded]
        case .syncMessage:
            let record = SyncRecord(record: SyncIdentifier("r1")!, type: 1, version: 2, tombstone: true, body: Data([0, 1, 0xff]), seq: 7)
            let encoder = JSONEncoder()
            encoder.outputFormatting = .sortedKeys
            return [
                try? encoder.encode(RegisterAccountRequest(account: SyncIdentifier("acct")!, device: SyncIdentifier("dev")!, token: Data(count: 32))),
                try? encoder.encode(BatchRequest(writes: [record])),
                try? encoder.encode(ChangesResponse(records: [record], high: 7, more: true)),
                try? encoder.encode(BatchConflict(conflicts: [.init(record: SyncIdentifier("r1")!, serverVersion: 3)])),
                try? encoder.encode(MembershipResponse(entries: [MembershipEntry(index: 0, entry: Data("genesis".utf8))])),
                try? encoder.encode(ChangeHint(zone: SyncIdentifier("z1")!, seq: 4)),
                try? encoder.encode(PairingMessages(messages: [PairingMessage(index: 0, body: Data("{}".utf8))])),
            ].compactMap { $0 }
        case .blob:
            return [item, internet, ["cdat": .date(Date(timeIntervalSince1970: 1_800_000_000)), "gena": .data(Data([0, 255]))]]
                .map { AttributeCodec.encode($0.filter { $0.key != "class" && $0.key != "v_Data" }) }
        }
    }
}

/// Fixed keys for the sync record target, so that seeds open and mutations reach the checks.
enum SyncSeed {
    /// An item record's plaintext: a generic password with a secret.
    static let item: SyncItemPayload = {
        let stamp = SyncItemPayload.Stamp(clock: HybridLogicalClock(rawValue: 1 << 16), writer: "device")
        let fields: [String: SyncItemPayload.Field] = [
            "agrp": .init(.string("com.example.app"), stamp), "pdmn": .init(.string("ak"), stamp), "acct": .init(.string("alice"), stamp),
            "svce": .init(.string("example.com"), stamp), "labl": .init(.string("Example"), stamp), "icmt": .init(nil, stamp),
            "cdat": .init(.date(Date(timeIntervalSinceReferenceDate: 800_000_000)), stamp), "gena": .init(.data(Data([0, 1])), stamp),
        ]
        return SyncItemPayload(itemClass: .genericPassword, fields: fields, secret: .init(SecretBytes("a password".utf8), stamp))
    }()

    static let context = SyncRecordContext(zone: SyncIdentifier("zone")!, record: SyncIdentifier("record")!, version: 1, type: .item)
    static let shareContext = SyncRecordContext(zone: SyncIdentifier("zone")!, record: SyncIdentifier("share")!, version: 1, type: .keyShare)
    static let account = SyncIdentifier("account")!

    /// A device whose keys come from fixed seeds (the seed chain's founder).
    static var device: SyncDeviceKeys {
        try! SyncDeviceKeys(device: SyncIdentifier("device")!, seeds: SecretBytes(Data(repeating: 0x24, count: 64)))  // 64 bytes: cannot fail
    }

    static func make() -> (classKey: SymmetricKey, signing: Curve25519.Signing.PrivateKey) {
        (SymmetricKey(data: Data(repeating: 0x42, count: 32)),
         try! Curve25519.Signing.PrivateKey(rawRepresentation: Data(repeating: 0x24, count: 32)))  // 32 bytes: cannot fail
    }
}
