public import KeychainModel

// File keychains (`create-keychain` …) and the user's search list and default keychain.
// A keychain is named by its absolute path; the client resolves names as macOS does.
// Anyone may ask: a keychain's password is what protects it, and securityd creates only
// new files and reads or removes only keychain files (docs/SECURITY.md).

extension Service {
    /// A new file keychain at `path` under `password`, unlocked.
    public struct CreateKeychain: ServiceRequest, Codable {
        public static let authorization = Authorization.anyCaller
        public var path: String
        public var password: SecretBytes
        public var settings: KeychainSettings = KeychainSettings()

        public init(path: String, password: SecretBytes, settings: KeychainSettings = KeychainSettings()) {
            self.path = path
            self.password = password
            self.settings = settings
        }
    }

    /// Removes a file keychain (and takes it off the search list).
    public struct DeleteKeychain: ServiceRequest, Codable {
        public static let authorization = Authorization.anyCaller
        public var path: String

        public init(path: String) {
            self.path = path
        }
    }

    /// Unlocks a file keychain with its password (throttled per keychain).
    public struct UnlockKeychain: ServiceRequest, Codable {
        public static let authorization = Authorization.anyCaller
        public var path: String
        public var password: SecretBytes

        public init(path: String, password: SecretBytes) {
            self.path = path
            self.password = password
        }
    }

    /// Locks a file keychain, or every file keychain (nil).
    public struct LockKeychain: ServiceRequest, Codable {
        public static let authorization = Authorization.anyCaller
        public var path: String?

        public init(path: String?) {
            self.path = path
        }
    }

    /// A file keychain's settings and lock state.
    public struct KeychainInfo: ServiceRequest, Codable {
        public static let authorization = Authorization.anyCaller
        public var path: String

        public struct Response: WireCodable, Hashable, Codable {
            public var settings: KeychainSettings
            public var unlocked: Bool

            public init(settings: KeychainSettings, unlocked: Bool) {
                self.settings = settings
                self.unlocked = unlocked
            }
        }

        public init(path: String) {
            self.path = path
        }
    }

    /// Records a file keychain's settings (it must be unlocked).
    public struct SetKeychainSettings: ServiceRequest, Codable {
        public static let authorization = Authorization.anyCaller
        public var path: String
        public var settings: KeychainSettings

        public init(path: String, settings: KeychainSettings) {
            self.path = path
            self.settings = settings
        }
    }

    /// Changes a file keychain's password.
    public struct ChangeKeychainPassword: ServiceRequest, Codable {
        public static let authorization = Authorization.anyCaller
        public var path: String
        public var old: SecretBytes
        public var new: SecretBytes

        public init(path: String, old: SecretBytes, new: SecretBytes) {
            self.path = path
            self.old = old
            self.new = new
        }
    }

    /// The user's keychain search list, replaced first when `replacement` is given.
    public struct SearchList: ServiceRequest, Codable {
        public typealias Response = KeychainList
        public static let authorization = Authorization.anyCaller
        public var replacement: KeychainList?

        public init(replacement: [String]?) { self.replacement = replacement.map(KeychainList.init) }
    }

    /// The user's default keychain, set first when `replacement` is given.
    public struct DefaultKeychain: ServiceRequest, Codable {
        public typealias Response = KeychainList
        public static let authorization = Authorization.anyCaller
        public var replacement: String?

        public init(replacement: String?) {
            self.replacement = replacement
        }
    }

    /// Keychain paths, in order.
    public struct KeychainList: WireCodable, Hashable, Codable {
        public var paths: [String]

        public init(_ paths: [String]) { self.paths = paths }
    }
}
