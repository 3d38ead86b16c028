#ifndef TROUSSEAU_CSODIUM_H
#define TROUSSEAU_CSODIUM_H

// libsodium (Debian's libsodium23), the one shim for it: the ristretto255 group that CPace
// runs in (joining a device to the sync circle), and the keychain's AES-256-GCM and
// HMAC-SHA256 (KeychainCrypto), whose per-call cost is a fraction of swift-crypto's for
// blobs and tokens this small.
#include <sodium/core.h>
#include <sodium/crypto_aead_aes256gcm.h>
#include <sodium/crypto_auth_hmacsha256.h>
#include <sodium/randombytes.h>
#include <sodium/crypto_core_ristretto255.h>
#include <sodium/crypto_scalarmult_ristretto255.h>
#include <sodium/utils.h>

/// Initialises libsodium once (thread-safe, idempotent). Returns 0 or 1 when ready, -1 if
/// the library cannot be used.
int trousseau_sodium_ready(void);

#endif
