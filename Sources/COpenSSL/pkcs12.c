#include "COpenSSL.h"
#include "openssl_setup.h"

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pkcs12.h>
#include <openssl/provider.h>
#include <openssl/x509.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static pthread_once_t providers_once = PTHREAD_ONCE_INIT;
// Loaded once and kept for the life of the process.
static OSSL_PROVIDER *default_provider;
static OSSL_PROVIDER *legacy_provider;

// No configuration file (securityd decides what it runs with), the default provider, and
// the legacy one for RC2-40 and the other PKCS#12 ciphers OpenSSL 3 moved there. Without
// it (a system without the module) legacy files do not decrypt, and say so as malformed.
static void load_providers_once(void) {
    OPENSSL_init_crypto(OPENSSL_INIT_NO_LOAD_CONFIG, NULL);
    default_provider = OSSL_PROVIDER_load(NULL, "default");
    legacy_provider = OSSL_PROVIDER_load(NULL, "legacy");
    ERR_clear_error();
}

void trousseau_openssl_setup(void) {
    pthread_once(&providers_once, load_providers_once);
}

void trousseau_pkcs12_free(uint8_t *bytes, size_t length) {
    if (bytes != NULL) {
        OPENSSL_cleanse(bytes, length);
        OPENSSL_free(bytes);
    }
}

void trousseau_pkcs12_contents_free(trousseau_pkcs12_contents *contents) {
    trousseau_pkcs12_free(contents->key, contents->key_length);
    OPENSSL_free(contents->certificate);
    for (size_t i = 0; i < contents->other_count; i++) {
        OPENSSL_free(contents->others[i]);
    }
    free(contents->others);
    free(contents->other_lengths);
    memset(contents, 0, sizeof *contents);
}

static int encode_certificate(X509 *certificate, uint8_t **out, size_t *length) {
    unsigned char *der = NULL;
    int count = i2d_X509(certificate, &der);
    if (count <= 0) {
        return 0;
    }
    *out = der;
    *length = (size_t)count;
    return 1;
}

int trousseau_pkcs12_decode(const uint8_t *bytes, size_t length, const char *password, trousseau_pkcs12_contents *out) {
    trousseau_openssl_setup();
    memset(out, 0, sizeof *out);
    ERR_clear_error();

    const unsigned char *cursor = bytes;
    PKCS12 *p12 = d2i_PKCS12(NULL, &cursor, (long)length);
    if (p12 == NULL || cursor != bytes + length) {
        PKCS12_free(p12);
        ERR_clear_error();
        return TROUSSEAU_PKCS12_MALFORMED;
    }

    // The MAC first: a wrong password is told apart from a damaged file. A MAC that does not
    // match leaves no error queued; one that cannot be computed (an unknown algorithm) does.
    const char *pass = password;
    if (PKCS12_mac_present(p12)) {
        if (!PKCS12_verify_mac(p12, pass, -1)) {
            int unreadable = ERR_peek_error() != 0;
            ERR_clear_error();
            if (pass[0] == '\0' && PKCS12_verify_mac(p12, NULL, 0)) {
                pass = NULL;
            } else {
                ERR_clear_error();
                PKCS12_free(p12);
                return unreadable ? TROUSSEAU_PKCS12_MALFORMED : TROUSSEAU_PKCS12_BAD_PASSWORD;
            }
        }
    }

    EVP_PKEY *key = NULL;
    X509 *certificate = NULL;
    STACK_OF(X509) *others = NULL;
    int parsed = PKCS12_parse(p12, pass, &key, &certificate, &others);
    int mac = PKCS12_mac_present(p12);
    PKCS12_free(p12);
    if (!parsed) {
        ERR_clear_error();
        // Verified by its MAC, the file's contents should decrypt; without a MAC, contents
        // that do not are the password's fault as far as anyone can tell.
        return mac ? TROUSSEAU_PKCS12_MALFORMED : TROUSSEAU_PKCS12_BAD_PASSWORD;
    }

    int status = TROUSSEAU_PKCS12_INTERNAL;
    if (key != NULL) {
        PKCS8_PRIV_KEY_INFO *info = EVP_PKEY2PKCS8(key);
        unsigned char *der = NULL;
        int count = info != NULL ? i2d_PKCS8_PRIV_KEY_INFO(info, &der) : 0;
        PKCS8_PRIV_KEY_INFO_free(info);
        if (count <= 0) {
            goto done;
        }
        out->key = der;
        out->key_length = (size_t)count;
    }
    if (certificate != NULL && !encode_certificate(certificate, &out->certificate, &out->certificate_length)) {
        goto done;
    }
    int total = others != NULL ? sk_X509_num(others) : 0;
    if (total > 0) {
        out->others = calloc((size_t)total, sizeof(uint8_t *));
        out->other_lengths = calloc((size_t)total, sizeof(size_t));
        if (out->others == NULL || out->other_lengths == NULL) {
            goto done;
        }
        for (int i = 0; i < total; i++) {
            if (!encode_certificate(sk_X509_value(others, i), &out->others[i], &out->other_lengths[i])) {
                goto done;
            }
            out->other_count = (size_t)i + 1;
        }
    }
    status = TROUSSEAU_PKCS12_OK;

done:
    EVP_PKEY_free(key);
    X509_free(certificate);
    sk_X509_pop_free(others, X509_free);
    ERR_clear_error();
    if (status != TROUSSEAU_PKCS12_OK) {
        trousseau_pkcs12_contents_free(out);
    }
    return status;
}

