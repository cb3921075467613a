/*
 * claim.h - endpoint ids are claimed per interface for as long as the process lives.
 *
 * A claim is a listening abstract-namespace Unix socket named after the interface and
 * the id. Abstract names belong to the network namespace (so two virtual nodes on one
 * machine never collide), leave no file behind, cannot be planted in advance by
 * creating a file, and vanish the moment the process dies, however it dies. A process
 * that finds a name taken connects to it to learn the owner's pid for its message.
 */
#ifndef PME_CLAIM_H
#define PME_CLAIM_H

#include <stdint.h>

/* Claim (label, id): returns a descriptor to keep open (closing it releases the
 * claim), PME_ERR_BUSY with *owner set to the holder's pid (0 if unknown), or another
 * pme_status with errno-style detail in *sys_errno. */
int pme_claim_id(const char *label, uint16_t id, int *owner, int *sys_errno);

#endif
