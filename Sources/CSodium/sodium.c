// libsodium's initialisation, called before any ristretto255 operation (CPace) and before
// the keychain's first AES-256-GCM call (it detects AES-NI and PCLMUL).
#include "CSodium.h"

int trousseau_sodium_ready(void) {
    // sodium_init is thread-safe and returns 1 once already initialised.
    return sodium_init();
}
