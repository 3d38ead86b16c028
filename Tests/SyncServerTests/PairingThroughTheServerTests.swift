import Foundation
import KeychainTestSupport
import SyncCrypto
import SyncJoin
import SyncProtocol
import Testing

/// The join exchange run through a real trousseau-syncd's pairing mailbox, as a member and a
/// new device would: the server relays, and learns neither the code nor the request.
@Suite final class PairingThroughTheServerTests {
    let directory: String
    let account = SyncIdentifier("acct")!
    let memberToken = Data((0..<32).map { UInt8($0) })
    let member = try! SyncDeviceKeys.generate(device: SyncIdentifier("dev1")!)

    init() throws {
        directory = try TemporaryKeychain.makeTemporaryDirectory()
    }

    deinit {
        try? FileManagerLite.removeTree(directory)
    }

    /// One side of a pairing on the server.
    struct Mailbox {
        let server: SyncDaemonProcess
        let nameplate: Int64
        let authorization: String
        var read: Int64 = -1

        func post(_ message: JoinMessage) async throws {
            let answer = try await server.send(
                "POST", "/v1/pairings/\(nameplate)/messages", authorization: authorization, json: JSONEncoder().encode(PairingPost(body: message.encoded)))
            guard answer.status == 201 else { throw SyncTestError(description: "post: \(answer.status) \(String(decoding: answer.body, as: UTF8.self))") }
        }

        /// The other side's next message, polled for up to 10 s.
        mutating func next() async throws -> JoinMessage {
            for _ in 0..<200 {
                let answer = try await server.send("GET", "/v1/pairings/\(nameplate)/messages?after=\(read)", authorization: authorization)
                guard answer.status == 200 else { throw SyncTestError(description: "read: \(answer.status)") }
                if let first = try JSONDecoder().decode(PairingMessages.self, from: answer.body).messages.first {
                    read = first.index
                    return try JoinMessage(decoding: first.body)
                }
                try await Task.sleep(for: .milliseconds(50))
            }
            throw SyncTestError(description: "no message within 10 s")
        }
    }

    func decode<T: Decodable>(_ type: T.Type, _ answer: (status: Int, body: Data), _ status: Int) throws -> T {
        guard answer.status == status else { throw SyncTestError(description: "\(answer.status): \(String(decoding: answer.body, as: UTF8.self))") }
        return try JSONDecoder().decode(type, from: answer.body)
    }

    /// The member's account with its chain's genesis, and a pairing it opened.
    func openPairing(_ server: SyncDaemonProcess) async throws -> (PairingOpened, Mailbox) {
        let opened = try decode(PairingOpened.self, try await server.send("POST", "/v1/pairings", token: memberToken), 201)
        return (opened, Mailbox(server: server, nameplate: opened.nameplate, authorization: "Bearer " + memberToken.base64EncodedString()))
    }

    /// The new device claims the pairing the code names.
    func claim(_ server: SyncDaemonProcess, _ code: JoinCode, token: Data) async throws -> (PairingClaimed, Mailbox) {
        let claimed = try decode(PairingClaimed.self, try await server.send("POST", "/v1/pairings/\(code.nameplate)/claim", body: PairingClaim(token: token)), 200)
        return (claimed, Mailbox(server: server, nameplate: code.nameplate, authorization: "Pairing " + token.base64EncodedString()))
    }

