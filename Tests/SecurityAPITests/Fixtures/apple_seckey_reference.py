"""A reference for Apple's SecKey constructions, on Python's `cryptography` package, to check
Trousseau's against an implementation that is not its own.

Usage: apple_seckey_reference.py COMMAND HEX-ARGUMENTS...; prints hex.
  ec-public-pem POINT                      the SPKI PEM of an X9.63 P-curve point
  ec-point PEM-FILE                        the X9.63 point of a public key in a PEM file
  ecies-encrypt POINT PLAINTEXT            Apple's ECIES, cofactor/standard X9.63 SHA-256, variable IV
  ecies-decrypt PRIVATE-X963 CIPHERTEXT
  oaep-encrypt PKCS1-PUBLIC PLAINTEXT      RSA-OAEP SHA-256
  oaep-decrypt PKCS1-PRIVATE CIPHERTEXT
  oaep-aesgcm-encrypt PKCS1-PUBLIC PLAINTEXT   Apple's RSA-OAEP-SHA256 + AES-GCM
  make-certificate DIRECTORY               a P-256 key (key.der: X9.63 04||X||Y||K) and a
                                           self-signed certificate (cert.der) with a
                                           PrintableString organization in mixed case
  make-chain DIRECTORY                     root.der → intermediate.der → leaf.der (server, for
                                           leaf.example.com and 127.0.0.1), and leaves that
                                           fail one check each: expired.der, weak.der (RSA
                                           1024), client.der (clientAuth only), and other-root.der;
                                           leaf.key.pem, the leaf's key (PKCS#8)
  make-loop DIRECTORY                      loop-a.der and loop-b.der, each issued by the
                                           other, and loop-leaf.der issued by A
"""
import os
import sys

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.x963kdf import X963KDF

CURVES = {65: ec.SECP256R1(), 97: ec.SECP384R1(), 133: ec.SECP521R1()}


def ecies_key(shared, ephemeral_point, field_bits):
    key_length = 32 if field_bits > 256 else 16
    derived = X963KDF(algorithm=hashes.SHA256(), length=key_length + 16, sharedinfo=ephemeral_point).derive(shared)
    return derived[:key_length], derived[key_length:]


def main(command, *args):
    if command == "make-certificate":
        make_certificate(args[0])
        return
    if command == "make-chain":
        make_chain(args[0])
        return
    if command == "make-loop":
        make_loop(args[0])
        return
    data = [bytes.fromhex(a) if command != "ec-point" else a for a in args]
    if command == "ec-public-pem":
        key = ec.EllipticCurvePublicKey.from_encoded_point(CURVES[len(data[0])], data[0])
        sys.stdout.write(key.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode())
        return
    if command == "ec-point":
        key = serialization.load_pem_public_key(open(data[0], "rb").read())
        out = key.public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
    elif command == "ecies-encrypt":
        point, plaintext = data
        recipient = ec.EllipticCurvePublicKey.from_encoded_point(CURVES[len(point)], point)
        ephemeral = ec.generate_private_key(recipient.curve)
        ephemeral_point = ephemeral.public_key().public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
        key, iv = ecies_key(ephemeral.exchange(ec.ECDH(), recipient), ephemeral_point, recipient.curve.key_size)
        out = ephemeral_point + AESGCM(key).encrypt(iv, plaintext, None)
    elif command == "ecies-decrypt":
        private, ciphertext = data
        point_length = (len(private) - 1) * 2 // 3 + 1
        curve = CURVES[point_length]
        own = ec.derive_private_key(int.from_bytes(private[point_length:], "big"), curve)
        ephemeral = ec.EllipticCurvePublicKey.from_encoded_point(curve, ciphertext[:point_length])
        key, iv = ecies_key(own.exchange(ec.ECDH(), ephemeral), ciphertext[:point_length], curve.key_size)
        out = AESGCM(key).decrypt(iv, ciphertext[point_length:], None)
    elif command in ("oaep-encrypt", "oaep-aesgcm-encrypt"):
        public, plaintext = data
        key = serialization.load_der_public_key(public)
        oaep = padding.OAEP(mgf=padding.MGF1(hashes.SHA256()), algorithm=hashes.SHA256(), label=None)
        if command == "oaep-encrypt":
            out = key.encrypt(plaintext, oaep)
        else:
            session = os.urandom(16 if key.key_size < 4096 else 32)
            out = key.encrypt(session, oaep) + AESGCM(session).encrypt(b"\0" * 16, plaintext, public)
    elif command == "oaep-decrypt":
        private, ciphertext = data
        key = serialization.load_der_private_key(private, None)
        out = key.decrypt(ciphertext, padding.OAEP(mgf=padding.MGF1(hashes.SHA256()), algorithm=hashes.SHA256(), label=None))
    else:
        raise SystemExit("unknown command " + command)
    sys.stdout.write(out.hex())


