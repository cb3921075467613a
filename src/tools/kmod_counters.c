// SPDX-License-Identifier: BSD-3-Clause
/*
 * kmod_counters.c - pme.ko's counters for pme_info. The totals are one file each in
 * /sys/class/misc/pme/counters/; each endpoint is one line of /proc/driver/pme, whose
 * first line names the columns (so columns the module adds later are shown too).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kmod_counters.h"
#include "pme_ioctl.h"

#define SYSFS_DIR "/sys/class/misc/pme/counters"
#define PROC_FILE "/proc/driver/pme"
#define MAX_COLS 96

static const char *const names[] = PME_KCNT_NAMES;

/* Print name=value pairs three to a line, like pme_info's own counters. */
static void show(const char *indent, const char *name, unsigned long long v, int *col)
{
    if (!v)
        return;
    printf("%s%-18s %12llu", *col % 3 ? "  " : indent, name, v);
    if (++*col % 3 == 0)
        printf("\n");
}

static void end_block(int col, const char *indent)
{
    if (col % 3)
        printf("\n");
    if (!col)
        printf("%s(all counters zero)\n", indent);
}

void kmod_show_global(void)
{
    char path[256];
    unsigned long long v;
    int col = 0;
    FILE *f = fopen(SYSFS_DIR "/rx_frames", "r");
    if (!f) {
        printf("Kernel device: pme.ko not loaded (PME_DEVICE=auto uses the ring device)\n");
        return;
    }
    fclose(f);
    printf("Kernel device: pme.ko loaded, totals:\n");
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        snprintf(path, sizeof(path), SYSFS_DIR "/%s", names[i]);
        f = fopen(path, "r");
        if (!f)
            continue;
        if (fscanf(f, "%llu", &v) == 1)
            show("  ", names[i], v, &col);
        fclose(f);
    }
    end_block(col, "  ");
}

/* Split a line on blanks in place; returns the number of words. */
static int split(char *line, char **w, int max)
{
    int n = 0;
    for (char *save = NULL, *t = strtok_r(line, " \n", &save); t && n < max;
         t = strtok_r(NULL, " \n", &save))
        w[n++] = t;
    return n;
}

static int column(char **head, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(head[i], name))
            return i;
    return -1;
}

void kmod_show_endpoint(int pid, unsigned ep_id, const char *ifname, const char *indent)
{
    FILE *f = fopen(PROC_FILE, "r");
    if (!f)
        return;
    char head_line[4096], line[4096];
    char *head[MAX_COLS], *w[MAX_COLS];
    int nh = fgets(head_line, sizeof(head_line), f) ? split(head_line, head, MAX_COLS) : 0;
    int c_if = column(head, nh, "iface"), c_ep = column(head, nh, "ep");
    int c_pid = column(head, nh, "pid"), c_state = column(head, nh, "state");
    if (c_if < 0 || c_ep < 0 || c_pid < 0 || c_state < 0) {
        fclose(f);
        return;
    }
    while (fgets(line, sizeof(line), f)) {
        int n = split(line, w, MAX_COLS);
        if (n != nh || strcmp(w[c_if], ifname) || strtoul(w[c_ep], NULL, 10) != ep_id ||
            atoi(w[c_pid]) != pid)
            continue;
        printf("%skernel (pme.ko), interface %s:\n", indent, w[c_state]);
        char deeper[32];
        snprintf(deeper, sizeof(deeper), "%s  ", indent);
        int col = 0;
        for (int i = c_state + 1; i < n; i++)
            show(deeper, head[i], strtoull(w[i], NULL, 10), &col);
        end_block(col, deeper);
        break;
    }
    fclose(f);
}
