public import KeychainModel

// File keychains (`create-keychain` …) and the user's search list and default keychain.
// A keychain is named by its absolute path; the client resolves names as macOS does.
// Anyone may ask: a keychain's password is what protects it, and securityd creates only
// new files and reads or removes only keychain files (docs/SECURITY.md).

extension Service {
    /// A new file keychain at `path` under `password`, unlocked.
    @WireStruct
    public struct CreateKeychain: ServiceRequest {
        public static let authorization = Authorization.anyCaller
        public var path: String
        public var password: SecretBytes
        public var settings: KeychainSettings = KeychainSettings()
    }

    /// Removes a file keychain (and takes it off the search list).
    @WireStruct
    public struct DeleteKeychain: ServiceRequest {
        public static let authorization = Authorization.anyCaller
        public var path: String
    }

    /// Unlocks a file keychain with its password (throttled per keychain).
    @WireStruct
    public struct UnlockKeychain: ServiceRequest {
        public static let authorization = Authorization.anyCaller
        public var path: String
        public var password: SecretBytes
    }

    /// Locks a file keychain, or every file keychain (nil).
    @WireStruct
    public struct LockKeychain: ServiceRequest {
        public static let authorization = Authorization.anyCaller
        public var path: String?
    }

    /// A file keychain's settings and lock state.
    @WireStruct
    public struct KeychainInfo: ServiceRequest {
        public static let authorization = Authorization.anyCaller
        public var path: String

        @WireStruct
        public struct Response: WireCodable, Hashable {
            public var settings: KeychainSettings
            public var unlocked: Bool
        }
    }

    /// Records a file keychain's settings (it must be unlocked).
    @WireStruct
    public struct SetKeychainSettings: ServiceRequest {
        public static let authorization = Authorization.anyCaller
        public var path: String
        public var settings: KeychainSettings
    }

    /// Changes a file keychain's password.
    @WireStruct
    public struct ChangeKeychainPassword: ServiceRequest {
        public static let authorization = Authorization.anyCaller
        public var path: String
        public var old: SecretBytes
        public var new: SecretBytes
    }

    /// The user's keychain search list, replaced first when `replacement` is given.
    public struct SearchList: ServiceRequest, Codable {
        public typealias Response = KeychainList
        public static let authorization = Authorization.anyCaller
        public var replacement: KeychainList?

        public init(replacement: [String]?) { self.replacement = replacement.map(KeychainList.init) }
    }

    /// The user's default keychain, set first when `replacement` is given.
    @WireStruct
    public struct DefaultKeychain: ServiceRequest {
        public typealias Response = KeychainList
        public static let authorization = Authorization.anyCaller
        public var replacement: String?
    }

    /// Keychain paths, in order.
    public struct KeychainList: WireCodable, Hashable, Codable {
        public var paths: [String]

        public init(_ paths: [String]) { self.paths = paths }
    }
}
