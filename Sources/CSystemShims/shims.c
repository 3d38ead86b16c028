#define _GNU_SOURCE
#include <sys/prctl.h>
#include "CSystemShims.h"

int trousseau_set_nondumpable(void) {
    return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
}

int trousseau_get_dumpable(void) {
    return prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
}
