// Version 1 keyring files through GLib's GVariant (see CGVariant.h), opened with dlopen.
#include "CGVariant.h"

#include <dlfcn.h>
#include <endian.h>
#include <pthread.h>
#include <string.h>

// GLib's stable ABI, declared here so that nothing links GLib: a GVariantType is its type
// string; the functions are those of <glib/gvariant.h>.
typedef struct GVariant GVariant;
static struct {
    GVariant *(*new_from_data)(const char *type, const void *data, size_t size, int trusted, void (*notify)(void *), void *user_data);
    GVariant *(*ref_sink)(GVariant *value);
    void (*unref)(GVariant *value);
    size_t (*n_children)(GVariant *value);
    GVariant *(*get_child_value)(GVariant *value, size_t index);
    const void *(*get_fixed_array)(GVariant *value, size_t *n_elements, size_t element_size);
    uint32_t (*get_uint32)(GVariant *value);
    uint64_t (*get_uint64)(GVariant *value);
    const char *(*get_string)(GVariant *value, size_t *length);
    int loaded;
} glib;

static pthread_once_t glib_once = PTHREAD_ONCE_INIT;

static void load_glib(void) {
    void *library = dlopen("libglib-2.0.so.0", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) return;
    *(void **)&glib.new_from_data = dlsym(library, "g_variant_new_from_data");
    *(void **)&glib.ref_sink = dlsym(library, "g_variant_ref_sink");
    *(void **)&glib.unref = dlsym(library, "g_variant_unref");
    *(void **)&glib.n_children = dlsym(library, "g_variant_n_children");
    *(void **)&glib.get_child_value = dlsym(library, "g_variant_get_child_value");
    *(void **)&glib.get_fixed_array = dlsym(library, "g_variant_get_fixed_array");
    *(void **)&glib.get_uint32 = dlsym(library, "g_variant_get_uint32");
    *(void **)&glib.get_uint64 = dlsym(library, "g_variant_get_uint64");
    *(void **)&glib.get_string = dlsym(library, "g_variant_get_string");
    glib.loaded = glib.new_from_data && glib.ref_sink && glib.unref && glib.n_children && glib.get_child_value && glib.get_fixed_array &&
                  glib.get_uint32 && glib.get_uint64 && glib.get_string;
}

static int have_glib(void) {
    pthread_once(&glib_once, load_glib);
    return glib.loaded;
}

// Not trusted: GVariant then reads only what is in normal form, and never past the data.
static GVariant *parse(const char *type, const uint8_t *data, size_t length) {
    GVariant *value = glib.new_from_data(type, data, length, 0, NULL, NULL);
    return value ? glib.ref_sink(value) : NULL;
}

static const uint8_t *bytes_of(GVariant *parent, size_t index, size_t *length, GVariant **child) {
    *child = glib.get_child_value(parent, index);
    return glib.get_fixed_array(*child, length, 1);
}

int trousseau_keyring1_read(const uint8_t *data, size_t length, uint8_t *salt, size_t salt_capacity, size_t *salt_length,
                            uint32_t *iterations, uint64_t *modified, trousseau_keyring1_blob item, void *context) {
    if (!have_glib()) return -2;
    GVariant *file = parse("(uayutua(a{say}ay))", data, length);
    if (file == NULL) return -1;
    GVariant *count = glib.get_child_value(file, 2), *mtime = glib.get_child_value(file, 3);
    // libsecret writes the integers little-endian explicitly.
    *iterations = le32toh(glib.get_uint32(count));
    *modified = le64toh(glib.get_uint64(mtime));
    glib.unref(count);
    glib.unref(mtime);
    GVariant *salt_array = NULL;
    size_t n_salt = 0;
    const uint8_t *salt_bytes = bytes_of(file, 1, &n_salt, &salt_array);
    int result = -1;
    if (n_salt <= salt_capacity) {
        memcpy(salt, salt_bytes, n_salt);
        *salt_length = n_salt;
        GVariant *items = glib.get_child_value(file, 5);
        size_t n_items = glib.n_children(items);
        for (size_t i = 0; i < n_items; i++) {
            GVariant *entry = glib.get_child_value(items, i), *blob = NULL;
            size_t n_blob = 0;
            const uint8_t *blob_bytes = bytes_of(entry, 1, &n_blob, &blob);
            item(blob_bytes, n_blob, context);
            glib.unref(blob);
            glib.unref(entry);
        }
        glib.unref(items);
        result = 0;
    }
    glib.unref(salt_array);
    glib.unref(file);
    return result;
}

int trousseau_keyring1_item(const uint8_t *data, size_t length, trousseau_keyring1_attribute attribute,
                            uint64_t *created, uint64_t *modified, trousseau_keyring1_blob secret, void *context) {
    if (!have_glib()) return -2;
    GVariant *item = parse("(a{ss}sttay)", data, length);
    if (item == NULL) return -1;
    GVariant *attributes = glib.get_child_value(item, 0);
    size_t n_attributes = glib.n_children(attributes);
    for (size_t i = 0; i < n_attributes; i++) {
        GVariant *entry = glib.get_child_value(attributes, i);
        GVariant *name = glib.get_child_value(entry, 0), *text = glib.get_child_value(entry, 1);
        attribute(glib.get_string(name, NULL), glib.get_string(text, NULL), context);
        glib.unref(text);
        glib.unref(name);
        glib.unref(entry);
    }
    glib.unref(attributes);
    GVariant *label = glib.get_child_value(item, 1), *ctime = glib.get_child_value(item, 2), *mtime = glib.get_child_value(item, 3);
    attribute(NULL, glib.get_string(label, NULL), context);
    *created = glib.get_uint64(ctime);
    *modified = glib.get_uint64(mtime);
    glib.unref(label);
    glib.unref(ctime);
    glib.unref(mtime);
    GVariant *value = NULL;
    size_t n_secret = 0;
    const uint8_t *secret_bytes = bytes_of(item, 4, &n_secret, &value);
    secret(secret_bytes, n_secret, context);
    glib.unref(value);
    glib.unref(item);
    return 0;
}
