import KeychainModel
import SyncProtocol

/// The change hints of one server instance: each open `/v1/notify` socket subscribes to its
/// account's hints, and every write the instance learns of — its own on SQLite, every
/// instance's through PostgreSQL's NOTIFY — is published to them.
///
/// A hint is only a nudge to pull. A slow socket keeps the newest few and drops the rest;
/// nothing here waits on a device.
public final class ChangeHints: Sendable {
    /// Sockets one account may hold open on one instance: a user's few devices, with room
    /// for reconnects whose old socket has not timed out yet.
    public static let socketsPerAccount = 32
    /// Hints a socket buffers before dropping the oldest.
    static let buffered = 64

    private struct Table {
        var next: UInt64 = 0
        var subscribers: [SyncIdentifier: [UInt64: AsyncStream<ChangeHint>.Continuation]] = [:]
    }

    private let table = BlockingMutex(Table())

    public init() {}

    /// The account's hints from now on, or nil when it already holds
    /// ``socketsPerAccount`` subscriptions. Ending the iteration unsubscribes.
    public func subscribe(account: SyncIdentifier) -> AsyncStream<ChangeHint>? {
        let (stream, continuation) = AsyncStream.makeStream(of: ChangeHint.self, bufferingPolicy: .bufferingNewest(Self.buffered))
        let id: UInt64? = table.withLock { table in
            guard table.subscribers[account, default: [:]].count < Self.socketsPerAccount else { return nil }
            table.next += 1
            table.subscribers[account, default: [:]][table.next] = continuation
            return table.next
        }
        guard let id else { return nil }
        continuation.onTermination = { [weak self] _ in
            self?.table.withLock { table in
                table.subscribers[account]?[id] = nil
                if table.subscribers[account]?.isEmpty == true { table.subscribers[account] = nil }
            }
        }
        return stream
    }

    /// Hands `hint` to every subscriber of `account`.
    public func publish(_ hint: ChangeHint, account: SyncIdentifier) {
        let continuations = table.withLock { Array(($0.subscribers[account] ?? [:]).values) }
        for continuation in continuations { continuation.yield(hint) }
    }

    /// Ends every subscription (the server is stopping).
    func finishAll() {
        let continuations = table.withLock { table in table.subscribers.values.flatMap(\.values) }
        for continuation in continuations { continuation.finish() }
    }

    // MARK: PostgreSQL's NOTIFY

    /// The channel that carries hints between instances sharing one PostgreSQL database.
    static let channel = "trousseau_sync"

    /// A NOTIFY payload: `account/zone/seq`, the zone empty for the membership chain.
    /// Identifiers never hold a `/` (``SyncIdentifier``).
    static func payload(_ hint: ChangeHint, account: SyncIdentifier) -> String {
        "\(account.rawValue)/\(hint.zone?.rawValue ?? "")/\(hint.seq)"
    }

    /// Reads a payload back; nil for anything else on the channel.
    static func parse(_ payload: String) -> (account: SyncIdentifier, hint: ChangeHint)? {
        let parts = payload.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 3, let account = SyncIdentifier(String(parts[0])), let seq = Int64(parts[2]), seq >= 0 else { return nil }
        if parts[1].isEmpty { return (account, ChangeHint(zone: nil, seq: seq)) }
        guard let zone = SyncIdentifier(String(parts[1])) else { return nil }
        return (account, ChangeHint(zone: zone, seq: seq))
    }
}
