// SPDX-License-Identifier: BSD-3-Clause
/*
 * t_iflocal.c - which cores are near which NIC (iflocal.c), on a machine described to
 * hwloc in XML: two packages, each with its NUMA node and two cores, eth0 and eth2 on PCI
 * below package 0 (cores 0-1) and eth1 below package 1 (cores 2-3). Virtual interfaces
 * have no PCI device, so no network of a test can show this. The MACs and the calling
 * thread's cores come from the test (iflocal.h's seam), the topology through
 * HWLOC_XMLFILE and iflocal's own loader.
 * pme-test: tier=default cpu=130 time=1
 */
#include <hwloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "iflocal.h"
#include "pme.h"
#include "pme_test.h"

static const char machine_xml[] =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    "<!DOCTYPE topology SYSTEM \"hwloc2.dtd\">\n"
    "<topology version=\"2.0\">\n"
    " <object type=\"Machine\" os_index=\"0\" cpuset=\"0xf\" complete_cpuset=\"0xf\" allowed_cpuset=\"0xf\" nodeset=\"0x3\" complete_nodeset=\"0x3\" allowed_nodeset=\"0x3\" gp_index=\"1\">\n"
    "  <object type=\"Package\" os_index=\"0\" cpuset=\"0x3\" complete_cpuset=\"0x3\" nodeset=\"0x1\" complete_nodeset=\"0x1\" gp_index=\"2\">\n"
    "   <object type=\"NUMANode\" os_index=\"0\" cpuset=\"0x3\" complete_cpuset=\"0x3\" nodeset=\"0x1\" complete_nodeset=\"0x1\" gp_index=\"3\"/>\n"
    "   <object type=\"Core\" os_index=\"0\" cpuset=\"0x1\" complete_cpuset=\"0x1\" nodeset=\"0x1\" complete_nodeset=\"0x1\" gp_index=\"4\">\n"
    "    <object type=\"PU\" os_index=\"0\" cpuset=\"0x1\" complete_cpuset=\"0x1\" nodeset=\"0x1\" complete_nodeset=\"0x1\" gp_index=\"5\"/>\n"
    "   </object>\n"
    "   <object type=\"Core\" os_index=\"1\" cpuset=\"0x2\" complete_cpuset=\"0x2\" nodeset=\"0x1\" complete_nodeset=\"0x1\" gp_index=\"6\">\n"
    "    <object type=\"PU\" os_index=\"1\" cpuset=\"0x2\" complete_cpuset=\"0x2\" nodeset=\"0x1\" complete_nodeset=\"0x1\" gp_index=\"7\"/>\n"
    "   </object>\n"
    "   <object type=\"Bridge\" gp_index=\"8\" bridge_type=\"0-1\" depth=\"0\" bridge_pci=\"0000:[01-01]\">\n"
    "    <object type=\"PCIDev\" gp_index=\"9\" pci_busid=\"0000:01:00.0\" pci_type=\"0200 [8086:1521] [8086:0001] 01\" pci_link_speed=\"0.000000\">\n"
    "     <object type=\"OSDev\" gp_index=\"10\" name=\"eth0\" subtype=\"Network\" osdev_type=\"2\">\n"
    "      <info name=\"Address\" value=\"02:00:00:00:00:00\"/>\n"
    "     </object>\n"
    "    </object>\n"
    "    <object type=\"PCIDev\" gp_index=\"11\" pci_busid=\"0000:01:00.1\" pci_type=\"0200 [8086:1521] [8086:0001] 01\" pci_link_speed=\"0.000000\">\n"
    "     <object type=\"OSDev\" gp_index=\"12\" name=\"eth2\" subtype=\"Network\" osdev_type=\"2\">\n"
    "      <info name=\"Address\" value=\"02:00:00:00:00:02\"/>\n"
    "     </object>\n"
    "    </object>\n"
    "   </object>\n"
    "  </object>\n"
    "  <object type=\"Package\" os_index=\"1\" cpuset=\"0xc\" complete_cpuset=\"0xc\" nodeset=\"0x2\" complete_nodeset=\"0x2\" gp_index=\"13\">\n"
    "   <object type=\"NUMANode\" os_index=\"1\" cpuset=\"0xc\" complete_cpuset=\"0xc\" nodeset=\"0x2\" complete_nodeset=\"0x2\" gp_index=\"14\"/>\n"
    "   <object type=\"Core\" os_index=\"2\" cpuset=\"0x4\" complete_cpuset=\"0x4\" nodeset=\"0x2\" complete_nodeset=\"0x2\" gp_index=\"15\">\n"
    "    <object type=\"PU\" os_index=\"2\" cpuset=\"0x4\" complete_cpuset=\"0x4\" nodeset=\"0x2\" complete_nodeset=\"0x2\" gp_index=\"16\"/>\n"
    "   </object>\n"
    "   <object type=\"Core\" os_index=\"3\" cpuset=\"0x8\" complete_cpuset=\"0x8\" nodeset=\"0x2\" complete_nodeset=\"0x2\" gp_index=\"17\">\n"
    "    <object type=\"PU\" os_index=\"3\" cpuset=\"0x8\" complete_cpuset=\"0x8\" nodeset=\"0x2\" complete_nodeset=\"0x2\" gp_index=\"18\"/>\n"
    "   </object>\n"
    "   <object type=\"Bridge\" gp_index=\"19\" bridge_type=\"0-1\" depth=\"0\" bridge_pci=\"0000:[81-81]\">\n"
    "    <object type=\"PCIDev\" gp_index=\"20\" pci_busid=\"0000:81:00.0\" pci_type=\"0200 [8086:1521] [8086:0001] 01\" pci_link_speed=\"0.000000\">\n"
    "     <object type=\"OSDev\" gp_index=\"21\" name=\"eth1\" subtype=\"Network\" osdev_type=\"2\">\n"
    "      <info name=\"Address\" value=\"02:00:00:00:00:01\"/>\n"
    "     </object>\n"
    "    </object>\n"
    "   </object>\n"
    "  </object>\n"
    " </object>\n"
    "</topology>\n";

