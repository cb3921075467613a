/*
 * iflist.c - the interfaces an endpoint spans, from PME_IFACE's form: names and shell
 * patterns separated by commas ("eth1", "xp,xm,yp,ym", "x*,y*"). A pattern matches the
 * network interfaces of this namespace in name order; loopback never matches one.
 */
#include <dirent.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iflist.h"

static bool listed(char names[][PME_IFNAME_LEN], unsigned n, const char *name)
{
    for (unsigned i = 0; i < n; i++)
        if (!strcmp(names[i], name))
            return true;
    return false;
}

static int add(char names[][PME_IFNAME_LEN], unsigned *n, const char *name, char *err,
               size_t errlen)
{
    if (listed(names, *n, name))
        return 0;
    if (*n == PME_MAX_DEVS) {
        snprintf(err, errlen, "more than %d interfaces for one endpoint", PME_MAX_DEVS);
        return -1;
    }
    snprintf(names[(*n)++], PME_IFNAME_LEN, "%s", name);
    return 0;
}

static int add_matches(char names[][PME_IFNAME_LEN], unsigned *n, const char *pattern,
                       char *err, size_t errlen)
{
    struct dirent **e;
    int k = scandir("/sys/class/net", &e, NULL, alphasort);
    if (k < 0) {
        snprintf(err, errlen, "cannot list the network interfaces (/sys/class/net)");
        return -1;
    }
    int rc = 0, found = 0;
    for (int i = 0; i < k; i++) {
        const char *name = e[i]->d_name;
        if (!rc && name[0] != '.' && strcmp(name, "lo") && strlen(name) < PME_IFNAME_LEN &&
            !fnmatch(pattern, name, 0)) {
            found++;
            rc = add(names, n, name, err, errlen);
        }
        free(e[i]);
    }
    free(e);
    if (!rc && !found) {
        snprintf(err, errlen, "no network interface matches \"%s\"", pattern);
        rc = -1;
    }
    return rc;
}

int pme_iflist_expand(const char *spec, char names[][PME_IFNAME_LEN], char *err,
                      size_t errlen)
{
    unsigned n = 0;
    const char *s = spec;
    while (*s) {
        size_t len = strcspn(s, ",");
        char item[64];
        if (len == 0 || len >= sizeof(item)) {
            snprintf(err, errlen, "interface list \"%s\" has an empty or overlong item", spec);
            return -1;
        }
        memcpy(item, s, len);
        item[len] = 0;
        int rc;
        if (strpbrk(item, "*?["))
            rc = add_matches(names, &n, item, err, errlen);
        else if (len >= PME_IFNAME_LEN) {
            snprintf(err, errlen, "\"%s\" is too long for an interface name", item);
            rc = -1;
        } else
            rc = add(names, &n, item, err, errlen);
        if (rc)
            return -1;
        s += len;
        if (*s == ',' && !*++s) {
            snprintf(err, errlen, "interface list \"%s\" ends with a comma", spec);
            return -1;
        }
    }
    if (!n) {
        snprintf(err, errlen, "the interface list is empty");
        return -1;
    }
    return (int)n;
}
