/// Why a sync record, key or membership entry was refused. Equal on the code only; the message names no value.
public struct SyncCryptoError: Error, Sendable, Equatable, CustomStringConvertible {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        let name: String
        /// The bytes are not a record of a known format.
        public static let malformed = Code(name: "malformed")
        /// The record names a parent key this device does not hold.
        public static let unknownKey = Code(name: "unknown-key")
        /// The record names a writer that is not a member.
        public static let unknownWriter = Code(name: "unknown-writer")
        /// The writer's signature does not verify.
        public static let badSignature = Code(name: "bad-signature")
        /// The AEAD refused the key or the body: wrong key, or moved or edited.
        public static let authentication = Code(name: "authentication")
        /// A membership entry breaks the chain's rules (``MembershipState``).
        public static let membership = Code(name: "membership")
        /// A chain or entry that does not extend the pinned head: the server showed this
        /// device a different history than before.
        public static let fork = Code(name: "fork")
        /// The join exchange's tags do not verify: the two devices were not given the same
        /// code (or a stranger guessed). The pairing is dead; a new code is needed.
        public static let wrongCode = Code(name: "wrong-code")
        public var description: String { name }
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public static func == (lhs: SyncCryptoError, rhs: SyncCryptoError) -> Bool { lhs.code == rhs.code }

    public var description: String { "\(code): \(message)" }
}
