#ifndef TROUSSEAU_CLOGINMANAGER_H
#define TROUSSEAU_CLOGINMANAGER_H

/// Called with 1 when logind announces the machine is going to sleep, 0 when it woke.
typedef void (*trousseau_sleep_callback)(int going_to_sleep, void *context);

/// Connects to the system bus (or to `address` when not NULL), subscribes to logind's
/// PrepareForSleep signal — only from the owner of org.freedesktop.login1, which the bus
/// checks — and calls `callback` for each one, until the connection ends. Blocks: run it on
/// a thread of its own. Returns a negative errno when the bus cannot be reached or the
/// connection ends (no system bus in a container is the common case).
int trousseau_watch_sleep(const char *address, trousseau_sleep_callback callback, void *context);

#endif
