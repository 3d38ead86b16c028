#ifndef TROUSSEAU_CSYSTEMSHIMS_H
#define TROUSSEAU_CSYSTEMSHIMS_H

/// Non-variadic wrappers for Linux calls Swift's Glibc module does not show
/// (they need _GNU_SOURCE, and prctl is variadic).

/// prctl(PR_SET_DUMPABLE, 0): no core dumps, no ptrace attach by same-uid processes,
/// /proc/PID/mem and friends owned by root. Returns 0 or -1 with errno.
int trousseau_set_nondumpable(void);

/// prctl(PR_GET_DUMPABLE): 1 when the process is dumpable, 0 when not, -1 on error.
int trousseau_get_dumpable(void);



/// getsockopt(SO_PEERCRED) on a connected Unix socket: the peer's pid, uid and gid at
/// connect time. Returns 0 or -1 with errno.
int trousseau_peer_credentials(int fd, int *pid, unsigned int *uid, unsigned int *gid);

/// getsockopt(SO_PEERPIDFD) on a connected Unix socket (Linux 6.5+): a pidfd of the very
/// process that connected, which no later process can reuse. Returns the pidfd or a
/// negative errno (-ENOPROTOOPT on older kernels).
int trousseau_peer_pidfd(int fd);

/// A pidfd for `pid` (pidfd_open, Linux 5.3+), or a negative errno.
int trousseau_pidfd_open(int pid);

/// Whether the process behind `pidfd` is still running: 1, 0, or a negative errno.
int trousseau_pidfd_alive(int pidfd);

/// Closes every descriptor from `lowest` up: a daemon must not keep its starter's pipes
/// open (a parent waiting for end of file on them would wait forever).
void trousseau_close_from(int lowest);

#endif
