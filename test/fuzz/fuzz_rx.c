// SPDX-License-Identifier: BSD-3-Clause
/*
 * fuzz_rx.c - libFuzzer target for the frame receive path: every frame of the input
 * goes through the loop wire into one endpoint (wire check, authentication, the link's
 * Go-Back-N and control frames, eager assembly, rendezvous), with the caller answering
 * events as an MPI program would. Built with AddressSanitizer and UBSan by
 * test/fuzz/t-fuzz.sh; any crash, leak or undefined behaviour is a failure.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct fz z;
    if (size < 1 || fz_open(&z, data[0]))
        return 0;
    size_t off = 1;
    while (off + 2 <= size) {
        size_t len = (size_t)data[off] << 8 | data[off + 1];
        off += 2;
        if (len > size - off)
            len = size - off;
        pme_loop_wire_inject(z.wire, data + off, len);
        off += len;
        fz_events(&z);
    }
    fz_events(&z);
    fz_close(&z);
    return 0;
}
