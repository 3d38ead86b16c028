#include "CTPM.h"

#include <stdlib.h>
#include <string.h>
#include <tss2/tss2_esys.h>
#include <tss2/tss2_mu.h>
#include <tss2/tss2_rc.h>
#include <tss2/tss2_sys.h>
#include <tss2/tss2_tctildr.h>

struct trousseau_tpm {
    TSS2_TCTI_CONTEXT *tcti;
    ESYS_CONTEXT *esys;
    ESYS_TR srk;
};

static void wipe(void *p, size_t n) {
    volatile uint8_t *v = p;
    while (n--) *v++ = 0;
}

// The TCG's "L-2" storage key template (ECC P-256, AES-128-CFB, noDA), as systemd uses.
static TPM2B_PUBLIC srk_template(void) {
    TPM2B_PUBLIC t = {0};
    t.publicArea.type = TPM2_ALG_ECC;
    t.publicArea.nameAlg = TPM2_ALG_SHA256;
    t.publicArea.objectAttributes = TPMA_OBJECT_RESTRICTED | TPMA_OBJECT_DECRYPT | TPMA_OBJECT_FIXEDTPM |
                                    TPMA_OBJECT_FIXEDPARENT | TPMA_OBJECT_SENSITIVEDATAORIGIN |
                                    TPMA_OBJECT_USERWITHAUTH | TPMA_OBJECT_NODA;
    t.publicArea.parameters.eccDetail.symmetric.algorithm = TPM2_ALG_AES;
    t.publicArea.parameters.eccDetail.symmetric.keyBits.aes = 128;
    t.publicArea.parameters.eccDetail.symmetric.mode.aes = TPM2_ALG_CFB;
    t.publicArea.parameters.eccDetail.scheme.scheme = TPM2_ALG_NULL;
    t.publicArea.parameters.eccDetail.curveID = TPM2_ECC_NIST_P256;
    t.publicArea.parameters.eccDetail.kdf.scheme = TPM2_ALG_NULL;
    return t;
}

// authValue from bytes, trailing zeros trimmed (TPM 2.0 Part 1, 19.6.2; tpm2-tss#2664).
static uint32_t make_auth(const uint8_t *auth, size_t length, TPM2B_AUTH *out) {
    while (length > 0 && auth[length - 1] == 0) length--;
    if (length > sizeof out->buffer) return TROUSSEAU_TPM_RC_SHIM_SIZE;
    memset(out, 0, sizeof *out);
    out->size = (UINT16)length;
    if (length) memcpy(out->buffer, auth, length);
    return 0;
}

// A salted, unbound HMAC session with parameter encryption both ways.
static uint32_t salted_session(trousseau_tpm *tpm, ESYS_TR *session) {
    TPMT_SYM_DEF symmetric = {.algorithm = TPM2_ALG_AES, .keyBits.aes = 128, .mode.aes = TPM2_ALG_CFB};
    uint32_t rc = Esys_StartAuthSession(tpm->esys, tpm->srk, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE,
                                        NULL, TPM2_SE_HMAC, &symmetric, TPM2_ALG_SHA256, session);
    if (rc) return rc;
    rc = Esys_TRSess_SetAttributes(tpm->esys, *session,
                                   TPMA_SESSION_DECRYPT | TPMA_SESSION_ENCRYPT | TPMA_SESSION_CONTINUESESSION, 0xff);
    if (rc) {
        Esys_FlushContext(tpm->esys, *session);
        *session = ESYS_TR_NONE;
    }
    return rc;
}

// Flushes every transient object and loaded session (see trousseau_tpm_open).
static void reclaim_slots(trousseau_tpm *tpm) {
    TSS2_SYS_CONTEXT *sys = NULL;
    if (Esys_GetSysContext(tpm->esys, &sys) || !sys) return;
    const TPM2_HANDLE ranges[] = {TPM2_TRANSIENT_FIRST, TPM2_LOADED_SESSION_FIRST, TPM2_POLICY_SESSION_FIRST};
    for (size_t r = 0; r < sizeof ranges / sizeof ranges[0]; r++) {
        TPMI_YES_NO more = 0;
        TPMS_CAPABILITY_DATA data = {0};
        if (Tss2_Sys_GetCapability(sys, NULL, TPM2_CAP_HANDLES, ranges[r], 64, &more, &data, NULL)) continue;
        for (UINT32 i = 0; i < data.data.handles.count && i < TPM2_MAX_CAP_HANDLES; i++) {
            TPM2_HANDLE handle = data.data.handles.handle[i];
            if (handle >> TPM2_HR_SHIFT == ranges[r] >> TPM2_HR_SHIFT) Tss2_Sys_FlushContext(sys, handle);
        }
    }
}

