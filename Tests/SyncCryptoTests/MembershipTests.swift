import Crypto
import Foundation
import KeychainModel
@testable import SyncCrypto
import SyncProtocol
import Testing

/// The device circle's chain: signed, hash-linked, append-only, checked by every device
/// against its pin, never taken from the server on trust.
@Suite struct MembershipTests {
    let account = SyncIdentifier("account-1")!
    let d1 = try! SyncDeviceKeys.generate(device: SyncIdentifier("d1")!)
    let d2 = try! SyncDeviceKeys.generate(device: SyncIdentifier("d2")!)
    let d3 = try! SyncDeviceKeys.generate(device: SyncIdentifier("d3")!)

    /// Through the bytes, as a device reads entries from the server.
    func wire(_ record: MembershipRecord) throws -> MembershipRecord {
        try MembershipRecord(decoding: record.encoded)
    }

    /// genesis(d1), d1 adds d2, d2 adds d3.
    func chain() throws -> (records: [MembershipRecord], state: MembershipState) {
        let genesis = try MembershipRecord.genesis(account: account, founder: d1)
        var state = try MembershipState(genesis: wire(genesis))
        let add2 = try state.sign(.add(d2.publicKeys), by: d1)
        try state.append(wire(add2))
        let add3 = try state.sign(.add(d3.publicKeys), by: d2)
        try state.append(wire(add3))
        return ([genesis, add2, add3], state)
    }

    @Test func aChainOfSignedEntriesGivesEveryDeviceTheSameMembers() throws {
        var (records, state) = try chain()
        #expect(Set(state.members.keys) == [d1.device, d2.device, d3.device])
        #expect(state.members[d3.device] == d3.publicKeys)
        #expect(state.pin.length == 3 && state.pin.head == records[2].hash)
        // d3 removes d1 (a lost laptop); d1's signature no longer counts.
        let remove = try state.sign(.remove(d1.device), by: d3)
        try state.append(wire(remove))
        records.append(remove)
        #expect(Set(state.members.keys) == [d2.device, d3.device])
        // A device that joined when the chain had two entries verifies the whole chain
        // through the head it was given over the join channel.
        let joined = try MembershipState.verify(records.map(wire), account: account, through: MembershipPin(length: 2, head: records[1].hash))
        #expect(joined == state)
        #expect(throws: SyncCryptoError(.unknownWriter, "")) { try state.append(state.sign(.add(d1.publicKeys), by: d1)) }
    }