int trousseau_pkcs12_encode(const uint8_t *key, size_t key_length, const uint8_t *const *certificates,
                            const size_t *certificate_lengths, size_t certificate_count, const char *password,
                            const char *name, uint8_t **out, size_t *out_length) {
    trousseau_openssl_setup();
    *out = NULL;
    *out_length = 0;
    int status = TROUSSEAU_PKCS12_MALFORMED;
    EVP_PKEY *pkey = NULL;
    X509 *leaf = NULL;
    STACK_OF(X509) *chain = sk_X509_new_null();
    PKCS12 *p12 = NULL;
    if (chain == NULL) {
        return TROUSSEAU_PKCS12_INTERNAL;
    }
    if (key != NULL) {
        const unsigned char *cursor = key;
        PKCS8_PRIV_KEY_INFO *info = d2i_PKCS8_PRIV_KEY_INFO(NULL, &cursor, (long)key_length);
        pkey = info != NULL ? EVP_PKCS82PKEY(info) : NULL;
        PKCS8_PRIV_KEY_INFO_free(info);
        if (pkey == NULL) {
            goto done;
        }
    }
    for (size_t i = 0; i < certificate_count; i++) {
        const unsigned char *cursor = certificates[i];
        X509 *certificate = d2i_X509(NULL, &cursor, (long)certificate_lengths[i]);
        if (certificate == NULL) {
            goto done;
        }
        if (i == 0 && pkey != NULL) {
            leaf = certificate;
        } else if (!sk_X509_push(chain, certificate)) {
            X509_free(certificate);
            status = TROUSSEAU_PKCS12_INTERNAL;
            goto done;
        }
    }
    status = TROUSSEAU_PKCS12_INTERNAL;
    p12 = PKCS12_create(password, name, pkey, leaf, chain, 0, 0, 0, 0, 0);
    if (p12 == NULL) {
        goto done;
    }
    unsigned char *der = NULL;
    int count = i2d_PKCS12(p12, &der);
    if (count <= 0) {
        goto done;
    }
    *out = der;
    *out_length = (size_t)count;
    status = TROUSSEAU_PKCS12_OK;

done:
    PKCS12_free(p12);
    EVP_PKEY_free(pkey);
    X509_free(leaf);
    sk_X509_pop_free(chain, X509_free);
    ERR_clear_error();
    return status;
}
