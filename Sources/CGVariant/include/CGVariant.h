#ifndef TROUSSEAU_CGVARIANT_H
#define TROUSSEAU_CGVARIANT_H

// GLib's GVariant (Debian's libglib2.0-0) reading the libsecret file backend's keyring files
// (version 1, as oo7 also writes them): GVariant's own parser, which checks untrusted data,
// instead of one of ours. GLib is opened with dlopen on the first version 1 file, not linked:
// securityd starts without loading it (a start costs ~0.4 ms more with it). For securityd and
// the fuzz targets.
#include <stddef.h>
#include <stdint.h>

typedef void (*trousseau_keyring1_blob)(const uint8_t *blob, size_t length, void *context);
typedef void (*trousseau_keyring1_attribute)(const char *name, const char *value, void *context);

/// Reads the body of a version 1 keyring file (after its header and version bytes), type
/// `(uayutua(a{say}ay))`: the salt (up to `salt_capacity` bytes, its length in `*salt_length`),
/// the PBKDF2 iteration count, the modification time (seconds), and each item's encrypted
/// blob, passed to `item` in order. Returns 0; -1 when the data is not of that type; -2 when
/// GLib cannot be loaded.
int trousseau_keyring1_read(const uint8_t *data, size_t length, uint8_t *salt, size_t salt_capacity, size_t *salt_length,
                            uint32_t *iterations, uint64_t *modified, trousseau_keyring1_blob item, void *context);

/// Reads a decrypted item, type `(a{ss}sttay)`: each attribute to `attribute`, the label to
/// `attribute` with a NULL name, the dates, and the secret to `secret`. Returns 0, -1 or -2.
int trousseau_keyring1_item(const uint8_t *data, size_t length, trousseau_keyring1_attribute attribute,
                            uint64_t *created, uint64_t *modified, trousseau_keyring1_blob secret, void *context);

#endif
