public import FoundationEssentials

/// A hybrid logical clock value (Kulkarni et al., "Logical Physical Clocks", 2014): the
/// wall clock in milliseconds since 1970 in the high 48 bits, a counter in the low 16. Values
/// one device issues only grow, even when its wall clock steps back; a device that has seen
/// another's value issues larger ones after it. Sync orders concurrent writes of one
/// attribute by it (the writer's device id breaks a tie).
public struct HybridLogicalClock: RawRepresentable, Comparable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: Int64

    public init(rawValue: Int64) {
        self.rawValue = rawValue
    }

    /// The clock's reading of a wall-clock instant, counter zero.
    public static func wall(_ date: Date) -> HybridLogicalClock {
        let milliseconds = max(0, min(Int64(date.timeIntervalSince1970 * 1000), (1 << 47) - 1))
        return HybridLogicalClock(rawValue: milliseconds << 16)
    }

    /// The value to issue after this one at wall time `now`: later than both.
    public func next(at now: Date) -> HybridLogicalClock {
        Swift.max(HybridLogicalClock(rawValue: rawValue &+ 1), Self.wall(now))
    }

    /// The wall-clock instant the value was issued at (to the millisecond).
    public var date: Date {
        Date(timeIntervalSince1970: Double(rawValue >> 16) / 1000)
    }

    public static func < (lhs: HybridLogicalClock, rhs: HybridLogicalClock) -> Bool { lhs.rawValue < rhs.rawValue }

    public var description: String { "\(rawValue >> 16).\(rawValue & 0xffff)" }
}
