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
