import Enclave
import EnclaveProtocol
import FoundationEssentials
import KeychainModel
import KeychainTestSupport
import SyncCrypto
import SyncProtocol
import Testing

/// Sync keys in real enclave processes, one per device: identities sign the membership
/// chain, a zone key travels as a share, class keys as records under it, and items as
/// records under those — each opened by the other device's enclave, and nothing else.
@Suite struct SyncKeyTests {
    let account = SyncIdentifier("acct")!, zone = SyncIdentifier("zone")!
    let passcode = SecretBytes("1234".utf8)

    struct Device {
        let keychain: EnclaveKeychain
        let identity: SyncIdentityBlob
        var enclave: EnclaveClient { keychain.enclave }

        init(_ name: String) throws {
            keychain = try EnclaveKeychain()
            identity = try keychain.enclave.createSyncIdentity(device: SyncIdentifier(name)!)
        }

        var keys: SyncDevicePublicKeys { identity.publicKeys }
    }

    func context(_ record: String, _ type: SyncRecordType, version: Int64 = 1) -> SyncRecordContext {
        SyncRecordContext(zone: zone, record: SyncIdentifier(record)!, version: version, type: type)
    }

    /// A recovery key made in one enclave derives the same member in another (typed by hand:
    /// lower case, spaces), which opens a share to that member and signs as it; anything but
    /// 32 characters of the alphabet is refused, and a key one character off is another member.
    @Test func aRecoveryKeyDerivesOneMemberInAnyEnclave() throws {
        let first = try EnclaveKeychain(), second = try EnclaveKeychain()
        let (key, made) = try first.enclave.createSyncRecoveryIdentity()
        let text = String(decoding: key.withUnsafeBytes { Data($0) }, as: UTF8.self)
        #expect(text.count == SyncRecovery.keyLength && text.utf8.allSatisfy { SyncRecovery.alphabet.contains($0) })
        #expect(SyncRecovery.isRecovery(made.publicKeys.device) && made.publicKeys.device.rawValue.count == "recovery-".count + 16)
        let grouped = String(decoding: SyncRecovery.grouped(key).withUnsafeBytes { Data($0) }, as: UTF8.self)
        let typed = grouped.lowercased().replacingOccurrences(of: "-", with: " ")
        let imported = try second.enclave.importSyncRecoveryIdentity(SecretBytes(Data(typed.utf8)))
        #expect(imported.publicKeys == made.publicKeys)
        #expect(imported.wrapped != made.wrapped, "wrapped by each device's own class key")
        #expect(
            try first.enclave.syncCredential(identity: made).withUnsafeBytes { Data($0) }
                == second.enclave.syncCredential(identity: imported).withUnsafeBytes { Data($0) })

        // A member shares the zone key to the recovery member; the second enclave opens it.
        let member = try Device("dev1")
        let zoneKey = try member.enclave.createSyncKey(role: .zone)
        let shareContext = context("share-" + made.publicKeys.device.rawValue, .keyShare)
        let share = try member.enclave.sealSyncKeyShare(zoneKey, context: shareContext, to: made.publicKeys, identity: member.identity)
        #expect(try second.enclave.openSyncKeyShare(share, context: shareContext, identity: imported, sender: member.keys).keyID == zoneKey.keyID)

