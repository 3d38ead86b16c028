#!/usr/bin/env python3
"""Known-answer vectors for Trousseau's token and blob formats, computed independently
of the Swift code with Python's `cryptography` package. Prints JSON.

Class key (used as the ak class key, and as the class-D key the index key derives from):
32 bytes 0x00..0x1f. Row: genp, UUID 00..0f, group "team.app", class "ak", not
synchronizable, not a tombstone, primary-key token = the computed one."""
import hashlib, hmac, json, struct
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from cryptography.hazmat.primitives import hashes

class_key = bytes(range(32))

def derive(purpose):
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=None,
                info=("trousseau " + purpose).encode()).derive(class_key)

def lp(b):
    return struct.pack(">I", len(b)) + b

def value_string(s):
    return b"\x01" + lp(s.encode())

def value_bool(b):
    return b"\x05" + (b"\x01" if b else b"\x00")

index_key = derive("index key")
token_msg = b"trousseau token" + lp(b"genp") + lp(b"acct") + value_string("alice")
token = struct.unpack(">q", hmac.new(index_key, token_msg, hashlib.sha256).digest()[:8])[0]

pk_msg = b"trousseau primary key" + lp(b"genp")
for name, enc in [("acct", value_string("alice")), ("svce", value_string("mail")),
                  ("agrp", value_string("team.app")), ("sync", value_bool(False))]:
    pk_msg += lp(name.encode()) + enc
pk_token = hmac.new(index_key, pk_msg, hashlib.sha256).digest()

def aad(part):
    return (b"trousseau row" + bytes([1, part]) + lp(b"genp") + bytes(range(16)) + lp(b"team.app")
            + lp(b"ak") + b"\x00" + b"\x00" + lp(pk_token))

attributes = {"acct": value_string("alice"), "svce": value_string("mail")}
plain = b"\x01" + struct.pack(">H", len(attributes))
for name in sorted(attributes):
    plain += bytes([len(name)]) + name.encode() + attributes[name]
meta_nonce = bytes([0xA0] * 12)
meta_blob = b"\x01" + meta_nonce + AESGCM(derive("metadata key")).encrypt(meta_nonce, plain, aad(1))

item_key = bytes([0x42] * 32)
wrap_nonce = bytes([0xB0] * 12)
wrapped = wrap_nonce + AESGCM(class_key).encrypt(wrap_nonce, item_key, aad(2))
secret_nonce = bytes([0xC0] * 12)
secret_ct = secret_nonce + AESGCM(item_key).encrypt(secret_nonce, b"\x01" + b"hunter2", aad(2))
secret_blob = b"\x01" + struct.pack(">H", len(wrapped)) + wrapped + secret_ct

print(json.dumps({
    "acctToken": token,
    "primaryKeyToken": pk_token.hex(),
    "metadataBlob": meta_blob.hex(),
    "secretBlob": secret_blob.hex(),
}, indent=2))
