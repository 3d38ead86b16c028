public import KeychainModel

// Sync between a user's devices (`security sync …`): turned on and off by the security tool
// with the user's presence, as iCloud Keychain asks for the password; its state read by the
// tool. securityd runs the engine; the server's URL is the only thing a caller gives.

extension Service {
    /// Founds a sync circle on the server at `server` with this device as its first member.
    public struct EnableSync: ServiceRequest, Codable {
        public typealias Response = SyncStatusReport
        public static let authorization = Authorization.securityToolWithPresence(operation: "turning on sync")
        public var server: String

        public init(server: String) {
            self.server = server
        }
    }

    /// Stops syncing this keychain: forgets the account, keys and queues; keeps every item.
    public struct DisableSync: ServiceRequest, Codable {
        public static let authorization = Authorization.securityToolWithPresence(operation: "turning off sync")

        public init() {}
    }

    /// Runs one round of sync now (pull, merge, send) and says what it did.
    public struct SyncNow: ServiceRequest, Codable {
        public typealias Response = SyncRoundReport
        public static let authorization = Authorization.securityTool(operation: "syncing")

        public init() {}
    }

    /// Where sync stands for this keychain.
    public struct CopySyncStatus: ServiceRequest, Codable {
        public typealias Response = SyncStatusReport
        public static let authorization = Authorization.securityTool(operation: "reading the sync status")

        public init() {}
    }
}

extension Service {
    /// Opens a pairing on the server for a new device to join this device's circle: the code
    /// to show (its first part, the nameplate, names the pairing).
    public struct StartSyncPairing: ServiceRequest, Codable {
        public typealias Response = SyncPairingStarted
        public static let authorization = Authorization.securityTool(operation: "pairing a device")

        public init() {}
    }

    /// Waits (up to the pairing's life) for the device that typed the code: once the join
    /// exchange has proved it knows the code, the device that asks to join.
    public struct AwaitSyncPairing: ServiceRequest, Codable {
        public typealias Response = SyncPairingRequest
        public static let authorization = Authorization.securityTool(operation: "pairing a device")
        public var nameplate: Int64

        public init(nameplate: Int64) {
            self.nameplate = nameplate
        }
    }

    /// Approves (adds to the circle, shares the zone's keys, welcomes) or refuses the device
    /// that asked to join through the pairing `nameplate`.
    public struct ApproveSyncPairing: ServiceRequest, Codable {
        public static let authorization = Authorization.securityToolWithPresence(operation: "adding a device to sync")
        public var nameplate: Int64
        public var approve: Bool

        public init(nameplate: Int64, approve: Bool) {
            self.nameplate = nameplate
            self.approve = approve
        }
    }

    /// Removes `device` from the circle (from any remaining device): appends the removal to
    /// the chain, revokes its server credential, makes new zone and class keys (the new zone
    /// key wraps the old class keys), shares them to the remaining devices, and seals again
    /// under them the records the removed device wrote last.
    public struct RemoveSyncDevice: ServiceRequest, Codable {
        public typealias Response = SyncDeviceRemoved
        public static let authorization = Authorization.securityToolWithPresence(operation: "removing a device from sync")
        public var device: String

        public init(device: String) {
            self.device = device
        }
    }

    /// Adds a recovery key to the circle: a member whose identity the key derives, to which the
    /// zone's keys are shared, so a device that has only the key can join when every device is
    /// lost. The key is in the response, once.
    public struct CreateSyncRecoveryKey: ServiceRequest, Codable {
        public typealias Response = SyncRecoveryKey
        public static let authorization = Authorization.securityToolWithPresence(operation: "making a sync recovery key")

        public init() {}
    }

    /// Joins the circle on `server` whose recovery key is `key` (every device lost): this device
    /// becomes the key's member, adds itself, takes the zone's keys, and syncs.
    public struct RecoverSync: ServiceRequest, Codable {
        public typealias Response = SyncStatusReport
        public static let authorization = Authorization.securityToolWithPresence(operation: "turning on sync")
        public var server: String
        public var key: SecretBytes

        public init(server: String, key: SecretBytes) {
            self.server = server
            self.key = key
        }
    }

    /// Joins the circle of the member showing `code`, through the server at `server`; waits
    /// for the member's approval, then syncs.
    public struct JoinSync: ServiceRequest, Codable {
        public typealias Response = SyncStatusReport
        public static let authorization = Authorization.securityToolWithPresence(operation: "turning on sync")
        public var server: String
        public var code: String

