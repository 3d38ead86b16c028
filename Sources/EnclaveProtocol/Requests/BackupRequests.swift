public import FoundationEssentials
public import KeychainCrypto
public import KeychainModel

/// An archive on the wire is its header (the records stay in securityd): the archive's
/// own format, which its file keeps.
extension BackupArchive: WireLeaf {
    public init(from reader: inout ByteReader) throws {
        try self.init(header: &reader)
    }

    public func encode(to writer: inout ByteWriter) {
        encodeHeader(to: &writer)
    }
}

/// An item key crosses the wire in zeroing storage.
extension ItemKey: WireLeaf {
    public init(from reader: inout ByteReader) throws {
        try self.init(bytes: reader.secret(limit: reader.remaining))
    }

    public func encode(to writer: inout ByteWriter) {
        writer.appendSecret(secretBytes)
    }
}

extension EnclaveCall {
    /// A new backup keybag under `password` (the passcode, when one is set, authorizes it).
    public struct BeginBackup: EnclaveRequest, Codable {
        public static let mayChangeAvailableKeys = false
        public var password: SecretBytes
        public var passcode: SecretBytes?

        /// The session, the archive's integrity key and the archive's header.
        public struct Response: WireCodable, Codable {
            public var session: Data
            public var integrityKey: SecretBytes
            public var header: BackupArchive

            public init(session: Data, integrityKey: SecretBytes, header: BackupArchive) {
                self.session = session
                self.integrityKey = integrityKey
                self.header = header
            }
        }

        public init(password: SecretBytes, passcode: SecretBytes?) {
            self.password = password
            self.passcode = passcode
        }
    }

    /// Opens an archive's backup keybag for a restore.
    public struct OpenBackup: EnclaveRequest, Codable {
        public static let mayChangeAvailableKeys = false
        public var header: BackupArchive
        public var password: SecretBytes

        /// The session, the integrity key, whether this device made the archive, and the
        /// classes whose keys it could open.
        public struct Response: WireCodable, Codable {
            public var session: Data
            public var integrityKey: SecretBytes
            public var sameDevice: Bool
            public var classes: Set<ProtectionClass>

            public init(session: Data, integrityKey: SecretBytes, sameDevice: Bool, classes: Set<ProtectionClass>) {
                self.session = session
                self.integrityKey = integrityKey
                self.sameDevice = sameDevice
                self.classes = classes
            }
        }

        public init(header: BackupArchive, password: SecretBytes) {
            self.header = header
            self.password = password
        }
    }

    /// The metadata key of a class of an open backup keybag.
    public struct BackupMetadataKey: EnclaveRequest, Codable {
        public typealias Response = Key
        public static let mayChangeAvailableKeys = false
        public var session: Data
        public var protection: ProtectionClass

        public init(session: Data, _ protection: ProtectionClass) {
            self.session = session
            self.protection = protection
        }
    }

    /// A re-sealed secret blob.
    public struct Blob: WireCodable, Codable {
        public var bytes: Data

        public init(_ bytes: Data) { self.bytes = bytes }
    }

    /// A row's secret blob re-sealed for a backup record.
    public struct ExportSecret: EnclaveRequest, Codable {
        public typealias Response = Blob
        public static let mayChangeAvailableKeys = false
        public var session: Data
        public var protection: ProtectionClass
        public var blob: Data
        public var rowAssociatedData: Data
        public var recordAssociatedData: Data

        public init(session: Data, _ protection: ProtectionClass, blob: Data, rowAssociatedData: Data, recordAssociatedData: Data) {
            self.session = session
            self.protection = protection
            self.blob = blob
            self.rowAssociatedData = rowAssociatedData
            self.recordAssociatedData = recordAssociatedData
        }
    }

    /// A backup record's secret blob re-sealed for a row.
    public struct ImportSecret: EnclaveRequest, Codable {
        public typealias Response = Blob
        public static let mayChangeAvailableKeys = false
        public var session: Data
        public var protection: ProtectionClass
        public var blob: Data
        public var recordAssociatedData: Data
        public var rowAssociatedData: Data

        public init(session: Data, _ protection: ProtectionClass, blob: Data, recordAssociatedData: Data, rowAssociatedData: Data) {
            self.session = session
            self.protection = protection
            self.blob = blob
            self.recordAssociatedData = recordAssociatedData
            self.rowAssociatedData = rowAssociatedData
        }
    }

    /// Drops an open backup keybag's keys.
    public struct EndBackup: EnclaveRequest, Codable {
        public static let mayChangeAvailableKeys = false
        public var session: Data

        public init(session: Data) {
            self.session = session
        }
    }
}

extension BackupArchive {
    /// Appends the header (``appendHeader(to:)``) to a writer.
    func encodeHeader(to writer: inout ByteWriter) {
        var out = Data()
        appendHeader(to: &out)
        writer.append(out)
    }
}
