public import FoundationEssentials
import Crypto
import X509

/// What a signature makes of an executable: a team's app with its entitlements, or
/// unsigned, with the reason (for the daemon's log).
public enum CodeIdentity: Sendable, Equatable {
    case signed(SignedCode)
    case unsigned(reason: String)

    public var isSigned: Bool {
        if case .signed = self { return true }
        return false
    }
}

/// A verified signature: whose code it is and what it may claim.
public struct SignedCode: Sendable, Equatable {
    public let team: TeamIdentifier
    public let entitlements: Entitlements
    public let codeHash: Data
    /// The end of the chain's validity (the earlier of certificate and root).
    public let notValidAfter: Date
}

/// Checks executables' signatures against the trusted developer roots.
public struct CodeSignatureVerifier: Sendable {
    public let roots: DeveloperRoots

    /// The reason an executable without a signature block is unsigned.
    public static let noSignature = "no code signature"

    public init(roots: DeveloperRoots) {
        self.roots = roots
    }

    /// Verifies the signature of an executable's bytes at `now`: the code hash, the
    /// signature, the certificate's chain to a trusted root and its validity, and that the
    /// entitlements stay within what the root lets the team claim.
    public func verify(executable file: Data, at now: Date = Date()) -> CodeIdentity {
        guard let (code, block) = CodeSignature.split(file) else { return .unsigned(reason: Self.noSignature) }
        let signature: CodeSignature
        let leaf: DeveloperCertificate
        do {
            signature = try CodeSignature(block: block)
            leaf = try DeveloperCertificate(Certificate(derEncoded: Array(signature.certificate)))
        } catch {
            return .unsigned(reason: "malformed code signature: \(error)")
        }
        guard Data(SHA256.hash(data: code)) == signature.codeHash else {
            return .unsigned(reason: "the executable was modified after it was signed (code hash differs)")
        }
        guard let key = P256.Signing.PublicKey(leaf.certificate.publicKey),
            let ecdsa = try? P256.Signing.ECDSASignature(derRepresentation: signature.signature),
            key.isValidSignature(ecdsa, for: signature.signedBytes)
        else {
            return .unsigned(reason: "the code signature does not verify with the certificate of team \(leaf.team)")
        }
        guard let root = roots.issuer(of: leaf.certificate) else {
            return .unsigned(reason: "the certificate of team \(leaf.team) is not issued by a trusted developer root (issuer \(leaf.certificate.issuer))")
        }
        guard leaf.isValid(at: now), root.isValid(at: now) else {
            return .unsigned(reason: "the certificate of team \(leaf.team) is not valid now (valid \(leaf.certificate.notValidBefore) to \(leaf.certificate.notValidAfter))")
        }
        if let violation = signature.entitlements.violation(team: leaf.team, registeredApplicationGroups: leaf.applicationGroups) {
            return .unsigned(reason: "entitlements claim more than team \(leaf.team) owns: \(violation)")
        }
        return .signed(SignedCode(
            team: leaf.team, entitlements: signature.entitlements, codeHash: signature.codeHash,
            notValidAfter: min(leaf.certificate.notValidAfter, root.certificate.notValidAfter)))
    }
}