        public init(server: String, code: String) {
            self.server = server
            self.code = code
        }
    }
}

extension Service {
    /// The values of a synchronizable generic password that lost a merge (its sync history),
    /// oldest first; the secrets with `withSecrets`, which needs what reading the item's
    /// secret needs.
    public struct CopySyncHistory: ServiceRequest, Codable {
        public typealias Response = SyncHistoryList
        public static let authorization = Authorization.securityTool(operation: "reading an item's sync history")
        public var account: String
        public var service: String
        public var withSecrets: Bool

        public init(account: String, service: String, withSecrets: Bool) {
            self.account = account
            self.service = service
            self.withSecrets = withSecrets
        }
    }
}

/// An item's lost values.
public struct SyncHistoryList: WireCodable, Codable {
    public var entries: [SyncLostValue]

    public init(entries: [SyncLostValue]) {
        self.entries = entries
    }
}

/// One value that lost a merge: who wrote it and when, and what it held.
public struct SyncLostValue: WireCodable, Codable {
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

    public init(version: Int64, writer: String, written: Double, deleted: Bool, attributes: [String], secret: SecretBytes?) {
        self.version = version
        self.writer = writer
        self.written = written
        self.deleted = deleted
        self.attributes = attributes
        self.secret = secret
    }
}

/// A pairing opened: the code to show.
public struct SyncPairingStarted: WireCodable, Hashable, Codable {
    public var code: String
    public var nameplate: Int64

    public init(code: String, nameplate: Int64) {
        self.code = code
        self.nameplate = nameplate
    }
}

/// What removing a device did.
public struct SyncDeviceRemoved: WireCodable, Hashable, Codable {
    public var device: String
    /// The devices left in the circle.
    public var members: [String]
    /// The new class keys' ids (A, C): what every record written from now on is sealed under.
    public var classKeys: [String]
    /// The removed device's records sealed again under the new keys by this device.
    public var resealed: UInt32

    public init(device: String, members: [String], classKeys: [String], resealed: UInt32) {
        self.device = device
        self.members = members
        self.classKeys = classKeys
        self.resealed = resealed
    }
}

/// A new recovery key, to show once, and the member id it derives.
public struct SyncRecoveryKey: WireCodable, Codable {
    public var key: SecretBytes
    public var device: String

    public init(key: SecretBytes, device: String) {
        self.key = key
        self.device = device
    }
}

/// The device that proved it knows the code and asks to join.
public struct SyncPairingRequest: WireCodable, Hashable, Codable {
    public var device: String

    public init(device: String) {
        self.device = device
    }
}

/// What one round of sync did.
public struct SyncRoundReport: WireCodable, Hashable, Codable {
    public var received: UInt32
    public var refused: UInt32
    public var sent: UInt32
    public var conflicts: UInt32
    public var waiting: UInt32

    public init(received: UInt32, refused: UInt32, sent: UInt32, conflicts: UInt32, waiting: UInt32) {
        self.received = received
        self.refused = refused
        self.sent = sent
        self.conflicts = conflicts
        self.waiting = waiting
    }
}

/// Where sync stands: off, or the account, this device, the circle's members and the queues.
public struct SyncStatusReport: WireCodable, Hashable, Codable {
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

    public init(
        enabled: Bool,
        server: String,
        account: String,
        device: String,
        zone: String,
        members: [String],
        pending: UInt32,
        synced: UInt32,
        waiting: UInt32,
        history: UInt32,
        lastSync: Double?,
        lastError: String?,
        refused: UInt32,
        lastRefused: Double?,
        lastRefusal: String?,
        omitted: UInt32,
        alarm: String?,
        headsAgreed: UInt32,
        notices: [String],
        recovery: String?
    ) {
        self.enabled = enabled
        self.server = server
        self.account = account
        self.device = device
        self.zone = zone
        self.members = members
        self.pending = pending
        self.synced = synced
        self.waiting = waiting
        self.history = history
        self.lastSync = lastSync
        self.lastError = lastError
        self.refused = refused
        self.lastRefused = lastRefused
        self.lastRefusal = lastRefusal
        self.omitted = omitted
        self.alarm = alarm
        self.headsAgreed = headsAgreed
        self.notices = notices
        self.recovery = recovery
    }
}
