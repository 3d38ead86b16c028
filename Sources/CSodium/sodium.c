// libsodium's initialisation, called before any ristretto255 operation (CPace).
#include "CSodium.h"

int trousseau_sodium_ready(void) {
    // sodium_init is thread-safe and returns 1 once already initialised.
    return sodium_init();
}
