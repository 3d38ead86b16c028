public import FoundationEssentials

/// The requests that are the same on both protocols: a client sends one to securityd,
/// which checks who may, and forwards that very message to the enclave, which holds the
/// keys. Each is declared once; its opcode, its authorization (securityd's) and whether
/// it may change the available keys (the enclave's) are each protocol's.
public enum KeybagCall {
    /// Unlocks the keychain with its passcode (the enclave verifies and throttles it).
    public struct Unlock: WireMessage, Codable {
        public var passcode: SecretBytes

        public init(passcode: SecretBytes) {
            self.passcode = passcode
        }
    }

    /// Locks the keychain: classes that need the passcode become unavailable.
    public struct Lock: WireMessage, Codable {
        public init() {}
    }

    /// Evidence of the user's presence for an authentication context, checked by the
    /// enclave (which throttles passcodes as it throttles unlocks).
    public struct Authenticate: WireMessage, Codable {
        public var request: AuthenticationRequest

        public init(_ request: AuthenticationRequest) { self.request = request }
    }

    /// Forgets an authentication context (`LAContext.invalidate`).
    public struct InvalidateAuthentication: WireMessage, Codable {
        public var context: Data

        public init(context: Data) {
            self.context = context
        }
    }

    /// What the enclave can check: passcode, sensor, enrollment.
    public struct AuthenticationCapabilitiesRequest: WireMessage, Codable {
        public typealias Response = AuthenticationCapabilities

        public init() {}
    }

    /// Makes class C available with an escrow keybag's secret (the secret is the authority).
    public struct UnlockWithEscrow: WireMessage, Codable {
        public var id: Data
        public var secret: SecretBytes

        public init(id: Data, secret: SecretBytes) {
            self.id = id
            self.secret = secret
        }
    }

    /// Revokes an escrow keybag.
    public struct RevokeEscrow: WireMessage, Codable {
        public var id: Data

        public init(id: Data) {
            self.id = id
        }
    }

    /// An escrow keybag: its id and the secret its agent keeps.
    public struct EscrowCreated: WireCodable, Codable {
        public var id: Data
        public var secret: SecretBytes

        public init(id: Data, secret: SecretBytes) {
            self.id = id
            self.secret = secret
        }
    }

    /// Makes a P-256 private key inside the enclave (`SecKeyCreateRandomKey` with
    /// `kSecAttrTokenIDSecureEnclave`) and returns it wrapped: only its public key is
    /// readable outside. The caller keeps the blob (and may store it as a key item).
    public struct CreateEnclaveKey: WireMessage, Codable {
        public typealias Response = EnclaveKeyCreated
        /// Always a ThisDeviceOnly class: an enclave key cannot leave the device.
        public var protection: ProtectionClass
        public var access: AccessControl?
        public var context: Data?

        public init(protection: ProtectionClass, access: AccessControl?, context: Data?) {
            self.protection = protection
            self.access = access
            self.context = context
        }
    }

    /// The new key's blob (``EnclaveKeyBlob/data``).
    public struct EnclaveKeyCreated: WireCodable, Codable {
        public var blob: Data

        public init(blob: Data) {
            self.blob = blob
        }
    }

    /// What an enclave key's operation produced (a signature, a plaintext, a shared
    /// secret), in zeroing storage: a plaintext or a shared secret is secret.
    public struct EnclaveKeyOutput: WireCodable, Codable {
        public var output: SecretBytes

        public init(_ output: SecretBytes) { self.output = output }
        // By hand, as WireEncoder writes it: every enclave-key operation returns one.
        public init(from reader: inout ByteReader) throws { output = try reader.secret(limit: reader.remaining) }
        public func encode(to writer: inout ByteWriter) { writer.appendSecret(output) }
    }
}
