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
    public struct ServeSecretService: ServiceRequest, Codable {
        public static let authorization = Authorization.anyCaller
        public var busAddress: String

        public init(busAddress: String) {
            self.busAddress = busAddress
        }
    }
}

extension Service {
    /// Moves a gnome-keyring keyring file's items (version 0, gnome-keyring's; version 1,
    /// libsecret's file backend) into the Secret Service's host scope, with their labels,
    /// attributes, secrets and dates (`security import-keyring`). securityd reads the file.
    public struct ImportKeyring: ServiceRequest, Codable {
        public typealias Response = KeyringImportReport
        public static let authorization = Authorization.securityTool(operation: "importing a keyring file")
        public var file: Data
        public var password: SecretBytes

        public init(file: Data, password: SecretBytes) {
            self.file = file
            self.password = password
        }
    }

    /// What an import did: items added, items here that the file's newer copy replaced, and
    /// items left alone (already here, or newer here).
    public struct KeyringImportReport: WireCodable, Sendable, Hashable, Codable {
        public var label: String
        public var imported: UInt32
        public var updated: UInt32
        public var unchanged: UInt32

        public init(label: String, imported: UInt32, updated: UInt32, unchanged: UInt32) {
            self.label = label
            self.imported = imported
            self.updated = updated
            self.unchanged = unchanged
        }
    }
}
