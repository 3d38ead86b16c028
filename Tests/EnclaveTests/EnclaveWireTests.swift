import Dispatch
import Enclave
import EnclaveBackend
import EnclaveProtocol
import FoundationEssentials
import Glibc
import KeychainCrypto
import KeychainModel
import KeychainSystem
import SyncCrypto
import SyncProtocol
import Testing

@Suite struct EnclaveWireTests {
    /// One instance of every request of the catalog (a test below checks none is missing).
    static let samples: [any EnclaveRequest] = [
        EnclaveCall.Status(), EnclaveCall.Lock(), EnclaveCall.IndexKey(), EnclaveCall.MetadataKey(.whenPasscodeSetThisDeviceOnly),
        EnclaveCall.Unlock(passcode: SecretBytes("1234".utf8)),
        EnclaveCall.ChangePasscode(old: SecretBytes("o".utf8), new: nil),
        EnclaveCall.UpdateSettings(autoLockSeconds: 300, eraseAfterFailures: nil),
        EnclaveCall.MigrateToTPM(tcti: "swtpm:path=/tmp/t/tpm.sock", passcode: SecretBytes("1234".utf8)),
        EnclaveCall.WrapItemKey(.afterFirstUnlock, ItemKey.generate(), associatedData: Data("ad".utf8), access: nil, context: Data(count: 16)),
        EnclaveCall.UnwrapItemKey(.always, wrapped: Data(count: 60), associatedData: Data(), access: nil, context: nil),
        EnclaveCall.Authenticate(AuthenticationRequest(context: Data(count: 16), evidence: .passcode(SecretBytes("1".utf8)))),
        EnclaveCall.InvalidateAuthentication(context: Data(count: 16)), EnclaveCall.AuthenticationCapabilities(),
        EnclaveCall.BeginBackup(password: SecretBytes("pw".utf8), passcode: nil),
        EnclaveCall.BackupMetadataKey(session: Data(count: 16), .afterFirstUnlock),
        EnclaveCall.ExportSecret(session: Data(count: 16), .always, blob: Data(count: 40), rowAssociatedData: Data([1]), recordAssociatedData: Data([2])),
        EnclaveCall.ImportSecret(session: Data(count: 16), .always, blob: Data(count: 40), recordAssociatedData: Data([2]), rowAssociatedData: Data([1])),
        EnclaveCall.EndBackup(session: Data(count: 16)),
        EnclaveCall.CreateEscrow(passcode: nil), EnclaveCall.UnlockWithEscrow(id: Data(count: 16), secret: SecretBytes([1])),
        EnclaveCall.RevokeEscrow(id: Data(count: 16)),
        EnclaveCall.CreateEnclaveKey(protection: .whenUnlockedThisDeviceOnly, access: nil, context: Data(count: 16)),
        EnclaveCall.UseEnclaveKey(blob: Data(count: 90), operation: .sign(algorithm: "algid:sign:ECDSA:message-X962:SHA256", data: Data([1])), context: nil),
        EnclaveCall.UseEnclaveKey(
            blob: Data(count: 90), operation: .keyExchange(algorithm: "algid:keyexchange:ECDH:standard", publicKey: Data(count: 65), requestedSize: 16, sharedInfo: Data([2])),
            context: Data(count: 16)),
        EnclaveCall.CreateFileKeychain(password: SecretBytes("pw".utf8), autoLockSeconds: 300),
        EnclaveCall.UnlockFileKeychain(header: sampleHeader, password: SecretBytes("pw".utf8), autoLockSeconds: 0),
        EnclaveCall.LockFileKeychain(nil), EnclaveCall.LockFileKeychain(UUID()),
        EnclaveCall.FileKeychainUnlocked(UUID()), EnclaveCall.SetFileKeychainTimeout(UUID(), autoLockSeconds: 60),
        EnclaveCall.ChangeFileKeychainPassword(header: sampleHeader, old: SecretBytes("a".utf8), new: SecretBytes("b".utf8)),
        EnclaveCall.IndexKey(keychain: UUID()), EnclaveCall.MetadataKey(.always, keychain: UUID()),
        EnclaveCall.UnwrapItemKey(.always, wrapped: Data(count: 60), associatedData: Data(), access: nil, context: nil, keychain: UUID()),
        EnclaveCall.CreateSyncIdentity(device: SyncIdentifier("dev1")!), EnclaveCall.SignMembershipRecord(identity: Data(count: 9), record: Data(count: 99)),
        EnclaveCall.CreateSyncKey(role: .classA),
        EnclaveCall.SealSyncRecord(identity: Data([1]), parent: Data([2]), context: sampleContext, plaintext: SecretBytes("s".utf8)),
        EnclaveCall.OpenSyncRecord(envelope: Data(count: 200), parent: Data([2]), context: sampleContext, writer: SyncIdentifier("dev1")!, writerKey: Data(count: 32)),
        EnclaveCall.SealSyncKey(identity: Data([1]), key: Data([3]), parent: Data([2]), context: sampleContext),
        EnclaveCall.OpenSyncKey(envelope: Data(count: 200), parent: Data([2]), context: sampleContext, writer: SyncIdentifier("dev1")!, writerKey: Data(count: 32)),
        EnclaveCall.SealSyncKeyShare(identity: Data([1]), key: Data([3]), context: sampleContext, recipient: sampleDevice),
        EnclaveCall.OpenSyncKeyShare(identity: Data([1]), share: Data(count: 300), context: sampleContext, sender: SyncIdentifier("dev1")!, senderKey: Data(count: 32)),
        EnclaveCall.SyncCredential(identity: Data([1])),
        EnclaveCall.CreateSyncRecoveryIdentity(), EnclaveCall.ImportSyncRecoveryIdentity(key: SecretBytes("ABCD".utf8)),
    ]

