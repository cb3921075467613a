/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pme_pvar.h - read one of ch4:pme's MPI_T performance variables by name, for the test
 * programs of test/mpi (pme_whoami.c keeps its own reader: it is the quick start's
 * example and stands alone).
 */
#ifndef PME_TEST_MPI_PVAR_H
#define PME_TEST_MPI_PVAR_H

#include <mpi.h>
#include <string.h>

/* Reads the variable `name` into buf (size bytes); returns 1 when it did, 0 when there is
 * no such variable or its value does not fit. Needs MPI_T_init_thread or MPI_Init. */
static int pme_pvar_read(const char *name, void *buf, size_t size)
{
    int n = 0, found = 0;
    MPI_T_pvar_session session;
    MPI_T_pvar_get_num(&n);
    if (MPI_T_pvar_session_create(&session) != MPI_SUCCESS)
        return 0;
    for (int i = 0; i < n && !found; i++) {
        char nm[256], desc[1024];
        int nlen = sizeof(nm), dlen = sizeof(desc), verb, cls, bind, ro, cont, atomic, count, esz;
        MPI_Datatype dt;
        MPI_T_enum en;
        MPI_T_pvar_handle h;
        if (MPI_T_pvar_get_info(i, nm, &nlen, &verb, &cls, &dt, &en, desc, &dlen, &bind, &ro,
                                &cont, &atomic) != MPI_SUCCESS || strcmp(nm, name) ||
            MPI_Type_size(dt, &esz) != MPI_SUCCESS ||
            MPI_T_pvar_handle_alloc(session, i, NULL, &h, &count) != MPI_SUCCESS)
            continue;
        if ((size_t) count * (size_t) esz <= size)
            found = MPI_T_pvar_read(session, h, buf) == MPI_SUCCESS;
        MPI_T_pvar_handle_free(session, &h);
    }
    MPI_T_pvar_session_free(&session);
    return found;
}

#endif
