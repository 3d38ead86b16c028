import FoundationEssentials
import KeychainModel
import SyncEngine
import KeychainTestSupport
import Testing

/// The three-way merge: one side's change is kept, both sides' by the newer stamp with the
/// loser reported, an edit after a delete wins; merging in any order converges.
@Suite struct ItemMergeTests {
    typealias Stamp = SyncItemPayload.Stamp
    typealias Field = SyncItemPayload.Field

    static func stamp(_ clock: Int64, _ writer: String) -> Stamp { Stamp(clock: HybridLogicalClock(rawValue: clock), writer: writer) }

    static func item(_ attributes: [String: KeychainValue], secret: String? = "pw") -> KeychainItem {
        KeychainItem(
            itemClass: .genericPassword, attributes: attributes, accessGroup: "com.example.app", protection: .whenUnlocked,
            synchronizable: true, tombstone: false, persistentReference: PersistentReference(itemClass: .genericPassword, uuid: UUID()),
            data: secret.map { SecretBytes(Array($0.utf8)) })
    }

    let base = ItemMerge.stamp(
        item(["acct": .string("alice"), "svce": .string("mail"), "labl": .string("Mail")]), of: .genericPassword, against: nil, with: stamp(10, "dev-a"))

    @Test func stampingKeepsTheBaseStampOfUnchangedFields() {
        let changed = ItemMerge.stamp(
            Self.item(["acct": .string("alice"), "svce": .string("mail"), "labl": .string("Work mail")]), of: .genericPassword, against: base, with: Self.stamp(20, "dev-b"))
        #expect(changed.fields["acct"] == base.fields["acct"])
        #expect(changed.fields["labl"] == Field(.string("Work mail"), Self.stamp(20, "dev-b")))
        #expect(changed.secret == base.secret, "the secret did not change")
        let removed = ItemMerge.stamp(Self.item(["acct": .string("alice"), "svce": .string("mail")]), of: .genericPassword, against: base, with: Self.stamp(21, "dev-b"))
        #expect(removed.fields["labl"] == Field(nil, Self.stamp(21, "dev-b")), "a removed attribute is a field set to nothing")
        #expect(ItemMerge.stamp(nil, of: .genericPassword, against: base, with: Self.stamp(22, "dev-b")).deletion == Self.stamp(22, "dev-b"))
        #expect(ItemMerge.stamp(nil, of: .genericPassword, against: base, with: Self.stamp(22, "dev-b")).isDeleted)
    }

    @Test func aFieldChangedOnOneSideKeepsThatChange() {
        let local = ItemMerge.stamp(Self.item(["acct": .string("alice"), "svce": .string("mail"), "labl": .string("Local label")]), of: .genericPassword, against: base, with: Self.stamp(30, "dev-a"))
        // The remote side changed only the secret, earlier than the local change.
        let remote = ItemMerge.stamp(Self.item(["acct": .string("alice"), "svce": .string("mail"), "labl": .string("Mail")], secret: "new"), of: .genericPassword, against: base, with: Self.stamp(20, "dev-b"))
        let outcome = ItemMerge.merge(base: base, local: local, remote: remote)
        #expect(outcome.merged.attributes["labl"] == .string("Local label"))
        #expect(outcome.merged.secret?.value?.isEqual(to: SecretBytes(Array("new".utf8))) == true)
        #expect(outcome.lost == nil, "nothing was changed on both sides")
    }

    @Test func bothSidesChangedTheNewerWinsAndTheOtherIsLost() {
        let local = ItemMerge.stamp(Self.item(["acct": .string("alice"), "svce": .string("mail"), "labl": .string("Mine")], secret: "local"), of: .genericPassword, against: base, with: Self.stamp(40, "dev-a"))
        let remote = ItemMerge.stamp(Self.item(["acct": .string("alice"), "svce": .string("mail"), "labl": .string("Theirs")], secret: "remote"), of: .genericPassword, against: base, with: Self.stamp(50, "dev-b"))
        let outcome = ItemMerge.merge(base: base, local: local, remote: remote)
        #expect(outcome.merged.attributes["labl"] == .string("Theirs"))
        #expect(outcome.merged.secret?.value?.isEqual(to: SecretBytes(Array("remote".utf8))) == true)
        #expect(outcome.lost?.fields["labl"]?.value == .string("Mine"))
        #expect(outcome.lost?.secret?.value?.isEqual(to: SecretBytes(Array("local".utf8))) == true)
        #expect(outcome.lost?.fields["acct"] == nil, "an unchanged field is not lost")
    }