    static let sampleContext = SyncRecordContext(zone: SyncIdentifier("z")!, record: SyncIdentifier("r")!, version: 7, type: .keyShare, tombstone: true)
    static let sampleDevice = try! SyncDeviceKeys.generate(device: SyncIdentifier("dev2")!).publicKeys

    static let sampleHeader = FileKeychainHeader(uuid: UUID(), kdf: PasscodeKDF(logN: 10, salt: Data(count: 32)), wrappedKey: Data(count: 60))

    static func decode(_ bytes: [UInt8]) throws -> any WireMessage {
        var reader = ByteReader(Data(bytes))
        return try EnclaveWire.decodeRequest(&reader).request
    }

    @Test func requestsRoundTrip() throws {
        // OpenBackup needs a real archive header; BeginBackup's response carries one (below).
        let covered = Set(Self.samples.map { ObjectIdentifier(type(of: $0)) } + [ObjectIdentifier(EnclaveCall.OpenBackup.self)])
        #expect(covered == Set(EnclaveCatalog.requests.map { ObjectIdentifier($0) }))
        let opcodes = EnclaveCatalog.catalog.requests.map(\.opcode)
        #expect(Set(opcodes).count == opcodes.count)
        for request in Self.samples {
            let encoded = EnclaveWire.encode(request).bytes
            #expect(EnclaveWire.encode(try Self.decode(encoded)).bytes == encoded)
        }
    }

    /// The bytes of every sample request, as securityd of an earlier version sends them to
    /// this enclave (a sample whose bytes differ from run to run — a random uuid, a set — is left out: nil).
    @Test func requestsEncodeAsTheShippedDaemonSendsThem() {
        let fingerprints = Self.samples.map { WireFingerprint.of(EnclaveWire.encode($0).bytes) }
        #expect(fingerprints.count == Self.shippedFingerprints.count)
        for (index, (now, shipped)) in zip(fingerprints, Self.shippedFingerprints).enumerated() {
            guard let shipped else { continue }
            #expect(now == shipped, "\(type(of: Self.samples[index])) (sample \(index)) encodes differently")
        }
    }

    static let shippedFingerprints: [String?] = [
        "835ef07b4ee54c9/2", "835ed07b4ee5163/2", "e1fd591870fcf4b4/3", "3fe9bb2872f9b00/11",
        "a8ca8936e146f1d0/10", "b353664632f1f561/9", "ceec97bbe38acc63/8", "542af27b0e80126b/42",
        nil, "9ce0cee26ed1298a/79", "e0537cf18ae531d1/37", "883f3844e0919a1b/22",
        "835fa07b4ee677a/2", "11ce351901ecb15b/9", "a318c482c6748f08/28", "7e993b06c7dc0f31/82",
        "41cd018aea47bee6/82", "288db9268deaafd1/22", "e1e2291870e5db6c/3", "43ea22ef8823bf6f/27",
        "1a748279b2042226/22", "b79d638286c891e1/31", "d0f83d8c7bb7d043/143", "52ba7720b3c63451/233",
        "ae50e972c24f9412/12", nil, "e28c15187176396e/3", nil,
        nil, nil, nil, nil,
        nil, nil, "5b1de380a3e01c16/10", "275157285d4ac97b/118",
        "e23a83187130ea30/3", "5e86d03507e97aa2/44", "4406ea77859d1791/282", "ff4ad14d1518c20e/44",
        "bffcb35af4b655cf/282", nil, "570c0b152e38572d/382", "e5d313269112b2b/7",
        "8360a07b4ee82aa/2", "4a39a5a070069941/10",
    ]