    @Test(arguments: Backend.available)
    func aNewDeviceJoinsWithACodeAndAWrongCodeKillsThePairing(_ backend: Backend) async throws {
        let database = backend == .sqlite ? ["--database", directory + "/sync.sqlite"] : ["--postgres", try backend.makeLocation()]
        let server = try SyncDaemonProcess(database + ["--open-registration"], log: directory + "/syncd.log")
        #expect(try await server.send("POST", "/v1/accounts", body: RegisterAccountRequest(account: account, device: member.device, token: memberToken)).status == 201)
        let genesis = try MembershipRecord.genesis(account: account, founder: member)
        #expect(try await server.send("POST", "/v1/membership", token: memberToken, body: MembershipEntry(index: 0, entry: genesis.encoded)).status == 201)

        // The member shows a code; the person types it on the new device.
        let (opened, memberBox) = try await openPairing(server)
        let code = JoinCode.short(nameplate: opened.nameplate)
        let typed = try JoinCode(parsing: code.text)
        let newcomer = try SyncDeviceKeys.generate(device: SyncIdentifier("dev2")!)
        let credential = Data(repeating: 0x77, count: 32)
        let (claimed, newBox) = try await claim(server, typed, token: Data(repeating: 0x33, count: 32))
        #expect(claimed.pairing == opened.pairing)

        var newSide = try NewDeviceJoin(code: typed, pairing: claimed.pairing, keys: newcomer.publicKeys, credential: credential)
        var memberSide = try MemberPairing(code: code, pairing: opened.pairing, device: member.device)
        var memberReads = memberBox, newReads = newBox
        try await newBox.post(newSide.share)
        try await memberBox.post(memberSide.answer(try await memberReads.next()))
        try await newBox.post(newSide.confirm(try await newReads.next()))
        let request = try memberSide.request(try await memberReads.next())
        #expect(request.keys == newcomer.publicKeys)

        // Approved: the member adds the device to the chain and gives the server its credential.
        var chain = try MembershipState(genesis: genesis)
        let add = try chain.sign(.add(request.keys), by: member)
        try chain.append(add)
        #expect(try await server.send("POST", "/v1/membership", token: memberToken, body: MembershipEntry(index: 1, entry: add.encoded)).status == 201)
        #expect(try await server.send("POST", "/v1/devices", token: memberToken, body: RegisterDeviceRequest(device: request.keys.device, token: request.credential)).status == 201)
        try await memberBox.post(memberSide.welcome(JoinWelcome(account: account, pin: chain.pin)))
        let welcome = try newSide.welcome(try await newReads.next())
        #expect(try await server.send("DELETE", "/v1/pairings/\(opened.nameplate)", token: memberToken).status == 204)

        // The new device, with its own credential, reads the chain and verifies it through the pin.
        let entries = try decode(MembershipResponse.self, try await server.send("GET", "/v1/membership", token: credential), 200).entries
        let verified = try MembershipState.verify(entries.map { try MembershipRecord(decoding: $0.entry) }, account: welcome.account, through: welcome.pin)
        #expect(Set(verified.members.keys) == [member.device, newcomer.device])

        // A wrong code: the new device finds out and says so, the member closes the pairing,
        // and the code is dead — the right device cannot claim it after.
        let (second, secondMember) = try await openPairing(server)
        let right = JoinCode.short(nameplate: second.nameplate)
        let guess = try JoinCode(parsing: "\(second.nameplate)-0000-0000")
        let (guessed, guessBox) = try await claim(server, guess, token: Data(repeating: 0x44, count: 32))
        var guesser = try NewDeviceJoin(code: guess, pairing: guessed.pairing, keys: newcomer.publicKeys, credential: credential)
        var secondSide = try MemberPairing(code: right, pairing: second.pairing, device: member.device)
        var secondReads = secondMember, guessReads = guessBox
        try await guessBox.post(guesser.share)
        try await secondMember.post(secondSide.answer(try await secondReads.next()))
        let reply = try await guessReads.next()
        #expect(throws: SyncCryptoError(.wrongCode, "")) { _ = try guesser.confirm(reply) }
        try await guessBox.post(NewDeviceJoin.abort)
        let abort = try await secondReads.next()
        #expect(throws: SyncCryptoError(.wrongCode, "")) { _ = try secondSide.request(abort) }
        #expect(try await server.send("DELETE", "/v1/pairings/\(second.nameplate)", token: memberToken).status == 204)
        #expect(try await server.send("POST", "/v1/pairings/\(right.nameplate)/claim", body: PairingClaim(token: Data(repeating: 0x55, count: 32))).status == 404)

        // The server's database never held the request's credential or a code.
        server.stop()
        if backend == .sqlite {
            for file in try FileManager.default.contentsOfDirectory(atPath: directory).filter({ $0.hasPrefix("sync.sqlite") }) {
                let bytes = try Data(contentsOf: URL(fileURLWithPath: directory + "/" + file))
                #expect(bytes.range(of: credential) == nil && bytes.range(of: Data(code.text.utf8)) == nil, "\(file)")
            }
        }
    }
}
