public import FoundationEssentials

/// The requests that are the same on both protocols: a client sends one to securityd,
/// which checks who may, and forwards that very message to the enclave, which holds the
/// keys. Each is declared once; its opcode, its authorization (securityd's) and whether
/// it may change the available keys (the enclave's) are each protocol's.
public enum KeybagCall {
    /// Unlocks the keychain with its passcode (the enclave verifies and throttles it).
    @WireStruct
    public struct Unlock: WireMessage {
        public var passcode: SecretBytes
    }

    /// Locks the keychain: classes that need the passcode become unavailable.
    @WireStruct
    public struct Lock: WireMessage {
    }

    /// Evidence of the user's presence for an authentication context, checked by the
    /// enclave (which throttles passcodes as it throttles unlocks).
    public struct Authenticate: WireMessage, Codable {
        public var request: AuthenticationRequest

        public init(_ request: AuthenticationRequest) { self.request = request }
    }

    /// Forgets an authentication context (`LAContext.invalidate`).
    @WireStruct
    public struct InvalidateAuthentication: WireMessage {
        public var context: Data
    }

    /// What the enclave can check: passcode, sensor, enrollment.
    @WireStruct
    public struct AuthenticationCapabilitiesRequest: WireMessage {
        public typealias Response = AuthenticationCapabilities
    }

    /// Makes class C available with an escrow keybag's secret (the secret is the authority).
    @WireStruct
    public struct UnlockWithEscrow: WireMessage {
        public var id: Data
        public var secret: SecretBytes
    }

    /// Revokes an escrow keybag.
    @WireStruct
    public struct RevokeEscrow: WireMessage {
        public var id: Data
    }

    /// An escrow keybag: its id and the secret its agent keeps.
    @WireStruct
    public struct EscrowCreated: WireCodable {
        public var id: Data
        public var secret: SecretBytes
    }

    /// Makes a P-256 private key inside the enclave (`SecKeyCreateRandomKey` with
    /// `kSecAttrTokenIDSecureEnclave`) and returns it wrapped: only its public key is
    /// readable outside. The caller keeps the blob (and may store it as a key item).
    @WireStruct
    public struct CreateEnclaveKey: WireMessage {
        public typealias Response = EnclaveKeyCreated
        /// Always a ThisDeviceOnly class: an enclave key cannot leave the device.
        public var protection: ProtectionClass
        public var access: AccessControl?
        public var context: Data?
    }

    /// The new key's blob (``EnclaveKeyBlob/data``).
    @WireStruct
    public struct EnclaveKeyCreated: WireCodable {
        public var blob: Data
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
