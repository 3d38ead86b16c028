public import KeychainModel

/// The three-way merge of an item's versions: what this device holds, what the server
/// holds, and the base both came from (the version this device last acknowledged).
///
/// Each field is a last-writer-wins register: a field changed on one side only keeps that
/// change (its stamp is the newer one, as the other side's is the base's); changed on both
/// sides, the newer stamp wins — clock first, then the writer's device id — and the other
/// value is reported as lost, for the history. Deletions are a register of their own: the
/// item is deleted while no field was set after its latest deletion, so an edit made after
/// a delete brings the item back and a delete after an edit removes it. The merge is the
/// join of a semilattice (commutative, associative, idempotent): devices that merge the same
/// versions in any order hold the same item.
public enum ItemMerge {
    public typealias Stamp = SyncItemPayload.Stamp

    /// The result of a merge.
    public struct Outcome: Sendable, Equatable {
        public var merged: SyncItemPayload
        /// The values that lost to a concurrent change (as their writers stamped them), or
        /// nil when no write was lost.
        public var lost: SyncItemPayload?
    }

    /// This device's item as a payload against `base`: a field equal to the base keeps the
    /// base's stamp, any other (changed, added or removed here) gets `stamp`. A nil item is
    /// the base deleted at `stamp`.
    public static func stamp(_ item: KeychainItem?, of itemClass: ItemClass, against base: SyncItemPayload?, with stamp: Stamp) -> SyncItemPayload {
        guard let item else { return .tombstone(of: base, itemClass, stamp) }
        var values = item.attributes
        values[SyncItemPayload.Name.accessGroup] = .string(item.accessGroup)
        values[SyncItemPayload.Name.protection] = .string(item.protection.rawValue)
        var fields: [String: SyncItemPayload.Field] = [:]
        for name in SyncItemPayload.fieldNames(of: item.itemClass) {
            let value = values[name]
            if let baseField = base?.fields[name], baseField.value == value {
                fields[name] = baseField
            } else if value != nil || base?.fields[name] != nil {
                fields[name] = SyncItemPayload.Field(value, stamp)
            }
        }
        let secret: SyncItemPayload.SecretField?
        if let baseSecret = base?.secret, SyncItemPayload.SecretField.same(baseSecret.value, item.data) {
            secret = baseSecret
        } else if item.data != nil || base?.secret != nil {
            secret = SyncItemPayload.SecretField(item.data, stamp)
        } else {
            secret = nil
        }
        // A base deleted and still here is an item edited after its deletion was merged:
        // the deletion stays in the register, and the edit's stamp is the later.
        return SyncItemPayload(itemClass: item.itemClass, fields: fields, secret: secret, deletion: base?.deletion)
    }

    /// Merges `local` and `remote`, versions of one record, against their common `base`
    /// (nil: the record is new to this device).
    public static func merge(base: SyncItemPayload?, local: SyncItemPayload, remote: SyncItemPayload) -> Outcome {
        var merged = SyncItemPayload(itemClass: local.itemClass, fields: [:], secret: nil)
        for name in Set(local.fields.keys).union(remote.fields.keys) {
            merged.fields[name] = later(local.fields[name], remote.fields[name]) { ($0.stamp, $0.value != nil) }
        }
        merged.secret = later(local.secret, remote.secret) { ($0.stamp, $0.value != nil) }
        merged.deletion = later(local.deletion, remote.deletion) { ($0, true) }
        if merged.isDeleted { merged.secret?.value = nil }
        return Outcome(merged: merged, lost: lost(base: base, local, remote, merged: merged))
    }

    /// What a concurrent change lost: a live side's edits since the base when the merge
    /// deleted the item; otherwise each field both sides changed since the base, to
    /// different values, as the side that lost it had it.
    private static func lost(base: SyncItemPayload?, _ local: SyncItemPayload, _ remote: SyncItemPayload, merged: SyncItemPayload) -> SyncItemPayload? {
        let baseEdit = base?.latestEdit
        if merged.isDeleted {
            let overtaken = [local, remote].first { side in
                !side.isDeleted && side.latestEdit.map { edit in baseEdit.map { edit > $0 } ?? true } == true
            }
            return overtaken
        }
        guard !local.isDeleted, !remote.isDeleted else { return nil }
        var lost = SyncItemPayload(itemClass: local.itemClass, fields: [:], secret: nil)
        for name in Set(local.fields.keys).union(remote.fields.keys) {
            let (l, r, b) = (local.fields[name], remote.fields[name], base?.fields[name])
            // A modification date always differs between two edits: no one's value to keep.
            guard l != b, r != b, l?.value != r?.value, name != ItemSchema.Name.modificationDate else { continue }
            lost.fields[name] = merged.fields[name] == l ? r : l
        }
        let (l, r, b) = (local.secret, remote.secret, base?.secret)
        if l != b, r != b, !SyncItemPayload.SecretField.same(l?.value, r?.value) {
            lost.secret = merged.secret == l ? r : l
        }
        return lost.fields.isEmpty && lost.secret == nil ? nil : lost
    }

    /// The later of two optional registers by `order` (a register one side lacks is older
    /// than any).
    private static func later<Register>(_ a: Register?, _ b: Register?, order: (Register) -> (Stamp, Bool)) -> Register? {
        guard let a else { return b }
        guard let b else { return a }
        let (sa, va) = order(a)
        let (sb, vb) = order(b)
        return (sb, vb ? 1 : 0) > (sa, va ? 1 : 0) ? b : a
    }
}
