public import KeychainModel

// File keychains (`create-keychain` …) and the user's search list and default keychain.
// A keychain is named by its absolute path; the client resolves names as macOS does.
// Anyone may ask: a keychain's password is what protects it, and securityd creates only
// new files and reads or removes only keychain files (docs/SECURITY.md).

extension Service {
    /// The longest keychain path a request may carry.
    static let pathLimit = 4096

    /// A new file keychain at `path` under `password`, unlocked.
    public struct CreateKeychain: ServiceRequest {
        public typealias Response = NoResult
        public static let opcode: UInt8 = 78
        public static let authorization = Authorization.anyCaller
        public var path: String
        public var password: SecretBytes
        public var settings: KeychainSettings

        public init(path: String, password: SecretBytes, settings: KeychainSettings = KeychainSettings()) {
            self.path = path
            self.password = password
            self.settings = settings
        }

        public init(from reader: inout ByteReader) throws {
            path = try reader.string(limit: Service.pathLimit)
            password = try reader.secret(limit: Service.passcodeLimit)
            settings = try KeychainSettings(from: &reader)
        }

        public func encode(to writer: inout ByteWriter) {
            writer.appendLengthPrefixed(path)
            writer.appendSecret(password)
            settings.encode(to: &writer)
        }
    }

    /// Removes a file keychain (and takes it off the search list).
    public struct DeleteKeychain: ServiceRequest {
        public typealias Response = NoResult
        public static let opcode: UInt8 = 79
        public static let authorization = Authorization.anyCaller
        public var path: String

        public init(path: String) { self.path = path }
        public init(from reader: inout ByteReader) throws { path = try reader.string(limit: Service.pathLimit) }
        public func encode(to writer: inout ByteWriter) { writer.appendLengthPrefixed(path) }
    }

    /// Unlocks a file keychain with its password (throttled per keychain).
    public struct UnlockKeychain: ServiceRequest {
        public typealias Response = NoResult
        public static let opcode: UInt8 = 80
        public static let authorization = Authorization.anyCaller
        public var path: String
        public var password: SecretBytes

        public init(path: String, password: SecretBytes) {
            self.path = path
            self.password = password
        }

        public init(from reader: inout ByteReader) throws {
            path = try reader.string(limit: Service.pathLimit)
            password = try reader.secret(limit: Service.passcodeLimit)
        }

        public func encode(to writer: inout ByteWriter) {
            writer.appendLengthPrefixed(path)
            writer.appendSecret(password)
        }
    }

    /// Locks a file keychain, or every file keychain (nil).
    public struct LockKeychain: ServiceRequest {
        public typealias Response = NoResult
        public static let opcode: UInt8 = 81
        public static let authorization = Authorization.anyCaller
        public var path: String?

        public init(path: String?) { self.path = path }

        public init(from reader: inout ByteReader) throws {
            path = try reader.byte() == 1 ? try reader.string(limit: Service.pathLimit) : nil
        }

        public func encode(to writer: inout ByteWriter) {
            writer.appendOptional(path) { $1.appendLengthPrefixed($0) }
        }
    }

    /// A file keychain's settings and lock state.
    public struct KeychainInfo: ServiceRequest {
        public static let opcode: UInt8 = 82
        public static let authorization = Authorization.anyCaller
        public var path: String

        public init(path: String) { self.path = path }
        public init(from reader: inout ByteReader) throws { path = try reader.string(limit: Service.pathLimit) }
        public func encode(to writer: inout ByteWriter) { writer.appendLengthPrefixed(path) }

        public struct Response: WireCodable, Hashable {
            public var settings: KeychainSettings
            public var unlocked: Bool

            public init(settings: KeychainSettings, unlocked: Bool) {
                self.settings = settings
                self.unlocked = unlocked
            }

            public init(from reader: inout ByteReader) throws {
                settings = try KeychainSettings(from: &reader)
                unlocked = try Bool(from: &reader)
            }

            public func encode(to writer: inout ByteWriter) {
                settings.encode(to: &writer)
                unlocked.encode(to: &writer)
            }
        }
    }

    /// Records a file keychain's settings (it must be unlocked).
    public struct SetKeychainSettings: ServiceRequest {
        public typealias Response = NoResult
        public static let opcode: UInt8 = 83
        public static let authorization = Authorization.anyCaller
        public var path: String
        public var settings: KeychainSettings

        public init(path: String, settings: KeychainSettings) {
            self.path = path
            self.settings = settings
        }

        public init(from reader: inout ByteReader) throws {
            path = try reader.string(limit: Service.pathLimit)
            settings = try KeychainSettings(from: &reader)
        }

        public func encode(to writer: inout ByteWriter) {
            writer.appendLengthPrefixed(path)
            settings.encode(to: &writer)
        }
    }

    /// Changes a file keychain's password.
    public struct ChangeKeychainPassword: ServiceRequest {
        public typealias Response = NoResult
        public static let opcode: UInt8 = 84
        public static let authorization = Authorization.anyCaller
        public var path: String
        public var old: SecretBytes
        public var new: SecretBytes

        public init(path: String, old: SecretBytes, new: SecretBytes) {
            self.path = path
            self.old = old
            self.new = new
        }

        public init(from reader: inout ByteReader) throws {
            path = try reader.string(limit: Service.pathLimit)
            old = try reader.secret(limit: Service.passcodeLimit)
            new = try reader.secret(limit: Service.passcodeLimit)
        }

        public func encode(to writer: inout ByteWriter) {
            writer.appendLengthPrefixed(path)
            writer.appendSecret(old)
            writer.appendSecret(new)
        }
    }

    /// The user's keychain search list, replaced first when `replacement` is given.
    public struct SearchList: ServiceRequest {
        public typealias Response = KeychainList
        public static let opcode: UInt8 = 85
        public static let authorization = Authorization.anyCaller
        public var replacement: KeychainList?

        public init(replacement: [String]?) { self.replacement = replacement.map(KeychainList.init) }
        public init(from reader: inout ByteReader) throws { replacement = try KeychainList?(from: &reader) }
        public func encode(to writer: inout ByteWriter) { replacement.encode(to: &writer) }
    }

    /// The user's default keychain, set first when `replacement` is given.
    public struct DefaultKeychain: ServiceRequest {
        public typealias Response = KeychainList
        public static let opcode: UInt8 = 86
        public static let authorization = Authorization.anyCaller
        public var replacement: String?

        public init(replacement: String?) { self.replacement = replacement }

        public init(from reader: inout ByteReader) throws {
            replacement = try reader.byte() == 1 ? try reader.string(limit: Service.pathLimit) : nil
        }

        public func encode(to writer: inout ByteWriter) {
            writer.appendOptional(replacement) { $1.appendLengthPrefixed($0) }
        }
    }

    /// Keychain paths, in order.
    public struct KeychainList: WireCodable, Hashable {
        public var paths: [String]

        public init(_ paths: [String]) { self.paths = paths }

        public init(from reader: inout ByteReader) throws {
            let count = Int(try reader.integer(UInt16.self))
            paths = try (0..<count).map { _ in try reader.string(limit: Service.pathLimit) }
        }

        public func encode(to writer: inout ByteWriter) {
            writer.appendInteger(UInt16(clamping: paths.count))
            for path in paths.prefix(Int(UInt16.max)) { writer.appendLengthPrefixed(path) }
        }
    }
}
