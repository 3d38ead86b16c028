import Foundation
import KeychainTestSupport
import Testing

/// Configuration profiles through `security profiles` against a real daemon, on a fixture
/// set the test makes with openssl (certificates, PKCS#12, CMS signing and encryption) and
/// Python's plistlib (XML and binary property lists): each payload installs the right items
/// with the right protection class (read back through SecItem's `pdmn`), removal removes
/// exactly them, a tampered signature refuses the install, an untrusted one is shown as
/// unverified, a payload that fails installs nothing, and encrypted payloads open with an
/// identity of the keychain.
@Suite final class ProfileTests {
    let keychain: DaemonKeychain
    let fixtures: String

    init() throws {
        keychain = try DaemonKeychain()
        fixtures = keychain.directory + "/profiles"
        try FileManager.default.createDirectory(atPath: fixtures, withIntermediateDirectories: false)
        let made = try CommandRunner.run(executable: "/usr/bin/python3", ["-c", Self.makeFixtures, fixtures], clearing: false)
        try #require(made.status == 0, "fixtures: \(made.stderr)")
    }

    func security(_ arguments: String...) throws -> CommandResult {
        try CommandRunner.run("security", arguments, environment: ["KEYCHAIN_HOME": keychain.home])
    }

    func install(_ name: String) throws -> CommandResult {
        try security("profiles", "install", fixtures + "/" + name + ".mobileconfig")
    }

    /// The `keychainItems` lines of `profiles show`: class, pdmn, label, service, account.
    func items(_ identifier: String) throws -> [String] {
        let shown = try security("profiles", "show", identifier)
        try #require(shown.status == 0, "\(shown.stderr)")
        let lines = shown.stdout.split(separator: "\n").map(String.init)
        let start = try #require(lines.firstIndex { $0.hasSuffix("attribute: keychainItems:") })
        return lines[(start + 1)...].map { $0.split(separator: "]", maxSplits: 1)[1].trimmingCharacters(in: .whitespaces) }.sorted()
    }

    /// A certificate is public: the tool reads another group's (a profile's) without the
    /// keychain password, which a password of that group still needs.
    @Test func anotherGroupsCertificatesAreReadWithoutThePassword() throws {
        #expect(try install("full").status == 0)
        #expect(try security("set-keychain-password", "-p", "1234").status == 0)
        let found = try security("find-certificate", "-a", "-p")
        #expect(found.status == 0 && found.stdout.contains("BEGIN CERTIFICATE"), "\(found.stderr)")
        let secret = try security("find-generic-password", "-s", "AirPort", "-w")
        #expect(secret.status != 0 && !secret.stdout.contains("BEGIN"), "\(secret.stdout)")
    }