uint32_t trousseau_tpm_open(const char *tcti, int reclaim, trousseau_tpm **out) {
    // ESYS writes its own errors to standard error unless told not to; the enclave reports
    // them itself, as OSStatus with this library's text.
    setenv("TSS2_LOG", "all+none", 1);
    *out = NULL;
    trousseau_tpm *tpm = calloc(1, sizeof *tpm);
    if (!tpm) return TROUSSEAU_TPM_RC_SHIM_MEMORY;
    tpm->srk = ESYS_TR_NONE;
    uint32_t rc = Tss2_TctiLdr_Initialize(tcti, &tpm->tcti);
    if (rc) {
        free(tpm);
        return rc;
    }
    rc = Esys_Initialize(&tpm->esys, tpm->tcti, NULL);
    if (rc) {
        Tss2_TctiLdr_Finalize(&tpm->tcti);
        free(tpm);
        return rc;
    }
    if (reclaim) reclaim_slots(tpm);
    TPM2B_SENSITIVE_CREATE sensitive = {0};
    TPM2B_PUBLIC template = srk_template();
    TPM2B_DATA outside = {0};
    TPML_PCR_SELECTION pcrs = {0};
    rc = Esys_CreatePrimary(tpm->esys, ESYS_TR_RH_OWNER, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, &sensitive,
                            &template, &outside, &pcrs, &tpm->srk, NULL, NULL, NULL, NULL);
    if (rc) {
        trousseau_tpm_close(tpm);
        return rc;
    }
    *out = tpm;
    return 0;
}

void trousseau_tpm_close(trousseau_tpm *tpm) {
    if (!tpm) return;
    if (tpm->srk != ESYS_TR_NONE) Esys_FlushContext(tpm->esys, tpm->srk);
    Esys_Finalize(&tpm->esys);
    Tss2_TctiLdr_Finalize(&tpm->tcti);
    free(tpm);
}

uint32_t trousseau_tpm_srk_name(trousseau_tpm *tpm, uint8_t *name, size_t capacity, size_t *length) {
    TPM2B_NAME *n = NULL;
    uint32_t rc = Esys_TR_GetName(tpm->esys, tpm->srk, &n);
    if (rc) return rc;
    if (n->size > capacity) rc = TROUSSEAU_TPM_RC_SHIM_SIZE;
    else {
        memcpy(name, n->name, n->size);
        *length = n->size;
    }
    Esys_Free(n);
    return rc;
}

// Creates an object from `template` under the storage root key and marshals it to `blob`.
static uint32_t create(trousseau_tpm *tpm, TPM2B_PUBLIC *template, const uint8_t *auth, size_t auth_length,
                       const uint8_t *data, size_t data_length, uint8_t *blob, size_t capacity, size_t *blob_length,
                       TPM2B_PUBLIC **public_out) {
    TPM2B_SENSITIVE_CREATE sensitive = {0};
    uint32_t rc = make_auth(auth, auth_length, &sensitive.sensitive.userAuth);
    if (rc) return rc;
    if (data_length > sizeof sensitive.sensitive.data.buffer) {
        wipe(&sensitive, sizeof sensitive);
        return TROUSSEAU_TPM_RC_SHIM_SIZE;
    }
    sensitive.sensitive.data.size = (UINT16)data_length;
    if (data_length) memcpy(sensitive.sensitive.data.buffer, data, data_length);
    TPM2B_DATA outside = {0};
    TPML_PCR_SELECTION pcrs = {0};
    ESYS_TR session = ESYS_TR_NONE;
    TPM2B_PRIVATE *private = NULL;
    TPM2B_PUBLIC *public = NULL;
    rc = salted_session(tpm, &session);
    if (!rc)
        rc = Esys_Create(tpm->esys, tpm->srk, session, ESYS_TR_NONE, ESYS_TR_NONE, &sensitive, template, &outside,
                         &pcrs, &private, &public, NULL, NULL, NULL);
    wipe(&sensitive, sizeof sensitive);
    if (session != ESYS_TR_NONE) Esys_FlushContext(tpm->esys, session);
    if (!rc) {
        size_t offset = 0;
        rc = Tss2_MU_TPM2B_PUBLIC_Marshal(public, blob, capacity, &offset);
        if (!rc) rc = Tss2_MU_TPM2B_PRIVATE_Marshal(private, blob, capacity, &offset);
        *blob_length = offset;
    }
    Esys_Free(private);
    if (public_out && !rc) *public_out = public;
    else Esys_Free(public);
    return rc;
}

