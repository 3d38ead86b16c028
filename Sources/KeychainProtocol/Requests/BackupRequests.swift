public import KeychainModel

extension Service {
    /// Writes a backup of the keychain to `path` (absolute), under `password`.
    @WireStruct
    public struct CreateBackup: ServiceRequest {
        public static let authorization = Authorization.securityToolWithPresence(operation: "making a backup")
        public var path: String
        public var password: SecretBytes

        /// How many items the archive holds, and how many were left out and why.
        @WireStruct
        public struct Response: WireCodable, Hashable {
            public var backedUp: UInt32
            /// WhenPasscodeSetThisDeviceOnly items: never in a backup.
            public var passcodeSetItems: UInt32
            /// Items under an application password.
            public var applicationPasswordItems: UInt32
            /// Items that could not be read (their class unavailable, or damaged).
            public var unreadable: UInt32
        }
    }

    /// Restores the backup at `path` (absolute) into the keychain.
    @WireStruct
    public struct RestoreBackup: ServiceRequest {
        public static let authorization = Authorization.securityTool(operation: "restoring backups")
        public var path: String
        public var password: SecretBytes

        /// What the restore did with each record, and whether this device made the archive.
        @WireStruct
        public struct Response: WireCodable, Hashable {
            public var restored: UInt32
            public var replaced: UInt32
            public var keptExisting: UInt32
            /// ThisDeviceOnly items of another device: left out.
            public var otherDeviceOnly: UInt32
            /// Items bound to another device's biometric enrollment: left out.
            public var otherDeviceEnrollment: UInt32
            public var sameDevice: Bool
        }
    }
}
