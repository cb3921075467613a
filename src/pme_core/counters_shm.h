/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * counters_shm.h - an endpoint's counter file, which pme_info reads: where it lives and
 * who may read it. Its layout is in counters_layout.h.
 *
 * Each open endpoint owns <dir>/<netns>.<interface>.<endpoint id>, where <dir> is
 * pme-<uid> under $PME_RUNTIME_DIR (default /dev/shm): a directory of the user's own,
 * mode 0750, which PME does not use when it is a symbolic link, belongs to someone else
 * or is writable by others (the endpoint then runs without a counter file, and warns).
 * Files are created afresh with O_EXCL|O_NOFOLLOW, mode 0640 (the user, the user's
 * group and root read them), so nobody can make a process write through a planted link
 * or keep it from starting by planting files. The file is locked with flock() for as
 * long as the process lives; a file whose lock nobody holds is a leftover of a dead
 * process. The same directory holds the endpoint id claims (claim.h), named with
 * PME_CLAIM_FILE_PREFIX. The file holds the endpoint's counters and then one record per
 * peer; pages of peers that never existed are never touched, so the file stays small.
 */
#ifndef PME_COUNTERS_SHM_H
#define PME_COUNTERS_SHM_H

#include <stddef.h>

#include "counters_layout.h"

#define PME_SHM_BASE_DEFAULT "/dev/shm"
#define PME_SHM_DIR_PREFIX "pme-"
/* The endpoint id claims in the same directory (claim.h): claim.<netns>.<interface>.<id> */
#define PME_CLAIM_FILE_PREFIX "claim."

/* The directory of this user's counter files: pme-<euid> under $PME_RUNTIME_DIR or
 * /dev/shm. */
void pme_counters_dir(char *out, size_t len);
/* The directory that holds every user's counter directories. */
const char *pme_counters_base(void);

#endif
