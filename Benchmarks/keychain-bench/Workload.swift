import KeychainClient
import KeychainModel

/// The operations the benchmark times through the daemon, each a real SecItem call on
/// items of ``BenchKeychain``.
enum Workload: String, CaseIterable, Sendable {
    case add = "add"
    case findAttributes = "find attributes"
    case findData = "find with data"
    case findMissing = "find missing"
    case update = "update"
    case delete = "delete"

    /// What the operation cannot avoid: a round trip to another process, and the
    /// SQLite work — a point lookup for reads, a durable commit for writes.
    var floorParts: [String] {
        switch self {
        case .findAttributes, .findData, .findMissing: [Floors.Name.socket, Floors.Name.lookup]
        case .add, .update, .delete: [Floors.Name.socket, Floors.Name.commit]
        }
    }

    /// Runs operation number `n` of `share` in a keychain of `items` items. Adds make
    /// items `extra-<tag>-<n>` that the delete of the same tag and client count removes.
    func perform(_ share: ConcurrentLoad.Share, _ n: Int, items: Int, tag: String) throws {
        let client = share.client
        // Random items, the same ones in every run; no state shared between threads.
        var generator = SplitMix64(seed: UInt64(share.offset + n) &* 0x2545_F491_4F6C_DD1D &+ UInt64(items))
        switch self {
        case .add:
            let account = "extra-\(tag)-\(share.offset + n)"
            _ = try client.add(BenchKeychain.addQuery(account: account, secret: BenchKeychain.secret(share.offset + n)))
        case .findAttributes, .findData:
            let index = Int.random(in: 0..<items, using: &generator)
            var query = BenchKeychain.query(account: "item-\(index)")
            query[self == .findData ? QueryKey.returnData : QueryKey.returnAttributes] = .bool(true)
            guard try client.copyMatching(query) != nil else { throw BenchError("\(rawValue) returned nothing") }
        case .findMissing:
            var query = BenchKeychain.query(account: "missing-\(generator.next())")
            query[QueryKey.returnData] = .bool(true)
            do {
                _ = try client.copyMatching(query)
                throw BenchError("a missing item was found")
            } catch let error as KeychainError where error == .itemNotFound {}
        case .update:
            let index = Int.random(in: 0..<items, using: &generator)
            try client.update(
                BenchKeychain.query(account: "item-\(index)"),
                attributes: [QueryKey.valueData: .data(BenchKeychain.secret(index, version: generator.next()))])
        case .delete:
            try client.delete(BenchKeychain.query(account: "extra-\(tag)-\(share.offset + n)"))
        }
    }
}

extension Floors {
    /// The floors' names in reports.
    enum Name {
        static let socket = "unix socket round trip"
        static let lookup = "sqlite indexed lookup"
        static let commit = "sqlite durable commit"
        static let aes = "aes-256-gcm open"
        static let spawn = "process spawn"
    }
}