uint32_t trousseau_tpm_create_hmac_key(trousseau_tpm *tpm, const uint8_t *auth, size_t auth_length, int da_protected,
                                       const uint8_t *key, size_t key_length, uint8_t *blob, size_t capacity,
                                       size_t *blob_length) {
    TPM2B_PUBLIC template = {0};
    template.publicArea.type = TPM2_ALG_KEYEDHASH;
    template.publicArea.nameAlg = TPM2_ALG_SHA256;
    template.publicArea.objectAttributes = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT | TPMA_OBJECT_USERWITHAUTH |
                                           TPMA_OBJECT_SIGN_ENCRYPT | (key ? 0 : TPMA_OBJECT_SENSITIVEDATAORIGIN) |
                                           (da_protected ? 0 : TPMA_OBJECT_NODA);
    template.publicArea.parameters.keyedHashDetail.scheme.scheme = TPM2_ALG_HMAC;
    template.publicArea.parameters.keyedHashDetail.scheme.details.hmac.hashAlg = TPM2_ALG_SHA256;
    return create(tpm, &template, auth, auth_length, key, key ? key_length : 0, blob, capacity, blob_length, NULL);
}

uint32_t trousseau_tpm_create_p256_key(trousseau_tpm *tpm, const uint8_t *auth, size_t auth_length, uint8_t *blob,
                                       size_t capacity, size_t *blob_length, uint8_t x963[65]) {
    TPM2B_PUBLIC template = {0};
    template.publicArea.type = TPM2_ALG_ECC;
    template.publicArea.nameAlg = TPM2_ALG_SHA256;
    template.publicArea.objectAttributes = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT |
                                           TPMA_OBJECT_SENSITIVEDATAORIGIN | TPMA_OBJECT_USERWITHAUTH |
                                           TPMA_OBJECT_SIGN_ENCRYPT | TPMA_OBJECT_DECRYPT | TPMA_OBJECT_NODA;
    template.publicArea.parameters.eccDetail.symmetric.algorithm = TPM2_ALG_NULL;
    template.publicArea.parameters.eccDetail.scheme.scheme = TPM2_ALG_NULL;
    template.publicArea.parameters.eccDetail.curveID = TPM2_ECC_NIST_P256;
    template.publicArea.parameters.eccDetail.kdf.scheme = TPM2_ALG_NULL;
    TPM2B_PUBLIC *public = NULL;
    uint32_t rc = create(tpm, &template, auth, auth_length, NULL, 0, blob, capacity, blob_length, &public);
    if (rc) return rc;
    TPMS_ECC_POINT *point = &public->publicArea.unique.ecc;
    if (point->x.size != 32 || point->y.size != 32) rc = TROUSSEAU_TPM_RC_SHIM_FORMAT;
    else {
        x963[0] = 4;
        memcpy(x963 + 1, point->x.buffer, 32);
        memcpy(x963 + 33, point->y.buffer, 32);
    }
    Esys_Free(public);
    return rc;
}

