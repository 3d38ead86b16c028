#ifndef TROUSSEAU_CSYSTEMD_H
#define TROUSSEAU_CSYSTEMD_H

// libsystemd's sd-bus (Debian's libsystemd0), the one shim for it: the Secret Service's
// connection (sd-bus itself, and the few helpers Swift cannot call directly: sd-bus's
// variadic readers and its error macros) and logind's PrepareForSleep. securityd only.
#include <systemd/sd-bus.h>

/// Connects to the session bus (the system bus with `system` non-zero), or to `address` when
/// not NULL, as a bus client. Returns 0 or a negative errno.
int trousseau_bus_open(const char *address, int system, sd_bus **bus);

/// Replies to `call` with the D-Bus error `name` and a human-readable `message`.
int trousseau_bus_reply_error(sd_bus_message *call, const char *name, const char *message);

/// Called on the bus thread when `wakefd` was written (work finished elsewhere).
typedef void (*trousseau_bus_woken)(void *context);

/// Processes messages until the connection ends (the bus went away) or `*stop` becomes
/// non-zero; whenever the eventfd `wakefd` is signalled, calls `woken` between messages.
/// Returns the negative errno that ended it, or 0 when stopped.
int trousseau_bus_run(sd_bus *bus, volatile int *stop, int wakefd, trousseau_bus_woken woken, void *context);

/// A new eventfd for trousseau_bus_run (non-blocking, close-on-exec), or a negative errno.
int trousseau_bus_wake_fd(void);

/// Signals the eventfd `wakefd` (from any thread).
void trousseau_bus_wake(int wakefd);

/// The error name and message of a method-error message, or NULL.
const char *trousseau_bus_error_name(sd_bus_message *message);

/// The process id and user id of the bus connection `name`, as the bus recorded them when
/// it connected (GetConnectionCredentials). Returns 0 or a negative errno.
int trousseau_bus_peer(sd_bus *bus, const char *name, int *pid, unsigned *uid);

// MARK: logind

/// Called with 1 when logind announces the machine is going to sleep, 0 when it woke.
typedef void (*trousseau_sleep_callback)(int going_to_sleep, void *context);

/// Connects to the system bus (or to `address` when not NULL), subscribes to logind's
/// PrepareForSleep signal — only from the owner of org.freedesktop.login1, which the bus
/// checks — and calls `callback` for each one, until the connection ends. Blocks: run it on
/// a thread of its own. Returns a negative errno when the bus cannot be reached or the
/// connection ends (no system bus in a container is the common case).
int trousseau_watch_sleep(const char *address, trousseau_sleep_callback callback, void *context);

#endif
