# SPDX-License-Identifier: BSD-3-Clause
##
## ch4:pme - MPI over PME's raw-Ethernet transport.
##
## The netmod's sources compile into libmpi; the transport itself (pme_core) is a
## separate static PIC library, libpmecore.a, built by PME's own autotools and linked
## into libmpi (see subconfigure.m4 and maint/build-mpich in the PME tree).
##

if BUILD_CH4_NETMOD_PME

noinst_HEADERS += src/mpid/ch4/netmod/pme/pme_pre.h \
                  src/mpid/ch4/netmod/pme/pme_impl.h \
                  src/mpid/ch4/netmod/pme/pme_noinline.h \
                  src/mpid/ch4/netmod/pme/pme_compat.h \
                  src/mpid/ch4/netmod/pme/pme_init.h \
                  src/mpid/ch4/netmod/pme/pme_am_wire.h \
                  src/mpid/ch4/netmod/pme/pme_rma.h \
                  src/mpid/ch4/netmod/pme/pme_topo_search.h \
                  src/mpid/ch4/netmod/pme/netmod_inline.h

mpi_core_sources += src/mpid/ch4/netmod/pme/func_table.c \
                    src/mpid/ch4/netmod/pme/globals.c \
                    src/mpid/ch4/netmod/pme/dynq.c \
                    src/mpid/ch4/netmod/pme/err.c \
                    src/mpid/ch4/netmod/pme/send.c \
                    src/mpid/ch4/netmod/pme/rma_win.c \
                    src/mpid/ch4/netmod/pme/rma_sync.c \
                    src/mpid/ch4/netmod/pme/rma.c \
                    src/mpid/ch4/netmod/pme/init.c \
                    src/mpid/ch4/netmod/pme/init_iface.c \
                    src/mpid/ch4/netmod/pme/init_secret.c \
                    src/mpid/ch4/netmod/pme/am.c \
                    src/mpid/ch4/netmod/pme/shm_wake.c \
                    src/mpid/ch4/netmod/pme/progress.c \
                    src/mpid/ch4/netmod/pme/spawn.c \
                    src/mpid/ch4/netmod/pme/pvars.c \
                    src/mpid/ch4/netmod/pme/topo_search.c \
                    src/mpid/ch4/netmod/pme/topo_place.c \
                    src/mpid/ch4/netmod/pme/topo_map.c \
                    src/mpid/ch4/netmod/pme/topo_hooks.c \
                    src/mpid/ch4/netmod/pme/topo_distgraph.c \
                    src/mpid/ch4/netmod/pme/coll_axes.c \
                    src/mpid/ch4/netmod/pme/misc.c

errnames_txt_files += src/mpid/ch4/netmod/pme/errnames.txt

# libpmecore.a: linked into libmpi, and a dependency of it, so that a change in
# pme_core relinks libmpi.
pmpi_convenience_libs += @pme_core_lib@

endif
