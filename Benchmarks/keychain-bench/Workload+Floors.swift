import BenchWorkload

extension Workload {
    /// What the operation cannot avoid: a round trip to another process, and the
    /// SQLite work — a point lookup for reads, a durable commit for writes.
    var floorParts: [String] {
        switch self {
        case .findAttributes, .findData, .findMissing: [Floors.Name.socket, Floors.Name.lookup]
        case .add, .update, .delete: [Floors.Name.socket, Floors.Name.commit]
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
