public import KeychainModel

extension Service {
    /// Writes a backup of the keychain to `path` (absolute), under `password`.
    public struct CreateBackup: ServiceRequest {
        public static let opcode: UInt8 = 50
        public static let authorization = Authorization.securityToolWithPresence(operation: "making a backup")
        public var path: String
        public var password: SecretBytes

        public init(path: String, password: SecretBytes) {
            self.path = path
            self.password = password
        }

        public init(from reader: inout ByteReader) throws {
            path = try reader.string(limit: 4096)
            password = try reader.secret(limit: Service.passcodeLimit)
        }

        public func encode(to writer: inout ByteWriter) {
            writer.appendLengthPrefixed(path)
            writer.appendSecret(password)
        }

        /// How many items the archive holds, and how many were left out and why.
        public struct Response: WireCodable, Hashable {
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

            public init(from reader: inout ByteReader) throws {
                backedUp = try reader.integer(UInt32.self)
                passcodeSetItems = try reader.integer(UInt32.self)
                applicationPasswordItems = try reader.integer(UInt32.self)
                unreadable = try reader.integer(UInt32.self)
            }

            public func encode(to writer: inout ByteWriter) {
                for count in [backedUp, passcodeSetItems, applicationPasswordItems, unreadable] { writer.appendInteger(count) }
            }
        }
    }

    /// Restores the backup at `path` (absolute) into the keychain.
    public struct RestoreBackup: ServiceRequest {
        public static let opcode: UInt8 = 51
        public static let authorization = Authorization.securityTool(operation: "restoring backups")
        public var path: String
        public var password: SecretBytes

        public init(path: String, password: SecretBytes) {
            self.path = path
            self.password = password
        }

        public init(from reader: inout ByteReader) throws {
            path = try reader.string(limit: 4096)
            password = try reader.secret(limit: Service.passcodeLimit)
        }

        public func encode(to writer: inout ByteWriter) {
            writer.appendLengthPrefixed(path)
            writer.appendSecret(password)
        }

        /// What the restore did with each record, and whether this device made the archive.
        public struct Response: WireCodable, Hashable {
            public var restored: UInt32
            public var replaced: UInt32
            public var keptExisting: UInt32
            /// ThisDeviceOnly items of another device: left out.
            public var otherDeviceOnly: UInt32
            /// Items bound to another device's biometric enrollment: left out.
            public var otherDeviceEnrollment: UInt32
            public var sameDevice: Bool

            public init(restored: UInt32, replaced: UInt32, keptExisting: UInt32, otherDeviceOnly: UInt32, otherDeviceEnrollment: UInt32, sameDevice: Bool) {
                self.restored = restored
                self.replaced = replaced
                self.keptExisting = keptExisting
                self.otherDeviceOnly = otherDeviceOnly
                self.otherDeviceEnrollment = otherDeviceEnrollment
                self.sameDevice = sameDevice
            }

            public init(from reader: inout ByteReader) throws {
                restored = try reader.integer(UInt32.self)
                replaced = try reader.integer(UInt32.self)
                keptExisting = try reader.integer(UInt32.self)
                otherDeviceOnly = try reader.integer(UInt32.self)
                otherDeviceEnrollment = try reader.integer(UInt32.self)
                sameDevice = try Bool(from: &reader)
            }

            public func encode(to writer: inout ByteWriter) {
                for count in [restored, replaced, keptExisting, otherDeviceOnly, otherDeviceEnrollment] { writer.appendInteger(count) }
                sameDevice.encode(to: &writer)
            }
        }
    }
}
