#include "COpenSSL.h"
#include "openssl_setup.h"

#include <openssl/bio.h>
#include <openssl/buffer.h>
#include <openssl/cms.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/x509.h>
#include <stdlib.h>
#include <string.h>

static CMS_ContentInfo *read_cms(const uint8_t *bytes, size_t length, int type) {
    const unsigned char *cursor = bytes;
    CMS_ContentInfo *cms = d2i_CMS_ContentInfo(NULL, &cursor, (long)length);
    if (cms == NULL || cursor != bytes + length || OBJ_obj2nid(CMS_get0_type(cms)) != type) {
        CMS_ContentInfo_free(cms);
        return NULL;
    }
    return cms;
}

static int append_certificate(trousseau_cms_signed *out, X509 *certificate) {
    unsigned char *der = NULL;
    int count = i2d_X509(certificate, &der);
    if (count <= 0) {
        return 0;
    }
    for (size_t i = 0; i < out->certificate_count; i++) {
        if (out->certificate_lengths[i] == (size_t)count && memcmp(out->certificates[i], der, (size_t)count) == 0) {
            OPENSSL_free(der);
            return 1;
        }
    }
    uint8_t **certificates = realloc(out->certificates, (out->certificate_count + 1) * sizeof(uint8_t *));
    if (certificates == NULL) {
        OPENSSL_free(der);
        return 0;
    }
    out->certificates = certificates;
    size_t *lengths = realloc(out->certificate_lengths, (out->certificate_count + 1) * sizeof(size_t));
    if (lengths == NULL) {
        OPENSSL_free(der);
        return 0;
    }
    out->certificate_lengths = lengths;
    out->certificates[out->certificate_count] = der;
    out->certificate_lengths[out->certificate_count] = (size_t)count;
    out->certificate_count += 1;
    return 1;
}

void trousseau_cms_signed_free(trousseau_cms_signed *signed_message) {
    OPENSSL_free(signed_message->content);
    for (size_t i = 0; i < signed_message->certificate_count; i++) {
        OPENSSL_free(signed_message->certificates[i]);
    }
    free(signed_message->certificates);
    free(signed_message->certificate_lengths);
    memset(signed_message, 0, sizeof *signed_message);
}

int trousseau_cms_open_signed(const uint8_t *bytes, size_t length, trousseau_cms_signed *out) {
    trousseau_openssl_setup();
    memset(out, 0, sizeof *out);
    ERR_clear_error();
    CMS_ContentInfo *cms = read_cms(bytes, length, NID_pkcs7_signed);
    if (cms == NULL) {
        ERR_clear_error();
        return TROUSSEAU_CMS_MALFORMED;
    }
    int status = TROUSSEAU_CMS_MALFORMED;
    BIO *content = NULL;
    STACK_OF(X509) *signers = NULL;
    STACK_OF(X509) *carried = NULL;
    // Attached content only, and at least one signer (CMS_verify refuses a message without).
    ASN1_OCTET_STRING **attached = CMS_get0_content(cms);
    if (attached == NULL || *attached == NULL || sk_CMS_SignerInfo_num(CMS_get0_SignerInfos(cms)) < 1) {
        goto done;
    }
    content = BIO_new(BIO_s_mem());
    if (content == NULL) {
        status = TROUSSEAU_CMS_INTERNAL;
        goto done;
    }
    // The signatures only: which certificates to trust is the daemon's trust evaluation.
    if (CMS_verify(cms, NULL, NULL, NULL, content, CMS_NO_SIGNER_CERT_VERIFY | CMS_BINARY) != 1) {
        status = TROUSSEAU_CMS_REFUSED;
        goto done;
    }
    BUF_MEM *buffer = NULL;
    BIO_get_mem_ptr(content, &buffer);
    out->content = OPENSSL_malloc(buffer->length > 0 ? buffer->length : 1);
    if (out->content == NULL) {
        status = TROUSSEAU_CMS_INTERNAL;
        goto done;
    }
    memcpy(out->content, buffer->data, buffer->length);
    out->content_length = buffer->length;
    status = TROUSSEAU_CMS_INTERNAL;
    signers = CMS_get0_signers(cms);
    carried = CMS_get1_certs(cms);
    if (signers == NULL || sk_X509_num(signers) < 1) {
        goto done;
    }
    for (int i = 0; i < sk_X509_num(signers); i++) {
        if (!append_certificate(out, sk_X509_value(signers, i))) {
            goto done;
        }
    }
    for (int i = 0; carried != NULL && i < sk_X509_num(carried); i++) {
        if (!append_certificate(out, sk_X509_value(carried, i))) {
            goto done;
        }
    }
    status = TROUSSEAU_CMS_OK;

done:
    sk_X509_free(signers);
    sk_X509_pop_free(carried, X509_free);
    BIO_free(content);
    CMS_ContentInfo_free(cms);
    ERR_clear_error();
    if (status != TROUSSEAU_CMS_OK) {
        trousseau_cms_signed_free(out);
    }
    return status;
}