    @Test func eachPayloadInstallsItsItemsWithTheirProtection() throws {
        #expect(try security("add-generic-password", "-s", "mine", "-a", "me", "-w", "kept").status == 0)
        let verified = try security("verify-cert", "-c", fixtures + "/signer.pem")
        #expect(verified.status != 0, "the profile's root is not trusted yet")

        let installed = try install("full")
        #expect(installed.status == 0, "\(installed.stderr)")
        #expect(
            installed.stdout == """
                profile installed: com.example.full (unsigned)
                payload skipped, not supported on Linux: com.apple.dock (com.example.full.dock)

                """)
        // Certificates always available; the identity too, since the MDM payload names it;
        // passwords AfterFirstUnlock; all ThisDeviceOnly.
        #expect(
            try items("com.example.full") == [
                "cert accessible=dku label=\"Profile Client\"",
                "cert accessible=dku label=\"Profile Test Root\"",
                "genp accessible=cku label=\"Office Net\" service=\"AirPort\" account=\"Office Net\"",
                "genp accessible=cku label=\"Office Net\" service=\"com.apple.network.eap.user.item.profileid.U-WIFI\" account=\"alice\"",
                "genp accessible=cku label=\"Office VPN\" service=\"U-VPN.SS\" account=\"\"",
                "genp accessible=cku label=\"Office VPN\" service=\"U-VPN.XAUTH\" account=\"bob\"",
                "genp accessible=cku label=\"https://intranet.example.com\" service=\"https://intranet.example.com\" account=\"\"",
                "keys accessible=dku label=\"client\"",
            ])
        let shown = try security("profiles", "show", "com.example.full").stdout
        #expect(shown.contains("attribute: verificationState: unsigned"))
        #expect(shown.contains("payload[7] not supported on Linux (skipped)"))

        // The network password as macOS keeps it; the identity; the root anchors trust.
        #expect(try security("find-generic-password", "-s", "AirPort", "-a", "Office Net", "-w").stdout == "wifi-pass\n")
        // macOS's kinds, by which scripts find them (`-D "AirPort network password" -a SSID`).
        #expect(try security("find-generic-password", "-D", "AirPort network password", "-a", "Office Net", "-w").stdout == "wifi-pass\n")
        #expect(try security("find-generic-password", "-D", "802.1X Password", "-a", "alice", "-w").stdout == "eap-pass\n")
        #expect(try security("find-generic-password", "-D", "IPSec Shared Secret", "-s", "U-VPN.SS", "-w").stdout == "vpn-shared\n")
        #expect(try security("find-generic-password", "-D", "IPSec XAuth Password", "-a", "bob", "-w").stdout == "vpn-xauth\n")
        #expect(try security("find-identity").stdout.contains("\"Profile Client\""))
        #expect(try security("verify-cert", "-c", fixtures + "/signer.pem").status == 0, "the root payload is an anchor")

        // Neither the tool nor anything else deletes or changes a profile's item on its own.
        let deleted = try security("delete-generic-password", "-s", "AirPort", "-a", "Office Net")
        #expect(deleted.status == Int32(UInt8(truncatingIfNeeded: -61)), "errSecWrPerm: \(deleted.stderr)")
        #expect(try security("delete-certificate", "-c", "Profile Test Root").status != 0)
        #expect(try security("find-generic-password", "-s", "AirPort", "-a", "Office Net", "-w").stdout == "wifi-pass\n")

        // Removing the profile removes exactly its items.
        #expect(try security("profiles", "remove", "com.example.full").status == 0)
        #expect(try security("profiles", "list").stdout == "There are no configuration profiles installed\n")
        #expect(try security("find-generic-password", "-s", "AirPort", "-a", "Office Net").status == 44)
        #expect(try security("find-certificate", "-c", "Profile Client").status == 44)
        #expect(!(try security("find-identity").stdout.contains("Profile Client")))
        #expect(try security("verify-cert", "-c", fixtures + "/signer.pem").status != 0, "its anchor went with it")
        #expect(try security("find-generic-password", "-s", "mine", "-w").stdout == "kept\n", "the user's own item stays")
        #expect(try security("profiles", "remove", "com.example.full").status == 44)
    }

    @Test func anIdentityAloneIsAfterFirstUnlockAndBinaryListsRead() throws {
        #expect(try install("identity").status == 0)
        #expect(try items("com.example.identity") == ["cert accessible=cku label=\"Profile Client\"", "keys accessible=cku label=\"client\""])
        #expect(try install("binary").stdout == "profile installed: com.example.binary (unsigned)\n")
        #expect(try items("com.example.binary") == ["cert accessible=dku label=\"Profile Test Root\""])
        let listed = try security("profiles", "list").stdout.split(separator: "\n").map { $0.split(separator: " ").last.map(String.init) ?? "" }
        #expect(listed == ["com.example.binary", "com.example.identity", "installed"])

        // Installing a profile again replaces it (one record, its items once).
        #expect(try install("identity").status == 0)
        #expect(try items("com.example.identity").count == 2)
        #expect(try security("profiles", "list").stdout.hasSuffix("There are 2 configuration profiles installed\n"))
    }

    @Test func certificatesAsPEMAndDERAndACertificatePreference() throws {
        let installed = try install("certs")
        #expect(installed.stdout == "profile installed: com.example.certs (unsigned)\n", "\(installed.stderr)")
        #expect(
            try items("com.example.certs") == [
                "cert accessible=dku label=\"Profile Signer\"",
                "cert accessible=dku label=\"Profile Test Root\"",
                "genp accessible=cku label=\"mail.example.com\" service=\"mail.example.com\" account=\"\"",
            ])
        // The preference holds the SHA-1 of the certificate it names.
        let digest = try CommandRunner.run(
            executable: "/bin/sh", ["-c", "openssl x509 -in \"$0\" -outform DER | openssl dgst -sha1 -binary | od -An -tx1 | tr -d ' \\n'", fixtures + "/signer.pem"])
        #expect(digest.stdout.count == 40)
        let preference = try security("find-generic-password", "-s", "mail.example.com", "-g")
        #expect(preference.stderr.hasPrefix("password: 0x" + digest.stdout.uppercased() + " "), "\(preference.stderr)")
    }

    @Test func signaturesAreVerifiedUnverifiedOrRefused() throws {
        let tampered = try install("tampered")
        #expect(tampered.status == Int32(UInt8(truncatingIfNeeded: -67688)), "errSecInvalidSignature")
        #expect(tampered.stderr.contains("An invalid signature was encountered."))
        #expect(try security("profiles", "list").stdout == "There are no configuration profiles installed\n", "nothing installed")

        #expect(try install("selfsigned").stdout == "profile installed: com.example.signed (unverified)\n")
        #expect(try install("signed").stdout == "profile installed: com.example.signed (unverified)\n", "its root is not trusted yet")
        #expect(try security("add-trusted-cert", fixtures + "/ca.der").status == 0)
        #expect(try install("signed").stdout == "profile installed: com.example.signed (verified)\n")
        let shown = try security("profiles", "show", "com.example.signed").stdout
        #expect(shown.contains("attribute: verificationState: verified"))
        #expect(shown.contains("attribute: signer: Profile Signer"))
        #expect(try items("com.example.signed") == ["cert accessible=dku label=\"Profile Signer\""])
    }

    @Test func aPayloadThatFailsInstallsNothing() throws {
        let broken = try install("broken")
        #expect(broken.status == Int32(UInt8(truncatingIfNeeded: -25293)), "errSecAuthFailed")
        #expect(broken.stderr.contains("com.example.broken.p12"), "\(broken.stderr)")
        #expect(try security("profiles", "list").stdout == "There are no configuration profiles installed\n")
        #expect(try security("find-certificate", "-c", "Profile Test Root").status == 44, "not even the payload before it")

        let garbage = keychain.directory + "/garbage.mobileconfig"
        for bytes in [Data("not a plist".utf8), Data([0x30, 0x03, 0x02, 0x01, 0x00]), Data("<plist><array/></plist>".utf8)] {
            try bytes.write(to: URL(fileURLWithPath: garbage))
            let refused = try security("profiles", "install", garbage)
            #expect(refused.status == Int32(UInt8(truncatingIfNeeded: -26275)), "errSecDecode: \(refused.stderr)")
        }
        #expect(try security("profiles", "list").stdout == "There are no configuration profiles installed\n")
    }

    @Test func encryptedPayloadsOpenWithAKeychainIdentity() throws {
        let missing = try install("sealed")
        #expect(missing.status == 44, "no identity to open it: \(missing.stderr)")
        #expect(try security("import", fixtures + "/decrypt.p12", "-P", "dec").status == 0)
        #expect(try install("sealed").status == 0)
        #expect(try security("find-generic-password", "-s", "AirPort", "-a", "Sealed Net", "-w").stdout == "sealed-pass\n")
        #expect(try security("profiles", "show", "com.example.sealed").stdout.contains("attribute: encrypted: TRUE"))

        // An elliptic-curve recipient, opened by an identity a profile installed.
        #expect(try install("sealed-ec").status == 44)
        #expect(try install("identity").status == 0)
        #expect(try install("sealed-ec").status == 0)
    }

    /// Writes the fixtures into the directory it is given (argv[1]).
    static let makeFixtures = #"""
