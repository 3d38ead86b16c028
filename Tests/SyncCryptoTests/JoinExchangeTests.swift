import Crypto
import Foundation
import KeychainModel
import SyncCrypto
import SyncJoin
import SyncProtocol
import Testing

/// The join exchange between a member and a new device, its messages through their bytes as
/// the mailbox carries them.
@Suite struct JoinExchangeTests {
    let account = SyncIdentifier("account-1")!
    let pairing = SyncIdentifier("3F2A8C1E-0B7D-4E59-9A61-5C3D2B1A0F9E")!
    let member = try! SyncDeviceKeys.generate(device: SyncIdentifier("member")!)
    let newcomer = try! SyncDeviceKeys.generate(device: SyncIdentifier("newcomer")!)
    let credential = Data(repeating: 0x5a, count: 32)

    /// Through the mailbox's bytes.
    func relay(_ message: JoinMessage) throws -> JoinMessage { try JoinMessage(decoding: message.encoded) }

    @Test func aMemberAndANewDeviceWithOneCodeEndWithTheNewDeviceInTheChain() throws {
        let code = JoinCode.short(nameplate: 42)
        var memberSide = try MemberPairing(code: code, pairing: pairing, device: member.device)
        // The person reads the code off the member's screen and types it.
        var newSide = try NewDeviceJoin(code: JoinCode(parsing: code.text), pairing: pairing, keys: newcomer.publicKeys, credential: credential)
        let answer = try memberSide.answer(relay(newSide.share))
        let confirm = try newSide.confirm(relay(answer))
        let request = try memberSide.request(relay(confirm))
        #expect(request == JoinRequest(keys: newcomer.publicKeys, credential: credential))
        // The member approves: the chain gains the new device, and the welcome carries its head.
        let genesis = try MembershipRecord.genesis(account: account, founder: member)
        var chain = try MembershipState(genesis: genesis)
        let add = try chain.sign(.add(request.keys), by: member)
        try chain.append(add)
        let welcome = try newSide.welcome(relay(memberSide.welcome(JoinWelcome(account: account, pin: chain.pin))))
        #expect(welcome == JoinWelcome(account: account, pin: chain.pin))
        // The new device reads the chain from the server and verifies it through that pin.
        let verified = try MembershipState.verify([genesis, add], account: welcome.account, through: welcome.pin)
        #expect(verified.members[newcomer.device] == newcomer.publicKeys)
        // Nothing secret crossed in the clear: the request and welcome are sealed.
        for message in [answer, confirm] {
            #expect(message.encoded.range(of: credential) == nil)
        }
    }

    @Test(arguments: [false, true])
    func aWrongCodeFailsOnBothSidesAndRevealsNothing(_ long: Bool) throws {
        let code = long ? JoinCode.long(nameplate: 7) : JoinCode.short(nameplate: 7)
        let wrong = long ? JoinCode.long(nameplate: 7) : JoinCode.short(nameplate: 7)
        var memberSide = try MemberPairing(code: code, pairing: pairing, device: member.device)
        var newSide = try NewDeviceJoin(code: wrong, pairing: pairing, keys: newcomer.publicKeys, credential: credential)
        let answer = try memberSide.answer(relay(newSide.share))
        #expect(throws: SyncCryptoError(.wrongCode, "")) { try newSide.confirm(relay(answer)) }
        // The new device says so; the member ends the pairing.
        #expect(throws: SyncCryptoError(.wrongCode, "")) { try memberSide.request(relay(NewDeviceJoin.abort)) }
    }

    /// A stranger (or the server) who guessed wrong and goes on anyway: the member refuses
    /// its tag, and the request under it is never opened.
    @Test func aGuessThatPressesOnIsRefusedByTheMember() throws {
        let code = JoinCode.short(nameplate: 7)
        var memberSide = try MemberPairing(code: code, pairing: pairing, device: member.device)
        let stranger = try NewDeviceJoin(code: JoinCode.short(nameplate: 7), pairing: pairing, keys: newcomer.publicKeys, credential: credential)
        _ = try memberSide.answer(relay(stranger.share))
        let forged = JoinMessage(kind: .confirm, confirmation: Data(repeating: 1, count: 64), sealed: Data(repeating: 2, count: 64))
        #expect(throws: SyncCryptoError(.wrongCode, "")) { try memberSide.request(relay(forged)) }
        // A second share to the same pairing is not a second guess.
        #expect(throws: SyncCryptoError(.malformed, "")) { try memberSide.answer(relay(stranger.share)) }
    }

    /// A request that fails a check leaves nothing to welcome: the member cannot be made to
    /// seal a welcome for it.
    @Test func aRefusedRequestCannotBeWelcomed() throws {
        let code = JoinCode.short(nameplate: 7)
        var memberSide = try MemberPairing(code: code, pairing: pairing, device: member.device)
        var newSide = try NewDeviceJoin(code: code, pairing: pairing, keys: newcomer.publicKeys, credential: Data(count: 8))  // too short a credential
        let answer = try memberSide.answer(relay(newSide.share))
        #expect(throws: SyncCryptoError(.malformed, "")) { try memberSide.request(relay(newSide.confirm(relay(answer)))) }
        #expect(throws: SyncCryptoError(.malformed, "")) { try memberSide.welcome(JoinWelcome(account: account, pin: MembershipPin(length: 1, head: Data(count: 32)))) }
    }

    @Test func codesReadAsTypedAndNeverPrintTheirSecret() throws {
        let short = JoinCode.short(nameplate: 42)
        #expect(short.text.count == "42-4821-0937".count && short.text.hasPrefix("42-"))
        let parts = short.text.split(separator: "-")
        #expect(try JoinCode(parsing: "  \(parts[0])-\(parts[1]) \(parts[2])\n").text == short.text)
        let long = JoinCode.long(nameplate: 3)
        #expect(try JoinCode(parsing: long.text.lowercased()).text == long.text)
        #expect(!"\(long)".contains(long.text.dropFirst(2).prefix(5)))
        for bad in ["4821-0937", "x-48210937", "0-48210937", "42-4821-093", "42-4821-093a", "42-ABCDEFGHIJKLMNOPQRSTUVWXY1"] {
            #expect(throws: SyncCryptoError(.malformed, "")) { try JoinCode(parsing: bad) }
        }
    }

    @Test func messagesOutOfBoundsAreRefused() throws {
        for body in [Data("{}".utf8), Data("{\"kind\":\"share\",\"share\":\"AAAA\"}".utf8), Data(count: SyncLimits.pairingMessage + 1), Data("garbage".utf8)] {
            #expect(throws: SyncCryptoError(.malformed, "")) { try JoinMessage(decoding: body) }
        }
    }
}