    @Test func entriesThatBreakTheRulesAreRefusedAndChangeNothing() throws {
        let (records, state) = try chain()
        let outsider = try SyncDeviceKeys.generate(device: SyncIdentifier("outsider")!)
        func refused(_ code: SyncCryptoError.Code, _ record: MembershipRecord, sourceLocation: SourceLocation = #_sourceLocation) {
            var copy = state
            #expect(throws: SyncCryptoError(code, ""), sourceLocation: sourceLocation) { try copy.append(try wire(record)) }
            #expect(copy == state, sourceLocation: sourceLocation)
        }
        refused(.unknownWriter, try state.sign(.add(outsider.publicKeys), by: outsider))
        var forged = try state.sign(.add(outsider.publicKeys), by: d1)
        forged.signature[5] ^= 1
        refused(.badSignature, forged)
        // Signed by a member, but not what the member signed: the operation swapped.
        var swapped = try state.sign(.remove(d2.device), by: d1)
        swapped.operation = .remove(d3.device)
        refused(.badSignature, swapped)
        refused(.fork, try MembershipRecord.sign(account: account, index: 3, previous: records[1].hash, operation: .remove(d2.device), signer: d1))
        refused(.membership, try MembershipRecord.sign(account: account, index: 4, previous: state.pin.head, operation: .remove(d2.device), signer: d1))
        refused(.fork, try MembershipRecord.sign(account: account, index: 2, previous: records[1].hash, operation: .remove(d2.device), signer: d1))
        refused(.membership, try MembershipRecord.sign(
            account: SyncIdentifier("account-2")!, index: 3, previous: state.pin.head, operation: .remove(d2.device), signer: d1))
        refused(.membership, try state.sign(.genesis(outsider.publicKeys), by: d1))
        refused(.membership, try state.sign(.remove(outsider.device), by: d1))

        // A removed device's id never comes back, under any keys.
        var shrunk = state
        try shrunk.append(try shrunk.sign(.remove(d3.device), by: d1))
        let again = try SyncDeviceKeys.generate(device: d3.device)
        #expect(throws: SyncCryptoError(.membership, "")) { try shrunk.append(try shrunk.sign(.add(again.publicKeys), by: d1)) }
        // The last member stays.
        try shrunk.append(try shrunk.sign(.remove(d2.device), by: d1))
        #expect(throws: SyncCryptoError(.membership, "")) { try shrunk.append(try shrunk.sign(.remove(d1.device), by: d1)) }

        // A batch from the server with one bad entry applies none.
        var extended = state
        let good = try state.sign(.remove(d2.device), by: d1)
        let bad = try MembershipRecord.sign(account: account, index: 4, previous: good.hash, operation: .remove(d3.device), signer: outsider)
        #expect(throws: SyncCryptoError(.unknownWriter, "")) { try extended.extend(with: [good, bad]) }
        #expect(extended == state)

        // A genesis must be signed by the device it founds.
        var stolen = try MembershipRecord.genesis(account: account, founder: d1)
        stolen.signer = d2.device
        stolen.signature = try d2.signing.signature(for: Data("anything".utf8))
        #expect(throws: SyncCryptoError(.badSignature, "")) { try MembershipState(genesis: wire(stolen)) }
    }

    /// The server shows a device a different history (two entries at one index, both signed
    /// by a member) or an older one: the pin catches both.
    @Test func aForkedOrRolledBackChainIsCaughtByThePin() throws {
        let (records, state) = try chain()
        var other = try MembershipState(genesis: records[0])
        try other.append(records[1])
        let fork = try other.sign(.remove(d2.device), by: d1)
        #expect(throws: SyncCryptoError(.fork, "")) {
            _ = try MembershipState.verify(Array(records[0...1]) + [fork], account: account, through: state.pin)
        }
        #expect(throws: SyncCryptoError(.fork, "")) {
            _ = try MembershipState.verify(Array(records[0...1]), account: account, through: state.pin)
        }
        #expect(throws: SyncCryptoError(.membership, "")) {
            _ = try MembershipState.verify(records, account: SyncIdentifier("account-2")!, through: state.pin)
        }
        #expect(try MembershipState.verify(records, account: account, through: state.pin) == state)
    }

    @Test func onlyAWholeEntryDecodes() throws {
        let bytes = try chain().records[1].encoded
        for length in 0..<bytes.count {
            #expect(throws: SyncCryptoError(.malformed, "")) { try MembershipRecord(decoding: bytes.prefix(length)) }
        }
        #expect(throws: SyncCryptoError(.malformed, "")) { try MembershipRecord(decoding: bytes + [0]) }
        var otherFormat = bytes
        otherFormat[otherFormat.startIndex] = 2
        #expect(throws: SyncCryptoError(.malformed, "")) { try MembershipRecord(decoding: otherFormat) }
        #expect(throws: SyncCryptoError(.malformed, "")) { try MembershipRecord(decoding: Data(count: SyncLimits.membershipEntry + 1)) }
    }

    @Test func deviceKeysComeBackFromTheirSeeds() throws {
        let seeds = d1.seeds
        #expect(seeds.count == 64)
        let restored = try SyncDeviceKeys(device: d1.device, seeds: seeds)
        #expect(restored.publicKeys == d1.publicKeys)
        #expect(throws: SyncCryptoError(.malformed, "")) { try SyncDeviceKeys(device: d1.device, seeds: SecretBytes(Data(count: 63))) }
    }
}