// Loads the object in `blob` under the storage root key, with `auth`, through `session`.
static uint32_t load(trousseau_tpm *tpm, const uint8_t *blob, size_t blob_length, const uint8_t *auth,
                     size_t auth_length, ESYS_TR session, ESYS_TR *object) {
    TPM2B_PUBLIC public = {0};
    TPM2B_PRIVATE private = {0};
    size_t offset = 0;
    if (Tss2_MU_TPM2B_PUBLIC_Unmarshal(blob, blob_length, &offset, &public) ||
        Tss2_MU_TPM2B_PRIVATE_Unmarshal(blob, blob_length, &offset, &private) || offset != blob_length)
        return TROUSSEAU_TPM_RC_SHIM_FORMAT;
    uint32_t rc = Esys_Load(tpm->esys, tpm->srk, session, ESYS_TR_NONE, ESYS_TR_NONE, &private, &public, object);
    if (rc) return rc;
    TPM2B_AUTH value;
    rc = make_auth(auth, auth_length, &value);
    if (!rc) rc = Esys_TR_SetAuth(tpm->esys, *object, &value);
    wipe(&value, sizeof value);
    if (rc) {
        Esys_FlushContext(tpm->esys, *object);
        *object = ESYS_TR_NONE;
    }
    return rc;
}

// Runs `use` on the object in `blob` with a fresh salted session; flushes both after.
#define WITH_OBJECT(tpm, blob, blob_length, auth, auth_length, body)                           \
    do {                                                                                       \
        ESYS_TR session = ESYS_TR_NONE, object = ESYS_TR_NONE;                                 \
        uint32_t rc = salted_session(tpm, &session);                                          \
        if (!rc) rc = load(tpm, blob, blob_length, auth, auth_length, session, &object);      \
        if (!rc) { body }                                                                      \
        if (object != ESYS_TR_NONE) Esys_FlushContext((tpm)->esys, object);                   \
        if (session != ESYS_TR_NONE) Esys_FlushContext((tpm)->esys, session);                 \
        return rc;                                                                             \
    } while (0)

static uint32_t hmac_buffer(trousseau_tpm *tpm, const uint8_t *blob, size_t blob_length, const uint8_t *auth,
                            size_t auth_length, TPM2B_MAX_BUFFER *buffer, uint8_t mac[32]);

uint32_t trousseau_tpm_hmac(trousseau_tpm *tpm, const uint8_t *blob, size_t blob_length, const uint8_t *auth,
                            size_t auth_length, const uint8_t *message, size_t message_length, uint8_t mac[32]) {
    TPM2B_MAX_BUFFER buffer = {0};
    if (message_length > sizeof buffer.buffer) return TROUSSEAU_TPM_RC_SHIM_SIZE;
    buffer.size = (UINT16)message_length;
    memcpy(buffer.buffer, message, message_length);
    // The message can be secret (the passcode's entanglement): wiped on every path.
    uint32_t result = hmac_buffer(tpm, blob, blob_length, auth, auth_length, &buffer, mac);
    wipe(&buffer, sizeof buffer);
    return result;
}

static uint32_t hmac_buffer(trousseau_tpm *tpm, const uint8_t *blob, size_t blob_length, const uint8_t *auth,
                            size_t auth_length, TPM2B_MAX_BUFFER *buffer, uint8_t mac[32]) {
    WITH_OBJECT(tpm, blob, blob_length, auth, auth_length, {
        TPM2B_DIGEST *digest = NULL;
        rc = Esys_HMAC(tpm->esys, object, session, ESYS_TR_NONE, ESYS_TR_NONE, buffer, TPM2_ALG_SHA256, &digest);
        if (!rc) {
            if (digest->size == 32) memcpy(mac, digest->buffer, 32);
            else rc = TROUSSEAU_TPM_RC_SHIM_FORMAT;
            wipe(digest->buffer, digest->size);
        }
        Esys_Free(digest);
    });
}