static X509 *read_certificate(const uint8_t *bytes, size_t length) {
    const unsigned char *cursor = bytes;
    X509 *certificate = d2i_X509(NULL, &cursor, (long)length);
    if (certificate != NULL && cursor != bytes + length) {
        X509_free(certificate);
        return NULL;
    }
    return certificate;
}

int trousseau_cms_is_recipient(const uint8_t *bytes, size_t length, const uint8_t *certificate, size_t certificate_length) {
    trousseau_openssl_setup();
    CMS_ContentInfo *cms = read_cms(bytes, length, NID_pkcs7_enveloped);
    X509 *candidate = read_certificate(certificate, certificate_length);
    int found = 0;
    STACK_OF(CMS_RecipientInfo) *infos = cms != NULL ? CMS_get0_RecipientInfos(cms) : NULL;
    for (int i = 0; candidate != NULL && infos != NULL && !found && i < sk_CMS_RecipientInfo_num(infos); i++) {
        CMS_RecipientInfo *info = sk_CMS_RecipientInfo_value(infos, i);
        switch (CMS_RecipientInfo_type(info)) {
        case CMS_RECIPINFO_TRANS:
            found = CMS_RecipientInfo_ktri_cert_cmp(info, candidate) == 0;
            break;
        case CMS_RECIPINFO_AGREE: {
            STACK_OF(CMS_RecipientEncryptedKey) *keys = CMS_RecipientInfo_kari_get0_reks(info);
            for (int k = 0; keys != NULL && !found && k < sk_CMS_RecipientEncryptedKey_num(keys); k++) {
                found = CMS_RecipientEncryptedKey_cert_cmp(sk_CMS_RecipientEncryptedKey_value(keys, k), candidate) == 0;
            }
            break;
        }
        default:
            break;
        }
    }
    X509_free(candidate);
    CMS_ContentInfo_free(cms);
    ERR_clear_error();
    return found;
}

int trousseau_cms_decrypt(const uint8_t *bytes, size_t length, const uint8_t *key, size_t key_length, const uint8_t *certificate,
                          size_t certificate_length, uint8_t **out, size_t *out_length) {
    trousseau_openssl_setup();
    *out = NULL;
    *out_length = 0;
    ERR_clear_error();
    CMS_ContentInfo *cms = read_cms(bytes, length, NID_pkcs7_enveloped);
    if (cms == NULL) {
        ERR_clear_error();
        return TROUSSEAU_CMS_MALFORMED;
    }
    int status = TROUSSEAU_CMS_INTERNAL;
    X509 *recipient = read_certificate(certificate, certificate_length);
    const unsigned char *cursor = key;
    EVP_PKEY *pkey = d2i_AutoPrivateKey(NULL, &cursor, (long)key_length);
    BIO *content = BIO_new(BIO_s_secmem());
    if (recipient == NULL || pkey == NULL || content == NULL) {
        goto done;
    }
    if (CMS_decrypt(cms, pkey, recipient, NULL, content, CMS_BINARY) != 1) {
        status = TROUSSEAU_CMS_REFUSED;
        goto done;
    }
    BUF_MEM *buffer = NULL;
    BIO_get_mem_ptr(content, &buffer);
    *out = OPENSSL_malloc(buffer->length > 0 ? buffer->length : 1);
    if (*out == NULL) {
        goto done;
    }
    memcpy(*out, buffer->data, buffer->length);
    *out_length = buffer->length;
    status = TROUSSEAU_CMS_OK;

done:
    BIO_free(content);
    EVP_PKEY_free(pkey);
    X509_free(recipient);
    CMS_ContentInfo_free(cms);
    ERR_clear_error();
    return status;
}
