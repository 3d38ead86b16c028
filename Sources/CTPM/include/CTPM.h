#ifndef TROUSSEAU_CTPM_H
#define TROUSSEAU_CTPM_H

// Debian's tpm2-tss (libtss2-esys, -tctildr, -mu, -rc), the one shim for it: the enclave's
// TPM 2.0 backend (docs/ARCHITECTURE.md, "The enclave on a TPM"). Swift sees byte buffers
// and response codes only, never ESYS's unions and fixed-size TPM2B arrays.
//
// Every operation makes its own salted HMAC session (the salt encrypted to the storage
// root key, AES-128-CFB parameter encryption both ways), loads the object it needs, and
// flushes both on every path: a TPM without a resource manager (swtpm) has three object
// slots. An authValue's trailing zero bytes are trimmed here, as TPM 2.0 Part 1 says and
// tpm2-tss 3.2.1 does not. Return values are TSS2 response codes: 0 is success.

#include <stddef.h>
#include <stdint.h>

typedef struct trousseau_tpm trousseau_tpm;

/// Response codes the callers tell apart (layer bits removed, session or parameter number kept out).
enum {
    TROUSSEAU_TPM_RC_AUTH_FAIL = 0x08E,   // TPM_RC_AUTH_FAIL (format 1): wrong authValue, counted
    TROUSSEAU_TPM_RC_BAD_AUTH = 0x0A2,    // TPM_RC_BAD_AUTH: wrong authValue on a NODA object
    TROUSSEAU_TPM_RC_LOCKOUT = 0x921,     // TPM_RC_LOCKOUT: dictionary-attack lockout
    TROUSSEAU_TPM_RC_INTEGRITY = 0x09F,   // TPM_RC_INTEGRITY: a blob not from this TPM's storage key
    TROUSSEAU_TPM_RC_SHIM_FORMAT = 0x7F0001, // this shim: a blob that does not parse
    TROUSSEAU_TPM_RC_SHIM_SIZE = 0x7F0002,   // this shim: an argument too large, or a buffer too small
    TROUSSEAU_TPM_RC_SHIM_MEMORY = 0x7F0003, // this shim: out of memory
};

/// Connects to the TPM named by `tcti` ("device:/dev/tpmrm0", "swtpm:path=…"; NULL: the
/// library's default) and makes the storage root key (a transient primary under the owner
/// hierarchy from the TCG's ECC P-256 template, the same key every time for one owner seed).
uint32_t trousseau_tpm_open(const char *tcti, trousseau_tpm **out);
void trousseau_tpm_close(trousseau_tpm *tpm);

/// The storage root key's name (nameAlg ‖ SHA-256 of its public area; 34 bytes).
uint32_t trousseau_tpm_srk_name(trousseau_tpm *tpm, uint8_t *name, size_t capacity, size_t *length);

/// A TPM-generated HMAC-SHA256 key under the storage root key with `auth` as its authValue;
/// `da_protected` 0 sets noDA. Writes the marshalled public and private areas to `blob`.
uint32_t trousseau_tpm_create_hmac_key(trousseau_tpm *tpm, const uint8_t *auth, size_t auth_length, int da_protected,
                                       uint8_t *blob, size_t capacity, size_t *blob_length);

/// HMAC-SHA256 of `message` (at most 1024 bytes) under the key in `blob`, with `auth`.
uint32_t trousseau_tpm_hmac(trousseau_tpm *tpm, const uint8_t *blob, size_t blob_length, const uint8_t *auth,
                            size_t auth_length, const uint8_t *message, size_t message_length, uint8_t mac[32]);

/// A TPM-generated P-256 key (sign and ECDH, DA-protected) with `auth` as its authValue; its
/// public key as X9.63 (65 bytes) in `x963`.
uint32_t trousseau_tpm_create_p256_key(trousseau_tpm *tpm, const uint8_t *auth, size_t auth_length, uint8_t *blob,
                                       size_t capacity, size_t *blob_length, uint8_t x963[65]);

/// ECDSA over a SHA-256 `digest` with the key in `blob`: r and s, 32 bytes each.
uint32_t trousseau_tpm_sign(trousseau_tpm *tpm, const uint8_t *blob, size_t blob_length, const uint8_t *auth,
                            size_t auth_length, const uint8_t digest[32], uint8_t r[32], uint8_t s[32]);

/// ECDH: the x coordinate of the key's scalar times `peer` (X9.63, 65 bytes).
uint32_t trousseau_tpm_ecdh(trousseau_tpm *tpm, const uint8_t *blob, size_t blob_length, const uint8_t *auth,
                            size_t auth_length, const uint8_t peer[65], uint8_t shared_x[32]);

/// The dictionary-attack state: failures counted, failures allowed, seconds for one to be
/// forgotten, seconds the lockout hierarchy waits after a wrong lockoutAuth, and whether the
/// TPM is in lockout now.
uint32_t trousseau_tpm_lockout(trousseau_tpm *tpm, uint32_t *counter, uint32_t *max_tries, uint32_t *interval,
                               uint32_t *recovery, int *in_lockout);

/// The library's text for a response code (never a secret: codes only).
const char *trousseau_tpm_describe(uint32_t rc);

#endif
