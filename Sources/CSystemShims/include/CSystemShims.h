#ifndef TROUSSEAU_CSYSTEMSHIMS_H
#define TROUSSEAU_CSYSTEMSHIMS_H

/// Non-variadic wrappers for Linux calls Swift's Glibc module does not show
/// (they need _GNU_SOURCE, and prctl is variadic).

/// prctl(PR_SET_DUMPABLE, 0): no core dumps, no ptrace attach by same-uid processes,
/// /proc/PID/mem and friends owned by root. Returns 0 or -1 with errno.
int trousseau_set_nondumpable(void);

/// prctl(PR_GET_DUMPABLE): 1 when the process is dumpable, 0 when not, -1 on error.
int trousseau_get_dumpable(void);

#endif
