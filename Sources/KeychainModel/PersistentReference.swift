public import FoundationEssentials

/// A stable reference to one item (`kSecValuePersistentRef`): its class's four
/// characters followed by the 16 bytes of the row's UUID.
public struct PersistentReference: Sendable, Hashable {
    public let itemClass: ItemClass
    public let uuid: UUID

    public init(itemClass: ItemClass, uuid: UUID) {
        self.itemClass = itemClass
        self.uuid = uuid
    }

    /// The 20 bytes a caller holds.
    public var data: Data {
        var bytes = Data(itemClass.rawValue.utf8)
        withUnsafeBytes(of: uuid.uuid) { bytes.append(contentsOf: $0) }
        return bytes
    }

    /// Parses a reference a caller returned.
    ///
    /// - Throws: `errSecParam` when `data` is not a reference of this format.
    public init(data: Data) throws {
        guard data.count == 20,
            let name = String(bytes: data.prefix(4), encoding: .utf8),
            let itemClass = ItemClass(rawValue: name), itemClass != .identity
        else {
            throw KeychainError.param("the persistent reference is not valid")
        }
        let b = Array(data.dropFirst(4))
        self.itemClass = itemClass
        self.uuid = UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7],
                                b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]))
    }
}
