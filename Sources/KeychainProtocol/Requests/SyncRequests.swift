public import KeychainModel

// Sync between a user's devices (`security sync …`): turned on and off by the security tool
// with the user's presence, as iCloud Keychain asks for the password; its state read by the
// tool. securityd runs the engine; the server's URL is the only thing a caller gives.

extension Service {
    /// Founds a sync circle on the server at `server` with this device as its first member.
    @WireStruct
    public struct EnableSync: ServiceRequest {
        public typealias Response = SyncStatusReport
        public static let authorization = Authorization.securityToolWithPresence(operation: "turning on sync")
        public var server: String
    }

    /// Stops syncing this keychain: forgets the account, keys and queues; keeps every item.
    @WireStruct
    public struct DisableSync: ServiceRequest {
        public static let authorization = Authorization.securityToolWithPresence(operation: "turning off sync")
    }

    /// Runs one round of sync now (pull, merge, send) and says what it did.
    @WireStruct
    public struct SyncNow: ServiceRequest {
        public typealias Response = SyncRoundReport
        public static let authorization = Authorization.securityTool(operation: "syncing")
    }

    /// Where sync stands for this keychain.
    @WireStruct
    public struct CopySyncStatus: ServiceRequest {
        public typealias Response = SyncStatusReport
        public static let authorization = Authorization.securityTool(operation: "reading the sync status")
    }
}

extension Service {
    /// Opens a pairing on the server for a new device to join this device's circle: the code
    /// to show (its first part, the nameplate, names the pairing).
    @WireStruct
    public struct StartSyncPairing: ServiceRequest {
        public typealias Response = SyncPairingStarted
        public static let authorization = Authorization.securityTool(operation: "pairing a device")
    }

    /// Waits (up to the pairing's life) for the device that typed the code: once the join
    /// exchange has proved it knows the code, the device that asks to join.
    @WireStruct
    public struct AwaitSyncPairing: ServiceRequest {
        public typealias Response = SyncPairingRequest
        public static let authorization = Authorization.securityTool(operation: "pairing a device")
        public var nameplate: Int64
    }

    /// Approves (adds to the circle, shares the zone's keys, welcomes) or refuses the device
    /// that asked to join through the pairing `nameplate`.
    @WireStruct
    public struct ApproveSyncPairing: ServiceRequest {
        public static let authorization = Authorization.securityToolWithPresence(operation: "adding a device to sync")
        public var nameplate: Int64
        public var approve: Bool
    }

    /// Removes `device` from the circle (from any remaining device): appends the removal to
    /// the chain, revokes its server credential, makes new zone and class keys (the new zone
    /// key wraps the old class keys), shares them to the remaining devices, and seals again
    /// under them the records the removed device wrote last.
    @WireStruct
    public struct RemoveSyncDevice: ServiceRequest {
        public typealias Response = SyncDeviceRemoved
        public static let authorization = Authorization.securityToolWithPresence(operation: "removing a device from sync")
        public var device: String
    }

    /// Adds a recovery key to the circle: a member whose identity the key derives, to which the
    /// zone's keys are shared, so a device that has only the key can join when every device is
    /// lost. The key is in the response, once.
    @WireStruct
    public struct CreateSyncRecoveryKey: ServiceRequest {
        public typealias Response = SyncRecoveryKey
        public static let authorization = Authorization.securityToolWithPresence(operation: "making a sync recovery key")
    }

    /// Joins the circle on `server` whose recovery key is `key` (every device lost): this device
    /// becomes the key's member, adds itself, takes the zone's keys, and syncs.
    @WireStruct
    public struct RecoverSync: ServiceRequest {
        public typealias Response = SyncStatusReport
        public static let authorization = Authorization.securityToolWithPresence(operation: "turning on sync")
        public var server: String
        public var key: SecretBytes
    }

    /// Joins the circle of the member showing `code`, through the server at `server`; waits
    /// for the member's approval, then syncs.
    @WireStruct
    public struct JoinSync: ServiceRequest {
        public typealias Response = SyncStatusReport
        public static let authorization = Authorization.securityToolWithPresence(operation: "turning on sync")
        public var server: String
        public var code: String
    }
}

