import Foundation
import KeychainClient
import KeychainModel

/// The operations the benchmarks run through the daemon, each a real SecItem call on
/// ``BenchItems`` (keychain-bench times them; keychain-instructions counts their instructions).
public enum Workload: String, CaseIterable, Sendable {
    case add = "add"
    case findAttributes = "find attributes"
    case findData = "find with data"
    case findMissing = "find missing"
    case update = "update"
    case delete = "delete"

    /// Runs operation number `offset + n` through `client` in a keychain of `items` items.
    /// Adds make items `extra-<tag>-<offset + n>` that the delete of the same tag and numbers
    /// removes.
    public func perform(client: KeychainClient, offset: Int, _ n: Int, items: Int, tag: String) throws {
        // Random items, the same ones in every run; no state shared between threads.
        var generator = SplitMix64(seed: UInt64(offset + n) &* 0x2545_F491_4F6C_DD1D &+ UInt64(items))
        switch self {
        case .add:
            let account = "extra-\(tag)-\(offset + n)"
            _ = try client.add(BenchItems.addQuery(account: account, secret: BenchItems.secret(offset + n)))
        case .findAttributes, .findData:
            let index = Int.random(in: 0..<items, using: &generator)
            var query = BenchItems.query(account: "item-\(index)")
            query[self == .findData ? QueryKey.returnData : QueryKey.returnAttributes] = .bool(true)
            guard try client.copyMatching(query) != nil else { throw WorkloadError("\(rawValue) returned nothing") }
        case .findMissing:
            var query = BenchItems.query(account: "missing-\(generator.next())")
            query[QueryKey.returnData] = .bool(true)
            do {
                _ = try client.copyMatching(query)
                throw WorkloadError("a missing item was found")
            } catch let error as KeychainError where error == .itemNotFound {}
        case .update:
            let index = Int.random(in: 0..<items, using: &generator)
            try client.update(
                BenchItems.query(account: "item-\(index)"),
                attributes: [QueryKey.valueData: .data(BenchItems.secret(index, version: generator.next()))])
        case .delete:
            try client.delete(BenchItems.query(account: "extra-\(tag)-\(offset + n)"))
        }
    }
}

/// A benchmark that cannot go on, and why: an operation that did not do what it should, or a
/// measurement that could not be made.
public struct WorkloadError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