    @Test func equalClocksAreBrokenByTheDeviceID() {
        let a = ItemMerge.stamp(Self.item(["acct": .string("alice"), "svce": .string("mail"), "labl": .string("A")]), of: .genericPassword, against: base, with: Self.stamp(60, "dev-a"))
        let b = ItemMerge.stamp(Self.item(["acct": .string("alice"), "svce": .string("mail"), "labl": .string("B")]), of: .genericPassword, against: base, with: Self.stamp(60, "dev-b"))
        #expect(ItemMerge.merge(base: base, local: a, remote: b).merged.attributes["labl"] == .string("B"))
        #expect(ItemMerge.merge(base: base, local: b, remote: a).merged.attributes["labl"] == .string("B"))
    }

    @Test func anEditAfterADeleteWinsAndADeleteAfterAnEditWins() {
        let deleted = ItemMerge.stamp(nil, of: .genericPassword, against: base, with: Self.stamp(70, "dev-a"))
        #expect(deleted.isDeleted && deleted.secret?.value == nil, "a deleted item's record keeps no secret")
        let editedLater = ItemMerge.stamp(Self.item(["acct": .string("alice"), "svce": .string("mail"), "labl": .string("Back")]), of: .genericPassword, against: base, with: Self.stamp(80, "dev-b"))
        let revived = ItemMerge.merge(base: base, local: deleted, remote: editedLater)
        #expect(!revived.merged.isDeleted && revived.merged.attributes["labl"] == .string("Back"))
        #expect(revived.merged.attributes["acct"] == .string("alice") && revived.merged.secret?.value != nil, "the whole item is back")
        #expect(ItemMerge.merge(base: base, local: editedLater, remote: deleted).merged == revived.merged)

        let editedEarlier = ItemMerge.stamp(Self.item(["acct": .string("alice"), "svce": .string("mail"), "labl": .string("Gone")]), of: .genericPassword, against: base, with: Self.stamp(65, "dev-b"))
        let gone = ItemMerge.merge(base: base, local: editedEarlier, remote: deleted)
        #expect(gone.merged.isDeleted && gone.merged.secret?.value == nil)
        #expect(gone.lost?.attributes["labl"] == .string("Gone"), "the edit the delete overtook is kept")
    }

    /// Random concurrent edits by three devices from one base, merged pairwise in every
    /// order: every order gives the same item (seeded, repeatable).
    @Test(arguments: 0..<200) func anyMergeOrderConverges(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        let labels = ["A", "B", "C", nil]
        let secrets = ["s1", "s2", nil]
        let versions = ["dev-a", "dev-b", "dev-c"].map { device in
            var attributes: [String: KeychainValue] = ["acct": .string("alice"), "svce": .string("mail")]
            if let label = labels[Int(random.next() % 4)] { attributes["labl"] = .string(label) }
            if random.next() % 2 == 0 { attributes["icmt"] = .string("comment by \(device)") }
            let item = random.next() % 5 == 0 ? nil : Self.item(attributes, secret: secrets[Int(random.next() % 3)])
            return ItemMerge.stamp(item, of: .genericPassword, against: base, with: Self.stamp(100 + Int64(random.next() % 3), device))
        }
        func merged(_ order: [Int]) -> SyncItemPayload {
            // Each device merges what it has with the next one's, as devices pulling would.
            var current = versions[order[0]]
            var currentBase = base
            for index in order.dropFirst() {
                current = ItemMerge.merge(base: currentBase, local: current, remote: versions[index]).merged
                currentBase = base
            }
            return current
        }
        for version in versions {
            #expect(ItemMerge.merge(base: base, local: version, remote: version).merged == version, "idempotent, seed \(seed)")
        }
        // Grouped the other way: the third device merges the first two's result.
        let grouped = ItemMerge.merge(base: base, local: versions[0], remote: ItemMerge.merge(base: base, local: versions[1], remote: versions[2]).merged).merged
        let orders = [[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]]
        let results = orders.map(merged)
        #expect(grouped == results[0], "associative, seed \(seed)")
        for result in results.dropFirst() {
            #expect(result == results[0], "seed \(seed)")
        }
    }
}