def make_certificate(directory):
    import datetime

    from cryptography import x509
    from cryptography.x509.name import _ASN1Type
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([
        x509.NameAttribute(NameOID.COMMON_NAME, "Test Leaf"),
        x509.NameAttribute(NameOID.ORGANIZATION_NAME, "  Mixed   case Org ", _ASN1Type.PrintableString),
        x509.NameAttribute(NameOID.EMAIL_ADDRESS, "leaf@example.com"),
    ])
    start = datetime.datetime(2026, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(0x0123456789ABCDEF)
        .not_valid_before(start)
        .not_valid_after(start + datetime.timedelta(days=30))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("leaf.example.com"), x509.RFC822Name("alt@example.com")]), critical=False)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    with open(os.path.join(directory, "cert.der"), "wb") as f:
        f.write(certificate.public_bytes(serialization.Encoding.DER))
    point = key.public_key().public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
    with open(os.path.join(directory, "key.der"), "wb") as f:
        f.write(point + key.private_numbers().private_value.to_bytes(32, "big"))


def make_chain(directory):
    import datetime
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives.asymmetric import rsa
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    now = datetime.datetime.now(datetime.timezone.utc)

    def name(common):
        return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])

    def issue(subject, key, issuer, issuer_key, ca, start, days, usages=None, names=None):
        builder = (
            x509.CertificateBuilder().subject_name(name(subject)).issuer_name(name(issuer)).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(start).not_valid_after(start + datetime.timedelta(days=days))
            .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
        )
        if usages:
            builder = builder.add_extension(x509.ExtendedKeyUsage(usages), critical=False)
        if names:
            builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
        return builder.sign(issuer_key, hashes.SHA256())

    def save(certificate, file):
        with open(os.path.join(directory, file), "wb") as f:
            f.write(certificate.public_bytes(serialization.Encoding.DER))

    root_key = ec.generate_private_key(ec.SECP256R1())
    intermediate_key = ec.generate_private_key(ec.SECP256R1())
    leaf_key = ec.generate_private_key(ec.SECP256R1())
    start = now - datetime.timedelta(days=1)
    authorities = now - datetime.timedelta(days=60)
    server = [ExtendedKeyUsageOID.SERVER_AUTH]
    names = [x509.DNSName("leaf.example.com"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
    save(issue("Test Root", root_key, "Test Root", root_key, True, authorities, 3650), "root.der")
    save(issue("Test Intermediate", intermediate_key, "Test Root", root_key, True, authorities, 1000), "intermediate.der")
    save(issue("leaf.example.com", leaf_key, "Test Intermediate", intermediate_key, False, start, 90, server, names), "leaf.der")
    save(issue("expired.example.com", leaf_key, "Test Intermediate", intermediate_key, False, now - datetime.timedelta(days=30), 10, server, names), "expired.der")
    weak_key = rsa.generate_private_key(65537, 1024)
    save(issue("weak.example.com", weak_key, "Test Intermediate", intermediate_key, False, start, 90, server, names), "weak.der")
    save(issue("client.example.com", leaf_key, "Test Intermediate", intermediate_key, False, start, 90, [ExtendedKeyUsageOID.CLIENT_AUTH], names), "client.der")
    with open(os.path.join(directory, "leaf.key.pem"), "wb") as f:
        f.write(leaf_key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    other_key = ec.generate_private_key(ec.SECP256R1())
    save(issue("Test Root", other_key, "Test Root", other_key, True, start, 3650), "other-root.der")


def make_loop(directory):
    """loop-a.der and loop-b.der each issued by the other, loop-leaf.der issued by A."""
    import datetime

    from cryptography import x509
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.timezone.utc)
    keys = {name: ec.generate_private_key(ec.SECP256R1()) for name in ("a", "b", "leaf")}

    def issue(subject, issuer, ca):
        name = lambda common: x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])
        certificate = (
            x509.CertificateBuilder().subject_name(name("Loop " + subject.upper())).issuer_name(name("Loop " + issuer.upper()))
            .public_key(keys[subject].public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=30))
            .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
            .sign(keys[issuer], hashes.SHA256())
        )
        with open(os.path.join(directory, "loop-" + subject + ".der"), "wb") as f:
            f.write(certificate.public_bytes(serialization.Encoding.DER))

    issue("a", "b", True)
    issue("b", "a", True)
    issue("leaf", "a", False)


if __name__ == "__main__":
    main(*sys.argv[1:])