import os, plistlib, subprocess, sys
os.chdir(sys.argv[1])
def run(*a):
    subprocess.run(a, check=True, capture_output=True)
def der(pem):
    return subprocess.run(["openssl", "x509", "-in", pem, "-outform", "DER"], check=True, capture_output=True).stdout
run("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-subj", "/CN=Profile Test Root", "-days", "30",
    "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign")
run("openssl", "req", "-newkey", "rsa:2048", "-nodes", "-keyout", "signer.key", "-out", "signer.csr", "-subj", "/CN=Profile Signer")
run("openssl", "x509", "-req", "-in", "signer.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out", "signer.pem", "-days", "30")
run("openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "client.key", "-out", "client.pem",
    "-subj", "/CN=Profile Client", "-days", "30")
run("openssl", "pkcs12", "-export", "-inkey", "client.key", "-in", "client.pem", "-out", "client.p12", "-passout", "pass:p12-secret")
run("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "decrypt.key", "-out", "decrypt.pem", "-subj", "/CN=Profile Decryption", "-days", "30")
run("openssl", "pkcs12", "-export", "-inkey", "decrypt.key", "-in", "decrypt.pem", "-out", "decrypt.p12", "-passout", "pass:dec")
open("ca.der", "wb").write(der("ca.pem"))

def payload(kind, ident, uuid, **content):
    p = {"PayloadType": kind, "PayloadIdentifier": ident, "PayloadUUID": uuid, "PayloadVersion": 1, "PayloadDisplayName": ident.split(".")[-1]}
    p.update(content)
    return p
payloads = [
    payload("com.apple.security.root", "com.example.full.root", "U-ROOT", PayloadContent=der("ca.pem")),
    payload("com.apple.security.pkcs12", "com.example.full.client", "U-CLIENT", PayloadContent=open("client.p12", "rb").read(), Password="p12-secret"),
    payload("com.apple.wifi.managed", "com.example.full.wifi", "U-WIFI", SSID_STR="Office Net", EncryptionType="WPA2", Password="wifi-pass",
            EAPClientConfiguration={"UserName": "alice", "UserPassword": "eap-pass", "AcceptEAPTypes": [25]}),
    payload("com.apple.vpn.managed", "com.example.full.vpn", "U-VPN", UserDefinedName="Office VPN", VPNType="IPSec",
            IPSec={"SharedSecret": "vpn-shared", "XAuthName": "bob", "XAuthPassword": "vpn-xauth", "AuthenticationMethod": "SharedSecret"}),
    payload("com.apple.security.identitypreference", "com.example.full.pref", "U-PREF", Name="https://intranet.example.com", PayloadCertificateUUID="U-CLIENT"),
    payload("com.apple.mdm", "com.example.full.mdm", "U-MDM", IdentityCertificateUUID="U-CLIENT", ServerURL="https://mdm.example.com"),
    payload("com.apple.dock", "com.example.full.dock", "U-DOCK", autohide=True),
]
def profile(ident, content, **extra):
    p = {"PayloadType": "Configuration", "PayloadVersion": 1, "PayloadIdentifier": ident, "PayloadUUID": ident + "-uuid",
         "PayloadDisplayName": "Test " + ident, "PayloadOrganization": "Example", "PayloadContent": content}
    p.update(extra)
    return p
plistlib.dump(profile("com.example.full", payloads), open("full.mobileconfig", "wb"))
plistlib.dump(profile("com.example.binary", [payloads[0]]), open("binary.mobileconfig", "wb"), fmt=plistlib.FMT_BINARY)
# The identity alone: no MDM payload names it, so it is AfterFirstUnlock.
plistlib.dump(profile("com.example.identity", [payloads[1]]), open("identity.mobileconfig", "wb"))
cert_only = [payload("com.apple.security.pkcs1", "com.example.signed.cert", "U-C1", PayloadContent=der("signer.pem"))]
plistlib.dump(profile("com.example.signed", cert_only), open("tosign.mobileconfig", "wb"))
run("openssl", "smime", "-sign", "-binary", "-nodetach", "-in", "tosign.mobileconfig", "-out", "signed.mobileconfig", "-outform", "DER",
    "-signer", "signer.pem", "-inkey", "signer.key", "-certfile", "ca.pem")
# Certificates as PEM and DER, and a certificate preference naming one of them.
plistlib.dump(profile("com.example.certs", [
    payload("com.apple.security.pem", "com.example.certs.pem", "U-PEM", PayloadContent=open("ca.pem", "rb").read()),
    payload("com.apple.security.pkcs1", "com.example.certs.der", "U-DER", PayloadContent=der("signer.pem")),
    payload("com.apple.security.certificatepreference", "com.example.certs.pref", "U-CPREF", Name="mail.example.com", PayloadCertificateUUID="U-DER"),
]), open("certs.mobileconfig", "wb"))
# Signed by a certificate nobody trusts: unverified, installed.
run("openssl", "smime", "-sign", "-binary", "-nodetach", "-in", "tosign.mobileconfig", "-out", "selfsigned.mobileconfig", "-outform", "DER",
    "-signer", "client.pem", "-inkey", "client.key")
signed = bytearray(open("signed.mobileconfig", "rb").read())
at = signed.find(b"com.example.signed.cert")
signed[at] = ord("C")
open("tampered.mobileconfig", "wb").write(signed)
# Broken halfway: its second payload's PKCS#12 password is wrong.
plistlib.dump(profile("com.example.broken", [payloads[0], payload("com.apple.security.pkcs12", "com.example.broken.p12", "U-B", PayloadContent=open("client.p12", "rb").read(), Password="wrong")]), open("broken.mobileconfig", "wb"))
# Encrypted: the payload array to decrypt.pem's identity.
plistlib.dump([payload("com.apple.wifi.managed", "com.example.sealed.wifi", "U-SW", SSID_STR="Sealed Net", Password="sealed-pass")], open("sealed-payloads.plist", "wb"))
run("openssl", "cms", "-encrypt", "-binary", "-aes256", "-outform", "DER", "-in", "sealed-payloads.plist", "-out", "sealed.der", "decrypt.pem")
p = profile("com.example.sealed", [])
del p["PayloadContent"]
p["EncryptedPayloadContent"] = open("sealed.der", "rb").read()
plistlib.dump(p, open("sealed.mobileconfig", "wb"))
# The same to an elliptic-curve recipient (key agreement): the profile-installed client identity opens it.
run("openssl", "cms", "-encrypt", "-binary", "-aes256", "-outform", "DER", "-in", "sealed-payloads.plist", "-out", "sealed-ec.der", "client.pem")
p["PayloadIdentifier"] = "com.example.sealed-ec"
p["EncryptedPayloadContent"] = open("sealed-ec.der", "rb").read()
plistlib.dump(p, open("sealed-ec.mobileconfig", "wb"))
"""#
}
