#include "COpenSSL.h"
#include "openssl_setup.h"

#include <openssl/bn.h>
#include <openssl/err.h>

// Diffie-Hellman in the 1024-bit MODP group of RFC 2409 (the "Second Oakley Group"),
// generator 2: the key agreement of the Secret Service's dh-ietf1024-sha256-aes128-cbc-pkcs7
// session algorithm. Private exponents are full-length and used in constant time.

static BIGNUM *group_prime(void) {
    return BN_get_rfc2409_prime_1024(NULL);
}

int trousseau_dh1024_keypair(uint8_t private_key[128], uint8_t public_key[128]) {
    trousseau_openssl_setup();
    int status = TROUSSEAU_DH_INTERNAL;
    BN_CTX *context = BN_CTX_secure_new();
    BIGNUM *prime = group_prime();
    BIGNUM *limit = BN_new();
    BIGNUM *exponent = BN_secure_new();
    BIGNUM *generator = BN_new();
    BIGNUM *public = BN_new();
    if (context == NULL || prime == NULL || limit == NULL || exponent == NULL || generator == NULL || public == NULL) {
        goto done;
    }
    // x uniformly in [2, p - 2].
    if (!BN_copy(limit, prime) || !BN_sub_word(limit, 3) || !BN_priv_rand_range(exponent, limit) || !BN_add_word(exponent, 2)) {
        goto done;
    }
    BN_set_flags(exponent, BN_FLG_CONSTTIME);
    if (!BN_set_word(generator, 2) || !BN_mod_exp_mont_consttime(public, generator, exponent, prime, context, NULL)) {
        goto done;
    }
    if (BN_bn2binpad(exponent, private_key, 128) != 128 || BN_bn2binpad(public, public_key, 128) != 128) {
        goto done;
    }
    status = TROUSSEAU_DH_OK;

done:
    BN_clear_free(exponent);
    BN_free(generator);
    BN_free(public);
    BN_free(limit);
    BN_free(prime);
    BN_CTX_free(context);
    ERR_clear_error();
    if (status != TROUSSEAU_DH_OK) {
        OPENSSL_cleanse(private_key, 128);
    }
    return status;
}

int trousseau_dh1024_shared_secret(const uint8_t private_key[128], const uint8_t *peer_key, size_t peer_length, uint8_t secret[128]) {
    trousseau_openssl_setup();
    if (peer_length == 0 || peer_length > 1024) {
        return TROUSSEAU_DH_BAD_KEY;
    }
    int status = TROUSSEAU_DH_INTERNAL;
    BN_CTX *context = BN_CTX_secure_new();
    BIGNUM *prime = group_prime();
    BIGNUM *highest = BN_new();
    BIGNUM *exponent = BN_secure_new();
    BIGNUM *peer = BN_bin2bn(peer_key, (int)peer_length, NULL);
    BIGNUM *shared = BN_secure_new();
    if (context == NULL || prime == NULL || highest == NULL || exponent == NULL || peer == NULL || shared == NULL) {
        goto done;
    }
    // 1 < y < p - 1: 0, 1 and p - 1 would make the secret 0, 1 or ±1, known to anyone.
    if (!BN_copy(highest, prime) || !BN_sub_word(highest, 1)) {
        goto done;
    }
    if (BN_cmp(peer, BN_value_one()) <= 0 || BN_cmp(peer, highest) >= 0) {
        status = TROUSSEAU_DH_BAD_KEY;
        goto done;
    }
    if (BN_bin2bn(private_key, 128, exponent) == NULL) {
        goto done;
    }
    BN_set_flags(exponent, BN_FLG_CONSTTIME);
    if (!BN_mod_exp_mont_consttime(shared, peer, exponent, prime, context, NULL) || BN_bn2binpad(shared, secret, 128) != 128) {
        goto done;
    }
    status = TROUSSEAU_DH_OK;

done:
    BN_clear_free(exponent);
    BN_clear_free(shared);
    BN_free(peer);
    BN_free(highest);
    BN_free(prime);
    BN_CTX_free(context);
    ERR_clear_error();
    if (status != TROUSSEAU_DH_OK) {
        OPENSSL_cleanse(secret, 128);
    }
    return status;
}
