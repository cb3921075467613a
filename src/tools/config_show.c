// SPDX-License-Identifier: BSD-3-Clause
/*
 * config_show.c - pme_info --config: every PME_* variable (env_vars.c, the one list)
 * and every MPIR_CVAR_CH4_PME_* control variable of the netmod (pme_cvars.h, generated
 * from the netmod's own CVAR blocks at build time), each with its default, its value in
 * this environment and where that came from; then the PME_* variables of the
 * environment that are none of these. --names prints the names alone, one a line.
 *
 * The values are this process's: an MPI job's ranks see what mpiexec passes them
 * (its environment, -genv), so run it where, and as, the job starts.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "env_vars.h"
#include "pme.h"

struct cvar {
    const char *name, *type, *dflt;
};

static const struct cvar cvars[] = {
#include "pme_cvars.h"
    {NULL, NULL, NULL}, /* a tree without the netmod declares none */
};

#define NCVARS (sizeof(cvars) / sizeof(cvars[0]) - 1)

/* MPICH reads a CVAR X from MPICH_X, MPIR_PARAM_X and MPIR_CVAR_X, the last one set
 * winning; returns the value and which name set it. */
static const char *cvar_env(const char *name, char *from, size_t len)
{
    static const char *const prefixes[] = {"MPICH_", "MPIR_PARAM_", "MPIR_CVAR_"};
    const char *stem = name + strlen("MPIR_CVAR_"), *val = NULL;
    for (size_t i = 0; i < 3; i++) {
        char var[160];
        snprintf(var, sizeof(var), "%s%s", prefixes[i], stem);
        const char *v = getenv(var);
        if (v) {
            val = v;
            snprintf(from, len, "environment (%s)", var);
        }
    }
    return val;
}

static void show_pme(int scripts)
{
    struct pme_config def, cur;
    char err[512] = "", d[64], c[256], from[160];
    pme_config_init(&def);
    pme_config_init(&cur);
    int bad = pme_config_from_env(&cur, err, sizeof(err)) != PME_OK;
    size_t n;
    const struct pme_env_var *v = pme_env_vars(&n);
    for (size_t i = 0; i < n; i++) {
        if ((v[i].kind == PME_VAR_SCRIPT) != scripts)
            continue;
        const char *env = getenv(v[i].name);
        if (scripts && !env)
            continue;
        pme_env_var_format(&v[i], &def, d, sizeof(d));
        if (env && (bad || v[i].kind == PME_VAR_TEXT || v[i].kind == PME_VAR_SCRIPT))
            snprintf(c, sizeof(c), "%s", env);
        else
            pme_env_var_format(&v[i], &cur, c, sizeof(c));
        snprintf(from, sizeof(from), "%s", env ? "environment" : "default");
        printf("  %-22s %-16s %-16s %-12s %s\n", v[i].name, scripts ? "" : d, c, from,
               v[i].what);
    }
    if (bad && !scripts)
        printf("  INVALID: %s\n", err);
}

static void show_cvars(void)
{
    for (size_t i = 0; i < NCVARS; i++) {
        char from[200] = "default";
        const char *val = cvar_env(cvars[i].name, from, sizeof(from));
        printf("  %-38s %-8s %-16s %-16s %s\n", cvars[i].name, cvars[i].type,
               *cvars[i].dflt ? cvars[i].dflt : "(empty)",
               val ? val : *cvars[i].dflt ? cvars[i].dflt : "(empty)", from);
    }
}

static void show_unknown(const char *entry, const char *name, void *arg)
{
    (void)name;
    if (!(*(int *)arg)++)
        printf("\nPME_* variables that PME does not have (ignored; an endpoint warns "
               "about them unless PME_WARN_UNKNOWN=0):\n");
    printf("  %s\n", entry);
}

int config_show_main(int argc, char **argv)
{
    size_t n;
    const struct pme_env_var *v = pme_env_vars(&n);
    int names = argc > 2 && !strcmp(argv[2], "--names");
    if (names) {
        for (size_t i = 0; i < n; i++)
            printf("%s\t%s\n", v[i].name, v[i].kind == PME_VAR_SCRIPT ? "script" : "pme");
        for (size_t i = 0; i < NCVARS; i++)
            printf("%s\tcvar\n", cvars[i].name);
        return 0;
    }
    printf("PME's variables in this environment (MPI ranks get mpiexec's, and -genv's):\n");
    printf("  %-22s %-16s %-16s %-12s %s\n", "NAME", "DEFAULT", "CURRENT", "FROM", "WHAT");
    show_pme(0);
    printf("\nMPI control variables of ch4:pme (MPI_T; set as MPIR_CVAR_X, MPIR_PARAM_X or "
           "MPICH_X):\n");
    printf("  %-38s %-8s %-16s %-16s %s\n", "NAME", "TYPE", "DEFAULT", "CURRENT", "FROM");
    show_cvars();
    printf("\nThe build and test scripts' variables set here (the library reads none):\n");
    show_pme(1);
    int unknown = 0;
    pme_env_each_unknown(show_unknown, &unknown);
    return 0;
}
