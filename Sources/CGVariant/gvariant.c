// Version 1 keyring files through GLib's GVariant (see CGVariant.h).
#include "CGVariant.h"

#include <glib.h>
#include <string.h>

int trousseau_keyring1_read(const uint8_t *data, size_t length, uint8_t *salt, size_t salt_capacity, size_t *salt_length,
                            uint32_t *iterations, uint64_t *modified, trousseau_keyring1_blob item, void *context) {
    // Not trusted: GVariant then reads only what is in normal form, and never past the data.
    GVariant *file = g_variant_new_from_data(G_VARIANT_TYPE("(uayutua(a{say}ay))"), data, length, FALSE, NULL, NULL);
    if (file == NULL) return -1;
    g_variant_ref_sink(file);
    guint32 salt_size = 0, count = 0;
    guint64 mtime = 0, usage = 0;
    GVariant *salt_array = NULL, *items = NULL;
    g_variant_get(file, "(u@ayutu@a(a{say}ay))", &salt_size, &salt_array, iterations, &mtime, &usage, &items);
    // libsecret writes the integers little-endian explicitly.
    *iterations = GUINT32_FROM_LE(*iterations);
    *modified = GUINT64_FROM_LE(mtime);
    gsize n_salt = 0;
    const guint8 *salt_bytes = g_variant_get_fixed_array(salt_array, &n_salt, 1);
    int result = -1;
    if (n_salt <= salt_capacity) {
        memcpy(salt, salt_bytes, n_salt);
        *salt_length = n_salt;
        count = (guint32)g_variant_n_children(items);
        for (guint32 i = 0; i < count; i++) {
            GVariant *entry = g_variant_get_child_value(items, i);
            GVariant *blob = g_variant_get_child_value(entry, 1);
            gsize n_blob = 0;
            const guint8 *bytes = g_variant_get_fixed_array(blob, &n_blob, 1);
            item(bytes, n_blob, context);
            g_variant_unref(blob);
            g_variant_unref(entry);
        }
        result = 0;
    }
    g_variant_unref(salt_array);
    g_variant_unref(items);
    g_variant_unref(file);
    return result;
}

int trousseau_keyring1_item(const uint8_t *data, size_t length, trousseau_keyring1_attribute attribute,
                            uint64_t *created, uint64_t *modified, trousseau_keyring1_blob secret, void *context) {
    GVariant *item = g_variant_new_from_data(G_VARIANT_TYPE("(a{ss}sttay)"), data, length, FALSE, NULL, NULL);
    if (item == NULL) return -1;
    g_variant_ref_sink(item);
    GVariant *attributes = NULL, *value = NULL;
    const gchar *label = NULL;
    g_variant_get(item, "(@a{ss}&stt@ay)", &attributes, &label, created, modified, &value);
    GVariantIter iter;
    const gchar *name, *text;
    g_variant_iter_init(&iter, attributes);
    while (g_variant_iter_next(&iter, "{&s&s}", &name, &text)) attribute(name, text, context);
    attribute(NULL, label, context);
    gsize n_secret = 0;
    const guint8 *bytes = g_variant_get_fixed_array(value, &n_secret, 1);
    secret(bytes, n_secret, context);
    g_variant_unref(attributes);
    g_variant_unref(value);
    g_variant_unref(item);
    return 0;
}
