public import FoundationEssentials
public import KeychainCrypto
public import KeychainModel

/// What the store needs from an open backup keybag to write or read an archive's records;
/// the enclave client implements it over the enclave protocol.
public protocol BackupKeys: Sendable {
    /// The metadata key of the backup class `protection`.
    func metadataKey(for protection: ProtectionClass) throws -> MetadataKey
    /// A row's secret blob re-sealed for a backup record (see ``SoftwareKeybag/exportSecret(session:_:protection:rowAssociatedData:recordAssociatedData:)``).
    func exportSecret(_ blob: Data, protection: ProtectionClass, rowAssociatedData: Data, recordAssociatedData: Data) throws -> Data
    /// A backup record's secret blob re-sealed for a row.
    func importSecret(_ blob: Data, protection: ProtectionClass, recordAssociatedData: Data, rowAssociatedData: Data) throws -> Data
}
