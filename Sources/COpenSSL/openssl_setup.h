// Shared by the shim's files: OpenSSL set up once per process (pkcs12.c).
#ifndef TROUSSEAU_OPENSSL_SETUP_H
#define TROUSSEAU_OPENSSL_SETUP_H

void trousseau_openssl_setup(void);

#endif