static hwloc_topology_t topo;
static hwloc_bitmap_t bound;    /* the cores the test says the thread runs on */
static const char *moved_name;  /* a name that belongs to another device here */

/* The MACs of this imaginary machine's interfaces; anything else does not exist here. */
static bool fake_mac(const char *ifname, char *out, size_t len)
{
    static const char *const known[][2] = {
        {"eth0", "02:00:00:00:00:00"}, {"eth1", "02:00:00:00:00:01"},
        {"eth2", "02:00:00:00:00:02"}, {"veth0", "02:00:00:00:00:99"},
    };
    if (moved_name && !strcmp(ifname, moved_name)) {
        snprintf(out, len, "02:00:00:00:00:42");
        return true;
    }
    for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
        if (!strcmp(ifname, known[i][0])) {
            snprintf(out, len, "%s", known[i][1]);
            return true;
        }
    return false;
}

static int fake_cpubind(hwloc_topology_t t, hwloc_bitmap_t mine)
{
    (void)t;
    return hwloc_bitmap_copy(mine, bound);
}

static const struct pme_iflocal_host fake = {fake_mac, fake_cpubind};

/* The thread "runs on" these PUs (hwloc list syntax, "0-1"). */
static void bind_to(const char *list)
{
    CHECK(hwloc_bitmap_list_sscanf(bound, list) == 0, "bad cpu list %s", list);
}

/* pme_iflist_locality_in for the names (comma-separated), checked against the cores
 * each one is near (comma-separated, "unknown" allowed) and the index it returns. */
static void expect(const char *list, const char *want_cpus, int want)
{
    char names[PME_MAX_DEVS][PME_IFNAME_LEN], cpus[PME_MAX_DEVS][32], copy[128];
    int n = 0;
    snprintf(copy, sizeof(copy), "%s", list);
    for (char *save, *p = strtok_r(copy, ",", &save); p && n < PME_MAX_DEVS;
         p = strtok_r(NULL, ",", &save))
        snprintf(names[n++], PME_IFNAME_LEN, "%s", p);
    int got = pme_iflist_locality_in(topo, &fake, names, (unsigned)n, cpus);
    char joined[256] = "";
    for (int i = 0; i < n; i++)
        snprintf(joined + strlen(joined), sizeof(joined) - strlen(joined), "%s%s",
                 i ? "," : "", cpus[i]);
    char b[64];
    hwloc_bitmap_list_snprintf(b, sizeof(b), bound);
    CHECK(!strcmp(joined, want_cpus), "%s (thread on %s): near cores %s, want %s", list, b,
          joined, want_cpus);
    CHECK(got == want, "%s (thread on %s): nearest %d, want %d", list, b, got, want);
}