    @Test func everyRequestHasAHandler() {
        #expect(EnclaveServer.unhandledRequests.isEmpty)
    }

    /// A table serves what it lists, by opcode, and reports the rest of the catalog unserved.
    @Test func aRequestTableServesWhatItListsAndReportsTheRest() throws {
        typealias Table = RequestTable<EnclaveWire, Void>
        let table = Table(serving: [(EnclaveCall.Lock.self, Table.handler(EnclaveCall.Lock.self) { _, _, _ in NoResult() })])
        #expect(table.unserved.count == EnclaveCatalog.catalog.requests.count - 1)
        #expect(!table.unserved.contains { ObjectIdentifier($0) == ObjectIdentifier(EnclaveCall.Lock.self) })
        var lock = ByteReader(Data(EnclaveWire.encode(EnclaveCall.Lock()).bytes))
        var answer = ByteReader(Data(try table.respond(to: &lock, in: ()).bytes))
        _ = try EnclaveWire.decodeResponse(&answer, to: EnclaveCall.Lock.self)
        var status = ByteReader(Data(EnclaveWire.encode(EnclaveCall.Status()).bytes))
        #expect(throws: KeychainError.decode) { try table.respond(to: &status, in: ()) }
    }

    @Test func malformedRequestsAreRefused() {
        let valid = EnclaveWire.encode(EnclaveCall.UnwrapItemKey(.always, wrapped: Data(count: 60), associatedData: Data("x".utf8), access: nil, context: nil)).bytes
        for length in 0..<valid.count {
            #expect(throws: KeychainError.decode) { try Self.decode(Array(valid.prefix(length))) }
        }
        #expect(throws: KeychainError.decode) { try Self.decode(valid + [0]) }
        #expect(throws: KeychainError.decode) { try Self.decode([1, 1]) }  // version 1
        #expect(throws: KeychainError.decode) { try Self.decode([EnclaveWire.version, 99]) }  // opcode
        var badClass = ByteWriter()
        badClass.append(EnclaveWire.version)
        badClass.append(EnclaveCatalog.catalog.opcode(of: EnclaveCall.MetadataKey.self))
        badClass.appendLengthPrefixed(Data("zz".utf8))
        #expect(throws: KeychainError.decode) { try Self.decode(badClass.bytes) }
    }

    @Test func errorsCrossTheWireWithTheirStatus() {
        var response = ByteReader(Data(EnclaveWire.failure(KeychainError(status: OSStatusCode.interactionNotAllowed, message: "locked")).bytes))
        do {
            _ = try EnclaveWire.decodeResponse(&response, to: EnclaveCall.Lock.self)
            Issue.record("expected an error")
        } catch let error as KeychainError {
            #expect(error.status == OSStatusCode.interactionNotAllowed)
            #expect(error.message == "locked")
        } catch {
            Issue.record("\(error)")
        }
    }
    /// A frame fed one byte at a time arrives whole; an oversized length is refused before
    /// its payload is read; a stream cut mid-frame is an error, a clean end is nil.
    @Test func framesOverASocket() throws {
        var fds: [Int32] = [-1, -1]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
        defer { close(fds[0]) }
        let payload = Data((0..<64).map { UInt8($0) })  // each 1-byte send costs a socket buffer slot; stay well under the limit
        var frame = Data()
        frame.appendInteger(UInt32(payload.count))
        frame.append(payload)
        for byte in frame {
            #expect(send(fds[1], [byte], 1, 0) == 1)
        }
        #expect(try FrameIO.read(from: fds[0], maximumSize: EnclaveWire.maximumFrameSize)?.withUnsafeBytes { Data($0) } == payload)

        var huge = Data()
        huge.appendInteger(UInt32(EnclaveWire.maximumFrameSize + 1))
        huge.withUnsafeBytes { _ = send(fds[1], $0.baseAddress, $0.count, 0) }
        #expect(throws: KeychainError.decode) { try FrameIO.read(from: fds[0], maximumSize: EnclaveWire.maximumFrameSize) }

        var cut = Data()
        cut.appendInteger(UInt32(10))
        cut.append(Data([1, 2, 3]))
        cut.withUnsafeBytes { _ = send(fds[1], $0.baseAddress, $0.count, 0) }
        close(fds[1])
        #expect(throws: KeychainError.io) { try FrameIO.read(from: fds[0], maximumSize: EnclaveWire.maximumFrameSize) }
        #expect(try FrameIO.read(from: fds[0], maximumSize: EnclaveWire.maximumFrameSize) == nil)
    }

