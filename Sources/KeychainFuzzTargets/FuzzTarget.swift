public import FoundationEssentials
import EnclaveProtocol
import KeychainCertificates
import KeychainCrypto
import KeychainKeys
import KeychainModel
import KeychainProtocol

/// The decoders that read bytes an attacker chooses, as fuzz targets: libFuzzer drives
/// them in `Fuzz/` (scripts/fuzz), and the test suite replays the committed corpus
/// (`Fuzz/Corpus/<target>/`) through the same entry points.
///
/// A target returns for every input; it must never crash, hang or exhaust memory.
public enum FuzzTarget: String, CaseIterable, Sendable {
    /// A request frame as securityd reads it from a client, and as the enclave reads one
    /// from the daemon.
    case frame
    /// A query: a wire-encoded value, then SecItem parsing for every operation.
    case query
    /// An attribute blob's plaintext, as the store decodes it after decryption.
    case blob
    /// A DER certificate, as `SecCertificate` and certificate items read it.
    case certificate
    /// A key's external representation, as `SecKeyCreateWithData` reads it.
    case key

    /// Runs the decoder over `input`; errors are expected, crashes are bugs.
    public func run(_ input: Data) {
        switch self {
        case .frame:
            var service = ByteReader(input)
            _ = try? ServiceWire.decodeRequest(&service)
            var enclave = ByteReader(input)
            _ = try? EnclaveWire.decodeRequest(&enclave)
        case .query:
            var reader = ByteReader(input)
            guard case .dictionary(let dictionary)? = try? KeychainValue.decode(from: &reader) else { return }
            for operation in [ItemOperation.add, .copyMatching, .update, .delete] {
                _ = try? ItemQuery(dictionary, for: operation)
            }
        case .blob:
            _ = try? AttributeCodec.decode(input)
        case .certificate:
            guard let fields = try? CertificateFields(der: Array(input)) else { return }
            _ = (fields.subjectSummary, fields.itemAttributes, fields.emailAddresses, fields.commonNames)
        case .key:
            for type in [AsymmetricKey.KeyType.rsa, .ellipticCurve] {
                for keyClass in [AsymmetricKey.KeyClass.public, .private] {
                    _ = (try? AsymmetricKey(externalRepresentation: input, type: type, keyClass: keyClass))?.attributes
                }
            }
        }
    }

    /// A self-signed P-256 certificate with a SubjectAltName and a PrintableString name,
    /// made by Python's `cryptography` (Tests/SecurityAPITests/Fixtures), and its key.
    static let certificateSeed = Data(base64Encoded: "MIIB6jCCAZGgAwIBAgIIASNFZ4mrze8wCgYIKoZIzj0EAwIwUzESMBAGA1UEAwwJVGVzdCBMZWFmMRwwGgYDVQQKExMgIE1peGVkICAgY2FzZSBPcmcgMR8wHQYJKoZIhvcNAQkBFhBsZWFmQGV4YW1wbGUuY29tMB4XDTI2MDEwMjAzMDQwNVoXDTI2MDIwMTAzMDQwNVowUzESMBAGA1UEAwwJVGVzdCBMZWFmMRwwGgYDVQQKExMgIE1peGVkICAgY2FzZSBPcmcgMR8wHQYJKoZIhvcNAQkBFhBsZWFmQGV4YW1wbGUuY29tMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEdBrJ6AlknDdnI7Kkm0uEFQZkeLis3GIy1BLHm504aOV+7FctzYTGIGlGRhsl9e2oYJl0FuGW+fk7BmmPT+B6tqNPME0wLAYDVR0RBCUwI4IQbGVhZi5leGFtcGxlLmNvbYEPYWx0QGV4YW1wbGUuY29tMB0GA1UdDgQWBBTvg58KEGcto6ds6ejCs2H8mG1URTAKBggqhkjOPQQDAgNHADBEAiBIgH1cao5oIctjTBzzCoOwejH/ZQyH77yXW2LINuTzwAIgBYqDVjS7IfL0XCr/B77gTNPRW3q9Pe7uPQ0nwFDR0oo=")!
    static let keySeed = Data(base64Encoded: "BHQayegJZJw3ZyOypJtLhBUGZHi4rNxiMtQSx5udOGjlfuxXLc2ExiBpRkYbJfXtqGCZdBbhlvn5OwZpj0/gerY6oQnjzuxcm2iDDq2hyNiTh2lJXUGeQ89vdkcnhfBphA==")!

    /// Valid inputs to start from: encodings of typical requests, queries and attributes.
    public static func seeds(for target: FuzzTarget) -> [Data] {
        let item: [String: KeychainValue] = [
            "class": .string("genp"), "acct": .string("alice"), "svce": .string("example.com"),
            "labl": .string("Example"), "v_Data": .data(Data("secret".utf8)), "pdmn": .string("ak"),
        ]
        let internet: [String: KeychainValue] = [
            "class": .string("inet"), "acct": .string("octocat"), "srvr": .string("github.com"), "ptcl": .string("htps"),
            "port": .number(443), "r_Attributes": .bool(true), "m_Limit": .string("m_LimitAll"),
        ]
        let search: [String: KeychainValue] = [
            "class": .string("genp"), "svce": .string("example.com"), "r_Data": .bool(true), "r_Attributes": .bool(true),
            "r_PersistentRef": .bool(true), "m_Limit": .number(2), "agrp": .string("ABCDE12345.shared"),
        ]
        switch target {
        case .frame:
            return [
                ServiceWire.encode(Service.Add(item)), ServiceWire.encode(Service.CopyMatching(search)),
                ServiceWire.encode(Service.Update(search, attributes: ["labl": .string("new")])),
                ServiceWire.encode(Service.Delete(internet), presence: SecretBytes("1234".utf8)),
                ServiceWire.encode(Service.Lock()), ServiceWire.encode(Service.Unlock(passcode: SecretBytes("1234".utf8))),
                EnclaveWire.encode(EnclaveCall.Status()), EnclaveWire.encode(EnclaveCall.MetadataKey(.whenUnlocked)),
                ServiceWire.encode(
                    Service.EvaluateTrust(
                        certificates: [certificateSeed], policies: [.ssl(server: true, hostname: "leaf.example.com")], anchors: [certificateSeed],
                        trustsSystemRoots: false, verifyDate: Date(timeIntervalSinceReferenceDate: 800_000_000))),
            ].map { Data($0.bytes) }
        case .query:
            return [item, internet, search].map { query in
                var out = Data()
                KeychainValue.dictionary(query).encode(to: &out)
                return out
            }
        case .certificate:
            return [certificateSeed]
        case .key:
            return [keySeed, keySeed.prefix(65)]
        case .blob:
            return [item, internet, ["cdat": .date(Date(timeIntervalSince1970: 1_800_000_000)), "gena": .data(Data([0, 255]))]]
                .map { AttributeCodec.encode($0.filter { $0.key != "class" && $0.key != "v_Data" }) }
        }
    }
}
