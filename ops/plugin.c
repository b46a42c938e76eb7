/* plugin.c - finding a plugin beside the binary and opening it (see plugin.h). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "plugin.h"

void plugin_path(const char *env, const char *name, char *buf, size_t n) {
    const char *given = getenv(env);
    if (given && *given) { snprintf(buf, n, "%s", given); return; }
    Dl_info info;
    char exe[4096];
    const char *self = dladdr((void *)plugin_path, &info) && info.dli_fname ? info.dli_fname : "";
    if (!strchr(self, '/')) {   /* the executable, started through PATH: its name has no folder */
        ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
        exe[len > 0 ? len : 0] = 0;
        self = exe;
    }
    const char *slash = strrchr(self, '/');
    int dir = slash ? (int)(slash - self) : 1;
    snprintf(buf, n, "%.*s/%s", dir, slash ? self : ".", name);
}

int plugin_open(const char *path, const char *sym, void **entry, char *err, size_t n) {
    *entry = NULL;
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(err, n, "%s", dlerror());
        return -1;
    }
    *entry = dlsym(h, sym);
    if (!*entry) {
        snprintf(err, n, "%.300s has no %s", path, sym);
        dlclose(h);
        return -2;
    }
    return 0;
}