/// A zone key sent to one member (HPKE with X-Wing, signed by the sender).
@Suite struct SyncKeyShareTests {
    let sender = try! SyncDeviceKeys.generate(device: SyncIdentifier("d1")!)
    let recipient = try! SyncDeviceKeys.generate(device: SyncIdentifier("d2")!)
    let other = try! SyncDeviceKeys.generate(device: SyncIdentifier("d3")!)
    let key = SymmetricKey(size: .bits256)
    let keyID = SyncIdentifier("zone-key-1")!
    let context = SyncRecordContext(zone: SyncIdentifier("zone-1")!, record: SyncIdentifier("share-d2")!, version: 1, type: .keyShare)

    func members(_ device: SyncIdentifier) -> Curve25519.Signing.PublicKey? {
        [sender, recipient, other].first { $0.device == device }?.signing.publicKey
    }

    func bytes(_ key: SymmetricKey) -> Data { key.withUnsafeBytes { Data($0) } }

    @Test func theRecipientAloneOpensAShareInItsPlace() throws {
        let share = try SyncKeyShare.seal(key, keyID: keyID, context: context, to: recipient.publicKeys, from: sender)
        let read = try SyncKeyShare(decoding: share.encoded)
        #expect(bytes(try read.open(context: context, recipient: recipient, senderKey: members)) == bytes(key))
        #expect(throws: SyncCryptoError(.unknownKey, "")) { try read.open(context: context, recipient: other, senderKey: members) }
        // Moved to another record or version: the signature binds where it sits.
        let moved = SyncRecordContext(zone: context.zone, record: SyncIdentifier("share-d3")!, version: 1, type: .keyShare)
        #expect(throws: SyncCryptoError(.badSignature, "")) { try read.open(context: moved, recipient: recipient, senderKey: members) }
        // Readdressed to another device by the server: the signature fails.
        var readdressed = read
        readdressed.recipient = other.device
        #expect(throws: SyncCryptoError(.badSignature, "")) { try readdressed.open(context: context, recipient: other, senderKey: members) }
        // A sender that is not (or no longer) a member.
        #expect(throws: SyncCryptoError(.unknownWriter, "")) { try read.open(context: context, recipient: recipient, senderKey: { _ in nil }) }
    }

    /// A member who signs a share it did not seal for this place (or a corrupted one): HPKE
    /// refuses it, since its info binds the context, key id and both devices.
    @Test func hpkeBindsTheShareEvenUnderAValidSignature() throws {
        let elsewhere = SyncRecordContext(zone: context.zone, record: context.record, version: 2, type: .keyShare)
        var share = try SyncKeyShare.seal(key, keyID: keyID, context: elsewhere, to: recipient.publicKeys, from: sender)
        share.signature = try sender.signing.signature(
            for: share.signedBytes(SyncKeyShare.info(context, keyID: keyID, recipient: recipient.device, sender: sender.device)))
        #expect(throws: SyncCryptoError(.authentication, "")) { try share.open(context: context, recipient: recipient, senderKey: members) }
    }

    @Test func onlyAWholeShareDecodes() throws {
        let bytes = try SyncKeyShare.seal(key, keyID: keyID, context: context, to: recipient.publicKeys, from: sender).encoded
        for length in stride(from: 0, to: bytes.count, by: 7) {
            #expect(throws: SyncCryptoError(.malformed, "")) { try SyncKeyShare(decoding: bytes.prefix(length)) }
        }
        #expect(throws: SyncCryptoError(.malformed, "")) { try SyncKeyShare(decoding: bytes + [0]) }
    }
}

extension MembershipTests {
    @Test func privateKeysNeverPrint() throws {
        let seedsHex = d1.seeds.withUnsafeBytes { $0.prefix(32).map { String(format: "%02x", $0) }.joined() }
        for text in [String(describing: d1), String(reflecting: d1), "\(Mirror(reflecting: d1).children.map(\.value))"] {
            #expect(text.contains("d1") && !text.contains(seedsHex) && !text.contains("keyBytes"), "\(text)")
        }
    }
}
