// SPDX-License-Identifier: BSD-3-Clause
/*
 * check_say.c - how pme_info --check reports one finding: its level, what was found,
 * why it matters and the command that would change it; the report counts warnings and
 * blockers for the verdict. Every check calls it; it calls nothing of theirs.
 */
#include <stdarg.h>
#include <stdio.h>

#include "check.h"

void check_say(struct check_report *r, enum check_level level, const char *why, const char *run,
               const char *fmt, ...)
{
    static const char *tag[] = {"ok", "note", "WARN", "BLOCKS"};
    if (level == CHECK_BLOCK)
        r->blocking++;
    else if (level == CHECK_WARN)
        r->warnings++;
    if (r->quiet)
        return;
    va_list ap;
    va_start(ap, fmt);
    printf("  %-7s", tag[level]);
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    if (why && level != CHECK_OK)
        printf("  %-7s why: %s\n", "", why);
    if (run)
        printf("  %-7s fix: %s\n", "", run);
}