uint32_t trousseau_tpm_sign(trousseau_tpm *tpm, const uint8_t *blob, size_t blob_length, const uint8_t *auth,
                            size_t auth_length, const uint8_t digest[32], uint8_t r[32], uint8_t s[32]) {
    TPM2B_DIGEST hash = {.size = 32};
    memcpy(hash.buffer, digest, 32);
    TPMT_SIG_SCHEME scheme = {.scheme = TPM2_ALG_ECDSA, .details.ecdsa.hashAlg = TPM2_ALG_SHA256};
    TPMT_TK_HASHCHECK ticket = {.tag = TPM2_ST_HASHCHECK, .hierarchy = TPM2_RH_NULL};
    WITH_OBJECT(tpm, blob, blob_length, auth, auth_length, {
        TPMT_SIGNATURE *signature = NULL;
        rc = Esys_Sign(tpm->esys, object, session, ESYS_TR_NONE, ESYS_TR_NONE, &hash, &scheme, &ticket, &signature);
        if (!rc) {
            TPMS_SIGNATURE_ECC *ecdsa = &signature->signature.ecdsa;
            if (ecdsa->signatureR.size > 32 || ecdsa->signatureS.size > 32) rc = TROUSSEAU_TPM_RC_SHIM_FORMAT;
            else {
                // Big-endian integers, left-padded to 32 bytes.
                memset(r, 0, 32);
                memset(s, 0, 32);
                memcpy(r + 32 - ecdsa->signatureR.size, ecdsa->signatureR.buffer, ecdsa->signatureR.size);
                memcpy(s + 32 - ecdsa->signatureS.size, ecdsa->signatureS.buffer, ecdsa->signatureS.size);
            }
        }
        Esys_Free(signature);
    });
}

uint32_t trousseau_tpm_ecdh(trousseau_tpm *tpm, const uint8_t *blob, size_t blob_length, const uint8_t *auth,
                            size_t auth_length, const uint8_t peer[65], uint8_t shared_x[32]) {
    if (peer[0] != 4) return TROUSSEAU_TPM_RC_SHIM_FORMAT;
    TPM2B_ECC_POINT point = {0};
    point.point.x.size = 32;
    point.point.y.size = 32;
    memcpy(point.point.x.buffer, peer + 1, 32);
    memcpy(point.point.y.buffer, peer + 33, 32);
    WITH_OBJECT(tpm, blob, blob_length, auth, auth_length, {
        TPM2B_ECC_POINT *product = NULL;
        rc = Esys_ECDH_ZGen(tpm->esys, object, session, ESYS_TR_NONE, ESYS_TR_NONE, &point, &product);
        if (!rc) {
            TPM2B_ECC_PARAMETER *x = &product->point.x;
            if (x->size > 32) rc = TROUSSEAU_TPM_RC_SHIM_FORMAT;
            else {
                memset(shared_x, 0, 32);
                memcpy(shared_x + 32 - x->size, x->buffer, x->size);
            }
            wipe(product, sizeof *product);
        }
        Esys_Free(product);
    });
}

static uint32_t property(trousseau_tpm *tpm, uint32_t which, uint32_t *value) {
    TPMS_CAPABILITY_DATA *data = NULL;
    TPMI_YES_NO more = 0;
    uint32_t rc = Esys_GetCapability(tpm->esys, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, TPM2_CAP_TPM_PROPERTIES,
                                     which, 1, &more, &data);
    if (rc) return rc;
    if (data->data.tpmProperties.count < 1 || data->data.tpmProperties.tpmProperty[0].property != which)
        rc = TROUSSEAU_TPM_RC_SHIM_FORMAT;
    else *value = data->data.tpmProperties.tpmProperty[0].value;
    Esys_Free(data);
    return rc;
}

uint32_t trousseau_tpm_lockout(trousseau_tpm *tpm, uint32_t *counter, uint32_t *max_tries, uint32_t *interval,
                               uint32_t *recovery, int *in_lockout) {
    uint32_t permanent = 0;
    uint32_t rc = property(tpm, TPM2_PT_LOCKOUT_COUNTER, counter);
    if (!rc) rc = property(tpm, TPM2_PT_MAX_AUTH_FAIL, max_tries);
    if (!rc) rc = property(tpm, TPM2_PT_LOCKOUT_INTERVAL, interval);
    if (!rc) rc = property(tpm, TPM2_PT_LOCKOUT_RECOVERY, recovery);
    if (!rc) rc = property(tpm, TPM2_PT_PERMANENT, &permanent);
    if (!rc) *in_lockout = (permanent & TPMA_PERMANENT_INLOCKOUT) != 0;
    return rc;
}

const char *trousseau_tpm_describe(uint32_t rc) {
    switch (rc) {
    case TROUSSEAU_TPM_RC_SHIM_FORMAT: return "the TPM blob or answer is malformed";
    case TROUSSEAU_TPM_RC_SHIM_SIZE: return "an argument is too large for the TPM";
    case TROUSSEAU_TPM_RC_SHIM_MEMORY: return "out of memory";
    default: return Tss2_RC_Decode(rc);
    }
}
