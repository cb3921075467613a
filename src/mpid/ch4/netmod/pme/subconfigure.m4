dnl SPDX-License-Identifier: BSD-3-Clause
[#] start of __file__
dnl ch4:pme - MPI over PME's raw-Ethernet transport (pme_core).
dnl
dnl Options:
dnl   --with-pme-core-include=DIR  a directory with PME's public header pme.h (and
dnl                                nothing else that could shadow MPICH's headers)
dnl   --with-pme-core-lib=FILE     libpmecore.a, built with -fPIC
dnl maint/build-mpich in the PME tree passes both.
dnl
dnl MPICH_SUBCFG_AFTER=src/mpid/ch4

AC_DEFUN([PAC_SUBCFG_PREREQ_]PAC_SUBCFG_AUTO_SUFFIX,[
    AM_COND_IF([BUILD_CH4],[
        for net in $ch4_netmods ; do
            AS_CASE([$net],[pme],[build_ch4_netmod_pme=yes])
        done
        if test "X$build_ch4_netmod_pme" = "Xyes" ; then
            AC_DEFINE(HAVE_CH4_NETMOD_PME, 1, [PME netmod is built])
            dnl ch4 locality information tells on-node peers (shared memory) from
            dnl the others (PME).
            if test "$build_ch4_locality_info" != "yes" ; then
                AC_DEFINE(MPIDI_BUILD_CH4_LOCALITY_INFO, 1, [CH4 should build locality info])
                build_ch4_locality_info="yes"
            fi
            dnl ch4:pme is called through ch4's function table; it is never inlined
            dnl (its headers would be compiled into all of MPICH).
            CPPFLAGS=`echo "$CPPFLAGS" | sed -e 's/-DNETMOD_INLINE=__netmod_inline_pme__//'`
        fi
    ])
    AM_CONDITIONAL([BUILD_CH4_NETMOD_PME],[test "X$build_ch4_netmod_pme" = "Xyes"])
])dnl

AC_DEFUN([PAC_SUBCFG_BODY_]PAC_SUBCFG_AUTO_SUFFIX,[
AM_COND_IF([BUILD_CH4_NETMOD_PME],[
    AC_MSG_NOTICE([RUNNING CONFIGURE FOR ch4:pme])

    AC_ARG_WITH([pme-core-include],
        [AS_HELP_STRING([--with-pme-core-include=DIR],[directory holding PME's pme.h (ch4:pme)])],
        [], [with_pme_core_include=no])
    AC_ARG_WITH([pme-core-lib],
        [AS_HELP_STRING([--with-pme-core-lib=FILE],[libpmecore.a built with -fPIC (ch4:pme)])],
        [], [with_pme_core_lib=no])

    if test "$with_pme_core_include" = "no" -o ! -f "$with_pme_core_include/pme.h" ; then
        AC_MSG_ERROR([ch4:pme needs --with-pme-core-include=DIR, a directory with PME's pme.h; use maint/build-mpich of PME])
    fi
    if test "$with_pme_core_lib" = "no" -o ! -f "$with_pme_core_lib" ; then
        AC_MSG_ERROR([ch4:pme needs --with-pme-core-lib=FILE, PME's libpmecore.a; use maint/build-mpich of PME])
    fi
    PAC_APPEND_FLAG([-I$with_pme_core_include], [CPPFLAGS])
    pme_core_lib="$with_pme_core_lib"
    AC_SUBST([pme_core_lib])

    dnl pme_core's own dependencies: libpcap (raw frames) and hwloc (core count). They
    dnl go into LIBS, which libtool puts after libpmecore.a on libmpi's link line: with
    dnl --as-needed (GCC's default here) a library named before the archive that uses it
    dnl would be dropped. Programs link libmpi.so only and need neither.
    AC_CHECK_HEADER([pcap.h], [], [AC_MSG_ERROR([ch4:pme needs libpcap: apt-get install libpcap-dev])])
    PAC_APPEND_FLAG([-lpcap -lhwloc], [LIBS])
])dnl end AM_COND_IF(BUILD_CH4_NETMOD_PME,...)
])dnl end _BODY

[#] end of __file__