extension Service {
    /// The values of a synchronizable generic password that lost a merge (its sync history),
    /// oldest first; the secrets with `withSecrets`, which needs what reading the item's
    /// secret needs.
    @WireStruct
    public struct CopySyncHistory: ServiceRequest {
        public typealias Response = SyncHistoryList
        public static let authorization = Authorization.securityTool(operation: "reading an item's sync history")
        public var account: String
        public var service: String
        public var withSecrets: Bool
    }
}

/// An item's lost values.
@WireStruct
public struct SyncHistoryList: WireCodable {
    public var entries: [SyncLostValue]
}

/// One value that lost a merge: who wrote it and when, and what it held.
@WireStruct
public struct SyncLostValue: WireCodable {
    /// The record's version whose merge it lost.
    public var version: Int64
    /// The device that wrote it.
    public var writer: String
    /// When it was written, by the writer's clock (seconds since 2001).
    public var written: Double
    /// Whether the losing change was a deletion.
    public var deleted: Bool
    /// Its attributes with text values, as `name=value`.
    public var attributes: [String]
    /// Its secret, when asked for and it held one.
    public var secret: SecretBytes?
}

/// A pairing opened: the code to show.
@WireStruct
public struct SyncPairingStarted: WireCodable, Hashable {
    public var code: String
    public var nameplate: Int64
}

/// What removing a device did.
@WireStruct
public struct SyncDeviceRemoved: WireCodable, Hashable {
    public var device: String
    /// The devices left in the circle.
    public var members: [String]
    /// The new class keys' ids (A, C): what every record written from now on is sealed under.
    public var classKeys: [String]
    /// The removed device's records sealed again under the new keys by this device.
    public var resealed: UInt32
}

/// A new recovery key, to show once, and the member id it derives.
@WireStruct
public struct SyncRecoveryKey: WireCodable {
    public var key: SecretBytes
    public var device: String
}

/// The device that proved it knows the code and asks to join.
@WireStruct
public struct SyncPairingRequest: WireCodable, Hashable {
    public var device: String
}

/// What one round of sync did.
@WireStruct
public struct SyncRoundReport: WireCodable, Hashable {
    public var received: UInt32
    public var refused: UInt32
    public var sent: UInt32
    public var conflicts: UInt32
    public var waiting: UInt32
}

/// Where sync stands: off, or the account, this device, the circle's members and the queues.
@WireStruct
public struct SyncStatusReport: WireCodable, Hashable {
    public var enabled: Bool
    public var server: String
    public var account: String
    public var device: String
    public var zone: String
    /// The circle's members' device ids, this device among them.
    public var members: [String]
    /// Local changes not yet acknowledged by the server.
    public var pending: UInt32
    /// Live records as last acknowledged.
    public var synced: UInt32
    /// Received records waiting for an unlock.
    public var waiting: UInt32
    /// Values that lost a merge, kept in the history.
    public var history: UInt32
    /// The last round's end (seconds since 2001), if one ran since securityd started.
    public var lastSync: Double?
    /// The last round's failure, if it failed.
    public var lastError: String?
    /// Records the server sent that this device refused since securityd started (an older
    /// version, a body that does not open for its place, a writer who is not a member).
    public var refused: UInt32
    /// When the last was refused (seconds since 2001), and why.
    public var lastRefused: Double?
    public var lastRefusal: String?
    /// Record versions the server held but its feed had not given this device, found when
    /// it refused a write against them (the feed was read again), since securityd started.
    public var omitted: UInt32
    /// Why the zone stopped (another device's signed head disagreed with what the server gave
    /// this device), and since when, in plain words; nil while it syncs.
    public var alarm: String?
    /// Other members whose latest signed head was compared with this device's view and agreed.
    public var headsAgreed: UInt32
    /// Other warnings, a sentence each (a member has seen a longer device list than this
    /// device has been given).
    public var notices: [String]
    /// The circle's recovery key's member id (not among `members`), if it has one.
    public var recovery: String?

    /// Sync is off.
    public static let off = SyncStatusReport(
        enabled: false, server: "", account: "", device: "", zone: "", members: [], pending: 0, synced: 0, waiting: 0, history: 0, lastSync: nil,
        lastError: nil, refused: 0, lastRefused: nil, lastRefusal: nil, omitted: 0, alarm: nil,
        headsAgreed: 0, notices: [], recovery: nil)
}
