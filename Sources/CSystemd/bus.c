// sd-bus connections (the Secret Service's and logind's) and the helpers around sd-bus that Swift cannot express.
#include "CSystemd.h"

#include <errno.h>
#include <poll.h>
#include <time.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>

int trousseau_bus_open(const char *address, int system, sd_bus **bus) {
    if (address == NULL) return system ? sd_bus_open_system(bus) : sd_bus_open_user(bus);
    int r = sd_bus_new(bus);
    if (r < 0) return r;
    if ((r = sd_bus_set_address(*bus, address)) < 0 || (r = sd_bus_set_bus_client(*bus, 1)) < 0 || (r = sd_bus_start(*bus)) < 0) {
        *bus = sd_bus_unref(*bus);
        return r;
    }
    return 0;
}

int trousseau_bus_reply_error(sd_bus_message *call, const char *name, const char *message) {
    sd_bus_error error = SD_BUS_ERROR_MAKE_CONST(name, message);
    return sd_bus_reply_method_error(call, &error);
}

int trousseau_bus_run(sd_bus *bus, volatile int *stop, int wakefd, trousseau_bus_woken woken, void *context) {
    while (!*stop) {
        int r = sd_bus_process(bus, NULL);
        if (r < 0) return r;
        if (r > 0) continue;
        int fd = sd_bus_get_fd(bus);
        int events = sd_bus_get_events(bus);
        if (fd < 0) return fd;
        if (events < 0) return events;
        // At most a second, so that a stop request is noticed.
        int timeout = 1000;
        uint64_t until = 0;
        if (sd_bus_get_timeout(bus, &until) >= 0 && until != UINT64_MAX) {
            struct timespec now;
            clock_gettime(CLOCK_MONOTONIC, &now);
            uint64_t current = (uint64_t)now.tv_sec * 1000000u + (uint64_t)now.tv_nsec / 1000u;
            uint64_t wait = until > current ? (until - current + 999) / 1000 : 0;
            if (wait < (uint64_t)timeout) timeout = (int)wait;
        }
        struct pollfd fds[2] = {{.fd = fd, .events = (short)events}, {.fd = wakefd, .events = POLLIN}};
        r = poll(fds, wakefd >= 0 ? 2 : 1, timeout);
        if (r < 0 && errno != EINTR) return -errno;
        if (r > 0 && wakefd >= 0 && (fds[1].revents & POLLIN)) {
            uint64_t count;
            if (read(wakefd, &count, sizeof count) < 0 && errno != EAGAIN) return -errno;
            woken(context);
        }
    }
    return 0;
}

int trousseau_bus_wake_fd(void) {
    int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    return fd < 0 ? -errno : fd;
}

void trousseau_bus_wake(int wakefd) {
    uint64_t one = 1;
    ssize_t written = write(wakefd, &one, sizeof one);
    (void)written;  // a full counter already wakes the loop
}

const char *trousseau_bus_error_name(sd_bus_message *message) {
    const sd_bus_error *error = sd_bus_message_get_error(message);
    return error ? error->name : NULL;
}

int trousseau_bus_peer(sd_bus *bus, const char *name, int *pid, unsigned *uid) {
    sd_bus_creds *creds = NULL;
    // The bus reports the peer's effective uid (SO_PEERCRED's) as UnixUserID.
    int r = sd_bus_get_name_creds(bus, name, SD_BUS_CREDS_PID | SD_BUS_CREDS_EUID, &creds);
    if (r < 0) return r;
    pid_t p = 0;
    uid_t u = 0;
    if ((r = sd_bus_creds_get_pid(creds, &p)) >= 0) r = sd_bus_creds_get_euid(creds, &u);
    sd_bus_creds_unref(creds);
    if (r < 0) return r;
    *pid = (int)p;
    *uid = (unsigned)u;
    return 0;
}

