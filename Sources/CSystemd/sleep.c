// logind's PrepareForSleep through libsystemd's sd-bus: the one D-Bus signal securityd
// listens to, so that keychains set to lock on sleep do (`set-keychain-settings -l`).
#include "CSystemd.h"

#include <errno.h>
#include <stdint.h>
#include <systemd/sd-bus.h>

struct watch {
    trousseau_sleep_callback callback;
    void *context;
};

static int on_prepare_for_sleep(sd_bus_message *message, void *userdata, sd_bus_error *error) {
    (void)error;
    struct watch *watch = userdata;
    int going_to_sleep = 0;
    if (sd_bus_message_read(message, "b", &going_to_sleep) < 0) return 0;  // malformed: ignored
    watch->callback(going_to_sleep ? 1 : 0, watch->context);
    return 0;
}

int trousseau_watch_sleep(const char *address, trousseau_sleep_callback callback, void *context) {
    struct watch watch = {callback, context};
    sd_bus *bus = NULL;
    int r = trousseau_bus_open(address, 1, &bus);
    if (r < 0) return r;
    // The sender is the well-known name: the bus delivers only signals its owner sent.
    r = sd_bus_match_signal(bus, NULL, "org.freedesktop.login1", "/org/freedesktop/login1", "org.freedesktop.login1.Manager",
                            "PrepareForSleep", on_prepare_for_sleep, &watch);
    if (r < 0) {
        sd_bus_flush_close_unref(bus);
        return r;
    }
    for (;;) {
        r = sd_bus_process(bus, NULL);
        if (r < 0) break;
        if (r > 0) continue;
        r = sd_bus_wait(bus, UINT64_MAX);
        if (r < 0 && r != -EINTR) break;
    }
    sd_bus_flush_close_unref(bus);
    return r;
}
