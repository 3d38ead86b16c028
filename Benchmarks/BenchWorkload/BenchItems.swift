import Foundation
import KeychainModel

/// The items every benchmark fills a keychain with: generic passwords of one service named
/// `item-0`, `item-1`, … whose 32-byte secrets differ (and are not secret).
public enum BenchItems {
    public static let service = "bench.trousseau.example"
    /// The size of every item's secret.
    public static let secretSize = 32

    public static func query(account: String) -> [String: KeychainValue] {
        [
            QueryKey.itemClass: .string(ItemClass.genericPassword.rawValue),
            "svce": .string(service),
            "acct": .string(account),
        ]
    }

    /// The data of item `index` (at `version` after that many updates' worth of seeds).
    public static func secret(_ index: Int, version: UInt64 = 0) -> Data {
        var generator = SplitMix64(seed: UInt64(index) &* 31 &+ version)
        return Data((0..<secretSize).map { _ in UInt8(truncatingIfNeeded: generator.next()) })
    }

    public static func addQuery(account: String, secret: Data) -> [String: KeychainValue] {
        var query = query(account: account)
        query[QueryKey.valueData] = .data(secret)
        return query
    }
}