        var offByOne = Array(text.utf8)
        offByOne[0] = offByOne[0] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        #expect(try second.enclave.importSyncRecoveryIdentity(SecretBytes(Data(offByOne))).publicKeys != made.publicKeys)
        for bad in [String(text.dropLast()), text + "A", String(text.dropLast()) + "1", "correct horse battery staple"] {
            #expect(throws: KeychainError.self) { try second.enclave.importSyncRecoveryIdentity(SecretBytes(Data(bad.utf8))) }
        }
    }

    /// Device 1 founds the chain, adds device 2, shares the zone key and the class keys;
    /// device 2 reads what device 1 writes under A and C, and device 1 what device 2 writes.
    @Test func twoDevicesShareAZoneThroughTheirEnclaves() throws {
        let first = try Device("dev1"), second = try Device("dev2")

        // The membership chain, signed in the enclaves and verified as any device would.
        let genesis = try first.enclave.signMembershipRecord(
            MembershipRecord.unsigned(account: account, index: 0, previous: MembershipRecord.genesisPrevious, operation: .genesis(first.keys), signer: first.keys.device),
            as: first.identity)
        var state = try MembershipState(genesis: genesis)
        let added = try first.enclave.signMembershipRecord(state.unsigned(.add(second.keys), signer: first.keys.device), as: first.identity)
        try state.append(added)
        #expect(state.members[second.keys.device] == second.keys)
        #expect(try MembershipState.verify([genesis, added], account: account, through: state.pin) == state)

        // The zone key to device 2 as a share; the class keys as records under the zone key.
        let zoneKey = try first.enclave.createSyncKey(role: .zone)
        let shareContext = context("share-dev2", .keyShare)
        let share = try first.enclave.sealSyncKeyShare(zoneKey, context: shareContext, to: second.keys, identity: first.identity)
        let receivedZone = try second.enclave.openSyncKeyShare(share, context: shareContext, identity: second.identity, sender: first.keys)
        #expect(receivedZone.keyID == zoneKey.keyID && receivedZone.role == .zone && receivedZone.protection == .afterFirstUnlock)
        #expect(receivedZone.wrapped != zoneKey.wrapped)  // wrapped by device 2's own class key

        var received: [SyncKeyRole: SyncKeyBlob] = [:]
        var sent: [SyncKeyRole: SyncKeyBlob] = [:]
        for role in [SyncKeyRole.classA, .classC] {
            let classKey = try first.enclave.createSyncKey(role: role)
            let keyContext = SyncRecordContext(zone: zone, record: classKey.keyID, version: 1, type: .classKey)
            let record = try first.enclave.sealSyncKey(classKey, context: keyContext, parent: zoneKey, identity: first.identity)
            let opened = try second.enclave.openSyncKey(record, context: keyContext, parent: receivedZone, writer: first.keys)
            #expect(opened.keyID == classKey.keyID && opened.role == role && opened.protection == role.protection)
            sent[role] = classKey
            received[role] = opened
        }

        // Items both ways, under each class key.
        for (index, role) in [SyncKeyRole.classA, .classC].enumerated() {
            let itemContext = context("item\(index)", .item, version: 3)
            let secret = SecretBytes("secret \(index)".utf8)
            let envelope = try first.enclave.sealSyncRecord(secret, context: itemContext, parent: sent[role]!, identity: first.identity)
            #expect(text(try second.enclave.openSyncRecord(envelope, context: itemContext, parent: received[role]!, writer: first.keys)) == "secret \(index)")
            let reply = try second.enclave.sealSyncRecord(secret, context: itemContext, parent: received[role]!, identity: second.identity)
            #expect(text(try first.enclave.openSyncRecord(reply, context: itemContext, parent: sent[role]!, writer: second.keys)) == "secret \(index)")
        }
    }

    /// What a server or a careless caller could hand the enclave gets errSecDecode or
    /// errSecParam, and no key.
    @Test func movedForgedAndMisaddressedRecordsAreRefused() throws {
        let first = try Device("dev1"), second = try Device("dev2"), third = try Device("dev3")
        let classKey = try first.enclave.createSyncKey(role: .classC)
        let itemContext = context("item", .item, version: 2)
        let envelope = try first.enclave.sealSyncRecord(SecretBytes("s".utf8), context: itemContext, parent: classKey, identity: first.identity)

        // Moved to another version or record, or claimed by another writer.
        #expect(osStatus { try first.enclave.openSyncRecord(envelope, context: context("item", .item, version: 1), parent: classKey, writer: first.keys) } == .decode)
        #expect(osStatus { try first.enclave.openSyncRecord(envelope, context: context("other", .item, version: 2), parent: classKey, writer: first.keys) } == .decode)
        #expect(osStatus { try first.enclave.openSyncRecord(envelope, context: itemContext, parent: classKey, writer: second.keys) } == .decode)
        // Device 1's key under device 2's name: the envelope names its writer.
        let impostor = SyncDevicePublicKeys(device: second.keys.device, signing: first.keys.signing, encryption: first.keys.encryption)
        #expect(osStatus { try first.enclave.openSyncRecord(envelope, context: itemContext, parent: classKey, writer: impostor) } == .decode)
        // One byte changed anywhere.
        var edited = envelope
        edited[edited.count / 2] ^= 1
        #expect(osStatus { try first.enclave.openSyncRecord(edited, context: itemContext, parent: classKey, writer: first.keys) } == .decode)
        // A blob of device 1 is nothing to device 2's enclave (another class key wraps it).
        #expect(osStatus { try second.enclave.openSyncRecord(envelope, context: itemContext, parent: classKey, writer: first.keys) } == .decode)
        #expect(osStatus { try second.enclave.signMembershipRecord(self.genesis(first), as: first.identity) } == .decode)

        // A key record is never opened into plaintext, nor an item sealed as one.
        let keyContext = SyncRecordContext(zone: zone, record: classKey.keyID, version: 1, type: .classKey)
        let zoneKey = try first.enclave.createSyncKey(role: .zone)
        let keyRecord = try first.enclave.sealSyncKey(classKey, context: keyContext, parent: zoneKey, identity: first.identity)
        #expect(osStatus { try first.enclave.openSyncRecord(keyRecord, context: keyContext, parent: zoneKey, writer: first.keys) } == .param)
        #expect(osStatus { try first.enclave.sealSyncRecord(SecretBytes(Data(count: 33)), context: keyContext, parent: zoneKey, identity: first.identity) } == .param)
        // Each key in its role: a zone key wraps no record, a class key no class key, and only
        // a zone key is shared (a class A key shared to oneself would come back as a zone
        // key, AfterFirstUnlock: readable while locked).
        #expect(osStatus { try first.enclave.sealSyncRecord(SecretBytes("s".utf8), context: itemContext, parent: zoneKey, identity: first.identity) } == .param)
        #expect(osStatus { try first.enclave.sealSyncKey(classKey, context: keyContext, parent: classKey, identity: first.identity) } == .param)
        #expect(osStatus { try first.enclave.sealSyncKey(zoneKey, context: context(zoneKey.keyID.rawValue, .classKey), parent: zoneKey, identity: first.identity) } == .param)
        let classA = try first.enclave.createSyncKey(role: .classA)
        #expect(osStatus { try first.enclave.sealSyncKeyShare(classA, context: context("share-a", .keyShare), to: first.keys, identity: first.identity) } == .param)
        // A plaintext too long for a record once padded.
        #expect(osStatus { try first.enclave.sealSyncRecord(SecretBytes(Data(count: SyncLimits.recordBody)), context: itemContext, parent: classKey, identity: first.identity) } == .param)
        // A class-key record claims the key it names.
        #expect(osStatus { try first.enclave.sealSyncKey(classKey, context: context("another-key", .classKey), parent: zoneKey, identity: first.identity) } == .param)

        // A share opens for its recipient alone, from its sender alone.
        let shareContext = context("share", .keyShare)
        let share = try first.enclave.sealSyncKeyShare(zoneKey, context: shareContext, to: second.keys, identity: first.identity)
        #expect(osStatus { try third.enclave.openSyncKeyShare(share, context: shareContext, identity: third.identity, sender: first.keys) } == .decode)
        #expect(osStatus { try second.enclave.openSyncKeyShare(share, context: shareContext, identity: second.identity, sender: third.keys) } == .decode)
        #expect(osStatus { try second.enclave.openSyncKeyShare(share, context: context("share", .keyShare, version: 2), identity: second.identity, sender: first.keys) } == .decode)

        // An identity signs only entries naming it; sync keys have no ThisDeviceOnly class.
        #expect(osStatus { try first.enclave.signMembershipRecord(self.genesis(second), as: first.identity) } == .param)
        #expect(osStatus { try SyncKeyBlob(data: Data("garbage".utf8)) } == .decode)
        var zoneAsClassA = zoneKey
        zoneAsClassA.role = .classA  // the role is bound into the wrapping
        #expect(osStatus { try first.enclave.sealSyncRecord(SecretBytes("s".utf8), context: itemContext, parent: zoneAsClassA, identity: first.identity) } == .decode)
        // The enclave still serves.
        #expect(text(try first.enclave.openSyncRecord(envelope, context: itemContext, parent: classKey, writer: first.keys)) == "s")
    }

    /// Class A's records open only while the device is unlocked; the identity and class C
    /// after the first unlock, as the items they hold.
    @Test func lockStateGatesSyncKeysAsItGatesItems() throws {
        let device = try Device("dev1")
        try device.enclave.changePasscode(old: nil, new: passcode)
        let classA = try device.enclave.createSyncKey(role: .classA)
        let classC = try device.enclave.createSyncKey(role: .classC)
        let contextA = context("a", .item), contextC = context("c", .item)
        let recordA = try device.enclave.sealSyncRecord(SecretBytes("a".utf8), context: contextA, parent: classA, identity: device.identity)
        let recordC = try device.enclave.sealSyncRecord(SecretBytes("c".utf8), context: contextC, parent: classC, identity: device.identity)

        try device.enclave.lock()
        #expect(osStatus { try device.enclave.openSyncRecord(recordA, context: contextA, parent: classA, writer: device.keys) } == .interactionNotAllowed)
        #expect(osStatus { try device.enclave.sealSyncRecord(SecretBytes("a".utf8), context: contextA, parent: classA, identity: device.identity) } == .interactionNotAllowed)
        #expect(text(try device.enclave.openSyncRecord(recordC, context: contextC, parent: classC, writer: device.keys)) == "c")
        #expect(throws: Never.self) { try device.enclave.signMembershipRecord(self.genesis(device), as: device.identity) }

        try device.keychain.restart()  // before the first unlock: nothing but D
        #expect(osStatus { try device.enclave.openSyncRecord(recordC, context: contextC, parent: classC, writer: device.keys) } == .interactionNotAllowed)
        #expect(osStatus { try device.enclave.signMembershipRecord(self.genesis(device), as: device.identity) } == .interactionNotAllowed)

        try device.enclave.unlock(passcode: passcode)
        #expect(text(try device.enclave.openSyncRecord(recordA, context: contextA, parent: classA, writer: device.keys)) == "a")
        let signed = try device.enclave.signMembershipRecord(genesis(device), as: device.identity)
        #expect(try MembershipState(genesis: signed).members[device.keys.device] == device.keys)
    }

    func text(_ secret: SecretBytes) -> String { secret.withUnsafeBytes { String(decoding: $0, as: UTF8.self) } }

    func genesis(_ device: Device) -> MembershipRecord {
        MembershipRecord.unsigned(
            account: account, index: 0, previous: MembershipRecord.genesisPrevious, operation: .genesis(device.keys), signer: device.keys.device)
    }
}