    /// An exchange tells a request the peer never read (safe to send elsewhere: nil) from
    /// one it read before closing (it may have acted on it: errSecIO).
    @Test func exchangeTellsAnUnreadRequestFromALostOne() throws {
        func pair() -> (Int32, Int32) {
            var fds: [Int32] = [-1, -1]
            #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
            return (fds[0], fds[1])
        }
        func request() -> ByteWriter { ByteWriter("request") }
        func text(_ frame: SecretBytes?) -> String? { frame?.withUnsafeBytes { String(decoding: $0, as: UTF8.self) } }

        let (client, server) = pair()  // the server closes with the request unread
        #expect(send(client, [0, 0, 0, 1, 9], 5, 0) == 5)  // an earlier frame, still queued when it dies
        close(server)
        #expect(try { var r = request(); return try FrameIO.exchange(&r, on: client, maximumSize: 100) }() == nil)
        close(client)

        let (idle, gone) = pair()  // the server was gone before the request
        close(gone)
        #expect(try { var r = request(); return try FrameIO.exchange(&r, on: idle, maximumSize: 100) }() == nil)
        close(idle)

        let (asker, reader) = pair()  // the server reads the request, then closes
        DispatchQueue.global().async {
            _ = try? FrameIO.read(from: reader, maximumSize: 100)
            close(reader)
        }
        #expect(throws: KeychainError.io) { var r = request(); _ = try FrameIO.exchange(&r, on: asker, maximumSize: 100) }
        close(asker)

        let (caller, answerer) = pair()  // and a served request gets its answer
        DispatchQueue.global().async {
            if (try? FrameIO.read(from: answerer, maximumSize: 100)) != nil { try? FrameIO.write(ByteWriter("answer"), to: answerer) }
            close(answerer)
        }
        var asked = request()
        #expect(text(try FrameIO.exchange(&asked, on: caller, maximumSize: 100)) == "answer")
        #expect(asked.bytes.allSatisfy { $0 == 0 })  // the request was zeroed once sent
        close(caller)
    }

    /// The key requests have codecs written by hand for speed: each must write exactly
    /// WireEncoder's form and read it back.
    @Test func keyRequestsWriteWireEncodersForm() throws {
        func expectSameForm<Message: WireCodable & Codable>(_ message: Message) throws {
            var hand = ByteWriter()
            message.encode(to: &hand)
            var generic = ByteWriter()
            WireEncoder.encode(message, to: &generic)
            #expect(hand.bytes == generic.bytes, "\(Message.self)")
            var reader = ByteReader(Data(generic.bytes))
            var again = ByteWriter()
            WireEncoder.encode(try Message(from: &reader), to: &again)
            #expect(again.bytes == generic.bytes && reader.isAtEnd)
        }
        let access = try AccessControl(protection: .whenUnlockedThisDeviceOnly, flags: [.userPresence])
        for keychain in [nil, UUID()] as [UUID?] {
            try expectSameForm(EnclaveCall.IndexKey(keychain: keychain))
            try expectSameForm(EnclaveCall.MetadataKey(.afterFirstUnlock, keychain: keychain))
            for (access, context) in [(nil, nil), (access, Data(count: 16))] as [(AccessControl?, Data?)] {
                try expectSameForm(EnclaveCall.WrapItemKey(.always, ItemKey.generate(), associatedData: Data([1]), access: access, context: context, keychain: keychain))
                try expectSameForm(EnclaveCall.UnwrapItemKey(.always, wrapped: Data(count: 60), associatedData: Data(), access: access, context: context, keychain: keychain))
                try expectSameForm(EnclaveCall.WrapItemKey.Response(wrapped: Data(count: 60), access: access))
            }
        }
        try expectSameForm(EnclaveCall.UseEnclaveKey(blob: Data(count: 90), operation: .decrypt(algorithm: "x", data: Data([1])), context: Data(count: 16)))
        try expectSameForm(EnclaveCall.EnclaveKeyOutput(SecretBytes([1, 2, 3])))
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
