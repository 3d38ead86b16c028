public import FoundationEssentials
public import KeychainModel

extension Service {
    /// Asks a running securityd to serve the freedesktop Secret Service on the session bus at
    /// `busAddress` (what `securityd --secret-service`, started by D-Bus activation, sends when
    /// this keychain's daemon already runs). Answered once the daemon has asked the bus for
    /// the name; errSecDuplicateItem when another process owns it.
    ///
    /// Any process of the user may ask: the bus named is trusted as the session's, as the
    /// bus an activated daemon finds in its environment is (docs/SECURITY.md, "Secret Service").
    @WireStruct
    public struct ServeSecretService: ServiceRequest {
        public static let authorization = Authorization.anyCaller
        public var busAddress: String
    }
}

extension Service {
    /// Moves a gnome-keyring keyring file's items (version 0, gnome-keyring's; version 1,
    /// libsecret's file backend) into the Secret Service's host scope, with their labels,
    /// attributes, secrets and dates (`security import-keyring`). securityd reads the file.
    @WireStruct
    public struct ImportKeyring: ServiceRequest {
        public typealias Response = KeyringImportReport
        public static let authorization = Authorization.securityTool(operation: "importing a keyring file")
        public var file: Data
        public var password: SecretBytes
    }

    /// What an import did: items added, items here that the file's newer copy replaced, and
    /// items left alone (already here, or newer here).
    @WireStruct
    public struct KeyringImportReport: WireCodable, Sendable, Hashable {
        public var label: String
        public var imported: UInt32
        public var updated: UInt32
        public var unchanged: UInt32
    }
}
