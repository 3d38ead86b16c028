// OpenSSL's libcrypto (Debian's libssl3), the one shim for it: PKCS#12 files, CMS messages,
// and the Secret Service's Diffie-Hellman group. For PKCS#12 it is the one maintained
// implementation that reads every kind people have — OpenSSL 3's PBES2/AES-256 default and
// the legacy 3DES and RC2-40 files of `openssl pkcs12 -legacy` and older macOS exports.
// Used by securityd only (clients link no C module; docs/ARCHITECTURE.md).
#ifndef TROUSSEAU_COPENSSL_H
#define TROUSSEAU_COPENSSL_H

#include <stddef.h>
#include <stdint.h>

enum {
    TROUSSEAU_PKCS12_OK = 0,
    /// The integrity MAC does not verify, or the contents do not decrypt, with the password.
    TROUSSEAU_PKCS12_BAD_PASSWORD = 1,
    /// Not a PKCS#12 file, or one OpenSSL cannot read.
    TROUSSEAU_PKCS12_MALFORMED = 2,
    /// Out of memory or an OpenSSL failure that is not about the input.
    TROUSSEAU_PKCS12_INTERNAL = 3,
};

/// What a PKCS#12 file holds: its first private key (PKCS#8 DER, or none), the certificate
/// that key belongs to (or none), and every other certificate. Free with
/// `trousseau_pkcs12_contents_free`, which zeroes the key.
typedef struct {
    uint8_t *key;
    size_t key_length;
    uint8_t *certificate;
    size_t certificate_length;
    uint8_t **others;
    size_t *other_lengths;
    size_t other_count;
} trousseau_pkcs12_contents;

/// Decodes `length` bytes with `password` (NUL-terminated UTF-8; "" is also tried as no
/// password, as OpenSSL's own tool does).
int trousseau_pkcs12_decode(const uint8_t *bytes, size_t length, const char *password, trousseau_pkcs12_contents *out);

void trousseau_pkcs12_contents_free(trousseau_pkcs12_contents *contents);

/// Writes a PKCS#12 file with OpenSSL's defaults (PBES2, AES-256-CBC, PBKDF2 with
/// HMAC-SHA256, a SHA-256 MAC) holding `key` (PKCS#8 DER, may be NULL), `certificates[0]`
/// as its certificate and the rest as the chain. `*out` is freed with `trousseau_pkcs12_free`.
int trousseau_pkcs12_encode(const uint8_t *key, size_t key_length, const uint8_t *const *certificates,
                            const size_t *certificate_lengths, size_t certificate_count, const char *password,
                            const char *name, uint8_t **out, size_t *out_length);

void trousseau_pkcs12_free(uint8_t *bytes, size_t length);

// CMS (RFC 5652) messages of configuration profiles: signed profiles (SignedData with the
// profile attached) and encrypted payloads (EnvelopedData), the formats `openssl smime` and
// `openssl cms` write and macOS's profile tools read.

enum {
    TROUSSEAU_CMS_OK = 0,
    /// SignedData whose signature does not verify over its content (tampered), or
    /// EnvelopedData that does not open with the key given.
    TROUSSEAU_CMS_REFUSED = 1,
    /// Not a CMS message of the kind asked for, or one OpenSSL cannot read.
    TROUSSEAU_CMS_MALFORMED = 2,
    TROUSSEAU_CMS_INTERNAL = 3,
};

/// What a signed message holds: its content, the signer's certificate first and then every
/// other certificate it carries. Free with `trousseau_cms_signed_free`.
typedef struct {
    uint8_t *content;
    size_t content_length;
    uint8_t **certificates;
    size_t *certificate_lengths;
    size_t certificate_count;
} trousseau_cms_signed;

/// Opens DER SignedData with attached content: checks each signer's signature over the
/// content with the certificate the message carries for it (not the chain: the caller
/// evaluates trust), and returns the content and certificates.
int trousseau_cms_open_signed(const uint8_t *bytes, size_t length, trousseau_cms_signed *out);

void trousseau_cms_signed_free(trousseau_cms_signed *signed_message);

/// Whether DER EnvelopedData has a recipient for `certificate` (DER): key transport
/// (RSA) or key agreement (elliptic curves).
int trousseau_cms_is_recipient(const uint8_t *bytes, size_t length, const uint8_t *certificate, size_t certificate_length);

/// Decrypts DER EnvelopedData for the recipient `certificate` with its `key` (PKCS#8 DER).
/// `*out` is freed (and zeroed) with `trousseau_pkcs12_free`.
int trousseau_cms_decrypt(const uint8_t *bytes, size_t length, const uint8_t *key, size_t key_length, const uint8_t *certificate,
                          size_t certificate_length, uint8_t **out, size_t *out_length);

// Diffie-Hellman in RFC 2409's 1024-bit MODP group, generator 2 (the Secret Service's
// dh-ietf1024-sha256-aes128-cbc-pkcs7 session algorithm). Numbers are 128-byte big-endian.

enum {
    TROUSSEAU_DH_OK = 0,
    /// The peer's public key is not in 2 … p − 2.
    TROUSSEAU_DH_BAD_KEY = 1,
    TROUSSEAU_DH_INTERNAL = 3,
};

/// A private exponent in 2 … p − 2 and its public key 2^x mod p.
int trousseau_dh1024_keypair(uint8_t private_key[128], uint8_t public_key[128]);

/// peer^x mod p, left-padded to 128 bytes; `peer_key` is big-endian, any length up to 1 KiB.
int trousseau_dh1024_shared_secret(const uint8_t private_key[128], const uint8_t *peer_key, size_t peer_length, uint8_t secret[128]);

#endif
