/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * kmod_tool.h - what kmod_tool.c and kmod_tool_zc.c share: an endpoint of /dev/pme
 * bound and mapped, and the checks' bookkeeping.
 */
#ifndef KMOD_TOOL_H
#define KMOD_TOOL_H

#include <stdint.h>
#include <stdio.h>

#include "pme_ioctl.h"

#define DEV "/dev/pme"

extern int fails;

#define CHECK(cond, ...)                                                                   \
    do {                                                                                   \
        if (cond) {                                                                        \
            printf("ok: ");                                                                \
        } else {                                                                           \
            printf("FAIL: ");                                                              \
            fails++;                                                                       \
        }                                                                                  \
        printf(__VA_ARGS__);                                                               \
        printf("\n");                                                                      \
    } while (0)

struct kep {
    int fd;
    struct pme_kbind b;
    uint8_t *mem;
    uint32_t tx_cur;
    uint32_t rx_cur;
};

int open_dev(void);
void bind_req(struct pme_kbind *b, const char *ifname, unsigned ep_id);
/* Bind and map, or exit. */
void kep_open(struct kep *k, const char *ifname, unsigned ep_id, uint32_t job, uint32_t node);
struct pme_kslot *kep_slot(struct kep *k, uint64_t off, uint32_t i);
/* Queue one frame; 0 when the ring is full. */
int kep_queue(struct kep *k, const uint8_t *frame, uint32_t len);
void put16(uint8_t *p, unsigned v);
void put32(uint8_t *p, uint32_t v);
unsigned get16(const uint8_t *p);
uint32_t get32(const uint8_t *p);

/* kmod_tool_zc.c */
int cmd_zc_abuse(int argc, char **argv);
int cmd_zc_xfer(int argc, char **argv);
int cmd_zc_hold(int argc, char **argv);

/* kmod_tool_rx.c */
int cmd_rx_hostile(int argc, char **argv);

#endif
