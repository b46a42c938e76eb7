/* plugin.h - finding and opening a plugin that lives beside the binary (the MPI plugin
 * bin/libtsl_mpi.so, the CUDA plugin bin/libtsl_cuda.so).
 *
 * bin/tsl and libtsl.so never link the libraries a plugin needs; the plugin is dlopen'ed
 * on first use, so a machine without them still runs everything else. */
#ifndef TSL_PLUGIN_H
#define TSL_PLUGIN_H
#include <stddef.h>

/* The plugin's path: the environment variable env when it is set and not empty, else the
 * file `name` in the folder of the binary holding this code (bin/tsl or bin/libtsl.so). */
void plugin_path(const char *env, const char *name, char *buf, size_t n);

/* dlopen's the plugin at path and looks up its entry point `sym` (*entry): 0; -1 when the
 * library could not be loaded (dlerror's text in err); -2 when it has no such entry point
 * (a library that is not this kind of plugin). */
int plugin_open(const char *path, const char *sym, void **entry, char *err, size_t n);

#endif