/* One NIC per package: the one below the thread's package is the nearest. */
static void two_packages(void)
{
    bind_to("2-3");
    expect("eth0,eth1", "0-1,2-3", 1);
    bind_to("3");
    expect("eth0,eth1", "0-1,2-3", 1);
    bind_to("0-1");
    expect("eth0,eth1", "0-1,2-3", 0);
    expect("eth1,eth0", "2-3,0-1", 1);
    /* A thread allowed on both packages is near neither. */
    bind_to("1-2");
    expect("eth0,eth1", "0-1,2-3", -1);
    char cpus[32];
    bind_to("2");
    CHECK(pme_iface_locality_in(topo, &fake, "eth1", cpus, sizeof(cpus)) == 1 &&
              !strcmp(cpus, "2-3"), "eth1 from core 2: %s", cpus);
    CHECK(pme_iface_locality_in(topo, &fake, "eth0", cpus, sizeof(cpus)) == 0 &&
              !strcmp(cpus, "0-1"), "eth0 from core 2: %s", cpus);
    printf("ok: eth0 near cores 0-1, eth1 near 2-3: the thread's package picks its NIC, "
           "a thread on both packages none\n");
}

/* Two NICs on the thread's package: no preference; on the other package: none near. */
static void same_package(void)
{
    bind_to("0-1");
    expect("eth0,eth2", "0-1,0-1", -1);
    bind_to("2-3");
    expect("eth0,eth2", "0-1,0-1", -1);
    expect("eth2,eth1,eth0", "0-1,2-3,0-1", 1);
    printf("ok: eth0 and eth2 both on package 0: no preference from it, none from "
           "package 1, and eth1 chosen among the three\n");
}

/* What hwloc does not know: a virtual interface, a name that is another device's in this
 * network namespace (the MAC differs), a name this namespace does not have. */
static void unknown(void)
{
    char cpus[32];
    bind_to("2-3");
    expect("veth0,eth1", "unknown,2-3", 1);
    CHECK(pme_iface_locality_in(topo, &fake, "veth0", cpus, sizeof(cpus)) == -1 &&
              !strcmp(cpus, "unknown"), "veth0: %s", cpus);
    moved_name = "eth1";
    expect("eth0,eth1", "0-1,unknown", -1);
    moved_name = NULL;
    expect("eth0,eth9", "0-1,unknown", -1);
    bind_to("0");
    expect("eth9,eth0", "unknown,0-1", 1);
    expect("veth0,eth9", "unknown,unknown", -1);
    printf("ok: veth0, an eth1 whose MAC is another device's and a missing eth9 are "
           "\"unknown\" and never chosen\n");
}

/* The public functions on the same machine, through the loader and the system's MACs:
 * lo is in no XML, and no interface of this host has the XML's MACs. */
static void system_host(void)
{
    char names[1][PME_IFNAME_LEN] = {"lo"}, cpus[1][32], one[32];
    CHECK(pme_iflist_locality(names, 1, cpus) == -1 && !strcmp(cpus[0], "unknown"), "lo: %s",
          cpus[0]);
    CHECK(pme_iface_locality("lo", one, sizeof(one)) == -1 && !strcmp(one, "unknown"),
          "lo: %s", one);
    printf("ok: pme_iface_locality and pme_iflist_locality: lo is unknown\n");
}

int main(int argc, char **argv)
{
    char path[] = "/tmp/pme-t-iflocal.XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0, "mkstemp");
    CHECK(write(fd, machine_xml, sizeof(machine_xml) - 1) == (ssize_t)sizeof(machine_xml) - 1,
          "write %s", path);
    close(fd);
    setenv("HWLOC_XMLFILE", path, 1);
    setenv("HWLOC_LIBXML", "0", 1); /* hwloc's own parser: no libxml2 in the test */
    CHECK(pme_iflocal_load(&topo) == 0, "hwloc cannot load %s", path);
    bound = hwloc_bitmap_alloc();
    CHECK(bound, "hwloc_bitmap_alloc");
    static const struct scenario all[] = {
        {"two_packages", two_packages}, {"same_package", same_package},
        {"unknown", unknown},           {"system_host", system_host},
    };
    run_scenarios(argc, argv, all, sizeof(all) / sizeof(all[0]));
    hwloc_bitmap_free(bound);
    hwloc_topology_destroy(topo);
    unlink(path);
    return 0;
}
