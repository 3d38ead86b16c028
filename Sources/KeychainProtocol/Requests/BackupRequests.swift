public import KeychainModel

extension Service {
    /// Writes a backup of the keychain to `path` (absolute), under `password`.
    public struct CreateBackup: ServiceRequest, Codable {
        public static let authorization = Authorization.securityToolWithPresence(operation: "making a backup")
        public var path: String
        public var password: SecretBytes

        /// How many items the archive holds, and how many were left out and why.
        public struct Response: WireCodable, Hashable, Codable {
            public var backedUp: UInt32
            /// WhenPasscodeSetThisDeviceOnly items: never in a backup.
            public var passcodeSetItems: UInt32
            /// Items under an application password.
            public var applicationPasswordItems: UInt32
            /// Items that could not be read (their class unavailable, or damaged).
            public var unreadable: UInt32

            public init(backedUp: UInt32, passcodeSetItems: UInt32, applicationPasswordItems: UInt32, unreadable: UInt32) {
                self.backedUp = backedUp
                self.passcodeSetItems = passcodeSetItems
                self.applicationPasswordItems = applicationPasswordItems
                self.unreadable = unreadable
            }
        }

        public init(path: String, password: SecretBytes) {
            self.path = path
            self.password = password
        }
    }

    /// Restores the backup at `path` (absolute) into the keychain.
    public struct RestoreBackup: ServiceRequest, Codable {
        public static let authorization = Authorization.securityTool(operation: "restoring backups")
        public var path: String
        public var password: SecretBytes

        /// What the restore did with each record, and whether this device made the archive.
        public struct Response: WireCodable, Hashable, Codable {
            public var restored: UInt32
            public var replaced: UInt32
            public var keptExisting: UInt32
            /// ThisDeviceOnly items of another device: left out.
            public var otherDeviceOnly: UInt32
            /// Items bound to another device's biometric enrollment: left out.
            public var otherDeviceEnrollment: UInt32
            public var sameDevice: Bool

            public init(
                restored: UInt32,
                replaced: UInt32,
                keptExisting: UInt32,
                otherDeviceOnly: UInt32,
                otherDeviceEnrollment: UInt32,
                sameDevice: Bool
            ) {
                self.restored = restored
                self.replaced = replaced
                self.keptExisting = keptExisting
                self.otherDeviceOnly = otherDeviceOnly
                self.otherDeviceEnrollment = otherDeviceEnrollment
                self.sameDevice = sameDevice
            }
        }

        public init(path: String, password: SecretBytes) {
            self.path = path
            self.password = password
        }
    }
}
