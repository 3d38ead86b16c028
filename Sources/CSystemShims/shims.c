#define _GNU_SOURCE
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "CSystemShims.h"

int trousseau_set_nondumpable(void) {
    return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
}

int trousseau_get_dumpable(void) {
    return prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
}

#include <sys/socket.h>
#include <errno.h>
#include <poll.h>

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77  // <asm-generic/socket.h> of Linux 6.5; Debian 12's headers predate it
#endif

int trousseau_peer_pidfd(int fd) {
    int pidfd = -1;
    socklen_t length = sizeof pidfd;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &length) != 0) {
        return -errno;
    }
    return pidfd;
}

int trousseau_pidfd_open(int pid) {
    long fd = syscall(SYS_pidfd_open, (pid_t)pid, 0);
    return fd < 0 ? -errno : (int)fd;
}

int trousseau_pidfd_alive(int pidfd) {
    // A pidfd polls readable once its process has exited.
    struct pollfd p = {.fd = pidfd, .events = POLLIN};
    int r = poll(&p, 1, 0);
    if (r < 0) return -errno;
    return r == 0 ? 1 : 0;
}

int trousseau_peer_credentials(int fd, int *pid, unsigned int *uid, unsigned int *gid) {
    struct ucred credentials;
    socklen_t length = sizeof credentials;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0) {
        return -1;
    }
    *pid = credentials.pid;
    *uid = credentials.uid;
    *gid = credentials.gid;
    return 0;
}

void trousseau_close_from(int lowest) {
#ifdef SYS_close_range
    if (syscall(SYS_close_range, (unsigned int)lowest, ~0U, 0) == 0) {
        return;
    }
#endif
    long maximum = sysconf(_SC_OPEN_MAX);
    for (long fd = lowest; fd < (maximum > 0 ? maximum : 1024); fd++) {
        close((int)fd);
    }
}
