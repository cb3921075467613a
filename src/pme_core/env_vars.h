/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * env_vars.h - every PME_* environment variable, in one table (env_vars.c): what
 * `pme_info --config` shows, and what an endpoint checks the environment against.
 */
#ifndef PME_ENV_VARS_H
#define PME_ENV_VARS_H

#include <stddef.h>

#include "pme.h"

enum pme_var_kind {
    PME_VAR_UINT,   /* unsigned or uint32_t field of struct pme_config */
    PME_VAR_U16,    /* uint16_t field */
    PME_VAR_INT,    /* int field */
    PME_VAR_SIZE,   /* size_t field */
    PME_VAR_BOOL,   /* int field, 1 or 0 */
    PME_VAR_STR,    /* const char * field */
    PME_VAR_AUTH,   /* enum pme_auth */
    PME_VAR_WAIT,   /* enum pme_wait_mode */
    PME_VAR_BYPASS, /* enum pme_bypass */
    PME_VAR_TEXT,   /* read elsewhere than struct pme_config: the default is text */
    PME_VAR_SCRIPT, /* read by the build and test scripts only, never by the library */
};

struct pme_env_var {
    const char *name;
    enum pme_var_kind kind;
    size_t off;       /* of the field in struct pme_config, for the kinds with one */
    const char *dflt; /* PME_VAR_TEXT, PME_VAR_SCRIPT: the default, as text */
    const char *what;
};

/* The table, n entries. */
const struct pme_env_var *pme_env_vars(size_t *n);
/* The entry of that name, or NULL. */
const struct pme_env_var *pme_env_var_find(const char *name);
/* The field of v in cfg as text (its default or its current value). */
void pme_env_var_format(const struct pme_env_var *v, const struct pme_config *cfg, char *buf,
                        size_t len);
/* Calls fn with the "NAME=value" entry and the name of each PME_* variable of the
 * environment that is not in the table; returns how many there were. */
int pme_env_each_unknown(void (*fn)(const char *entry, const char *name, void *arg), void *arg);
/* Once per process: one line on stderr per PME_* variable of the environment that is
 * not in the table, unless PME_WARN_UNKNOWN=0. Returns how many were unknown. */
int pme_env_warn_unknown(void);

#endif
