public import FoundationEssentials
public import KeychainCrypto
public import KeychainModel

extension EnclaveCall {
    /// A new backup keybag under `password` (the passcode, when one is set, authorizes it).
    public struct BeginBackup: EnclaveRequest {
        public static let opcode: UInt8 = 20
        public static let mayChangeAvailableKeys = false
        public var password: SecretBytes
        public var passcode: SecretBytes?

        public init(password: SecretBytes, passcode: SecretBytes?) {
            self.password = password
            self.passcode = passcode
        }

        public init(from reader: inout ByteReader) throws {
            password = try reader.secret(limit: EnclaveCall.fieldLimit)
            passcode = try reader.optionalSecret(limit: EnclaveCall.fieldLimit)
        }

        public func encode(to writer: inout ByteWriter) {
            writer.appendSecret(password)
            writer.appendOptionalSecret(passcode)
        }

        /// The session, the archive's integrity key and the archive's header.
        public struct Response: WireCodable {
            public var session: Data
            public var integrityKey: SecretBytes
            public var header: BackupArchive

            public init(session: Data, integrityKey: SecretBytes, header: BackupArchive) {
                self.session = session
                self.integrityKey = integrityKey
                self.header = header
            }

            public init(from reader: inout ByteReader) throws {
                session = try .field(&reader, limit: EnclaveCall.idLimit)
                integrityKey = try reader.secret(limit: 32)
                header = try BackupArchive(header: &reader)
            }

            public func encode(to writer: inout ByteWriter) {
                writer.appendLengthPrefixed(session)
                writer.appendSecret(integrityKey)
                header.encodeHeader(to: &writer)
            }
        }
    }

    /// Opens an archive's backup keybag for a restore.
    public struct OpenBackup: EnclaveRequest {
        public static let opcode: UInt8 = 21
        public static let mayChangeAvailableKeys = false
        public var header: BackupArchive
        public var password: SecretBytes

        public init(header: BackupArchive, password: SecretBytes) {
            self.header = header
            self.password = password
        }

        public init(from reader: inout ByteReader) throws {
            header = try BackupArchive(header: &reader)
            password = try reader.secret(limit: EnclaveCall.fieldLimit)
        }

        public func encode(to writer: inout ByteWriter) {
            header.encodeHeader(to: &writer)
            writer.appendSecret(password)
        }

        /// The session, the integrity key, whether this device made the archive, and the
        /// classes whose keys it could open.
        public struct Response: WireCodable {
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

            public init(from reader: inout ByteReader) throws {
                session = try .field(&reader, limit: EnclaveCall.idLimit)
                integrityKey = try reader.secret(limit: 32)
                sameDevice = try Bool(from: &reader)
                classes = []
                for _ in 0..<Int(try reader.byte()) { classes.insert(try ProtectionClass(from: &reader)) }
            }

            public func encode(to writer: inout ByteWriter) {
                writer.appendLengthPrefixed(session)
                writer.appendSecret(integrityKey)
                sameDevice.encode(to: &writer)
                let ordered = ProtectionClass.allCases.filter(classes.contains)
                writer.append(UInt8(ordered.count))
                for protection in ordered { protection.encode(to: &writer) }
            }
        }
    }

    /// The metadata key of a class of an open backup keybag.
    public struct BackupMetadataKey: EnclaveRequest {
        public typealias Response = Key
        public static let opcode: UInt8 = 22
        public static let mayChangeAvailableKeys = false
        public var session: Data
        public var protection: ProtectionClass

        public init(session: Data, _ protection: ProtectionClass) {
            self.session = session
            self.protection = protection
        }

        public init(from reader: inout ByteReader) throws {
            session = try .field(&reader, limit: EnclaveCall.idLimit)
            protection = try ProtectionClass(from: &reader)
        }

        public func encode(to writer: inout ByteWriter) {
            writer.appendLengthPrefixed(session)
            protection.encode(to: &writer)
        }
    }

    /// A re-sealed secret blob.
    public struct Blob: WireCodable {
        public var bytes: Data

        public init(_ bytes: Data) { self.bytes = bytes }
        public init(from reader: inout ByteReader) throws { bytes = Data(reader.rest()) }
        public func encode(to writer: inout ByteWriter) { writer.append(bytes) }
    }

    /// A row's secret blob re-sealed for a backup record.
    public struct ExportSecret: EnclaveRequest {
        public typealias Response = Blob
        public static let opcode: UInt8 = 23
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

        public init(from reader: inout ByteReader) throws {
            session = try .field(&reader, limit: EnclaveCall.idLimit)
            protection = try ProtectionClass(from: &reader)
            blob = try .field(&reader, limit: EnclaveCall.blobLimit)
            rowAssociatedData = try .field(&reader)
            recordAssociatedData = try .field(&reader)
        }

        public func encode(to writer: inout ByteWriter) {
            writer.appendLengthPrefixed(session)
            protection.encode(to: &writer)
            writer.appendLengthPrefixed(blob)
            writer.appendLengthPrefixed(rowAssociatedData)
            writer.appendLengthPrefixed(recordAssociatedData)
        }
    }

    /// A backup record's secret blob re-sealed for a row.
    public struct ImportSecret: EnclaveRequest {
        public typealias Response = Blob
        public static let opcode: UInt8 = 24
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

        public init(from reader: inout ByteReader) throws {
            session = try .field(&reader, limit: EnclaveCall.idLimit)
            protection = try ProtectionClass(from: &reader)
            blob = try .field(&reader, limit: EnclaveCall.blobLimit)
            recordAssociatedData = try .field(&reader)
            rowAssociatedData = try .field(&reader)
        }

        public func encode(to writer: inout ByteWriter) {
            writer.appendLengthPrefixed(session)
            protection.encode(to: &writer)
            writer.appendLengthPrefixed(blob)
            writer.appendLengthPrefixed(recordAssociatedData)
            writer.appendLengthPrefixed(rowAssociatedData)
        }
    }

    /// Drops an open backup keybag's keys.
    public struct EndBackup: EnclaveRequest {
        public typealias Response = NoResult
        public static let opcode: UInt8 = 25
        public static let mayChangeAvailableKeys = false
        public var session: Data

        public init(session: Data) { self.session = session }
        public init(from reader: inout ByteReader) throws { session = try .field(&reader, limit: EnclaveCall.idLimit) }
        public func encode(to writer: inout ByteWriter) { writer.appendLengthPrefixed(session) }
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
