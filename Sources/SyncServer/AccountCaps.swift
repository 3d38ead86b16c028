import SyncCrypto
import SyncProtocol

/// The caps on the rows of an account that its record quota (``SyncQuota``) does not count:
/// its membership chain and its devices' credentials. Without them one account — anyone's,
/// under `--open-registration` — could fill the database with chain entries or credentials.
/// Past a cap the store throws `.quotaExceeded`, which the routes answer 507, as a full quota.
enum AccountCaps {
    /// Refuses an entry that would grow the chain by an add to ``SyncLimits/membershipChain``
    /// entries or past it, before the database is asked. A removal is taken past the cap — a
    /// circle that is full must still be able to remove a lost device and rotate its keys —
    /// up to twice the cap, which no chain can pass: each removal removes a member that
    /// the genesis or an add below the cap brought in.
    ///
    /// The entry is only read here; the chain's checks (``MembershipAppendCheck``) come after.
    /// Something that does not read as an entry is left to them, below the cap, and refused
    /// here at or past it.
    static func checkRoom(forMembership entry: MembershipEntry) throws {
        let cap = Int64(SyncLimits.membershipChain)
        guard entry.index >= cap else { return }
        if entry.index < 2 * cap, let record = try? MembershipRecord(decoding: entry.entry), case .remove = record.operation {
            return
        }
        throw SyncStoreError(
            .quotaExceeded,
            "the account's device list is full (\(SyncLimits.membershipChain) entries): no device can be added to it "
                + "(a removal is still taken); a new circle can add devices again")
    }

    /// Refuses a new device's credential when the account holds `held` already and that is
    /// the cap (``SyncLimits/devicesPerAccount``).
    static func checkRoom(forDeviceAfter held: Int64) throws {
        guard held < Int64(SyncLimits.devicesPerAccount) else {
            throw SyncStoreError(
                .quotaExceeded,
                "the account holds \(SyncLimits.devicesPerAccount) devices' credentials, the most it may: revoke one before adding another")
        }
    }
}
