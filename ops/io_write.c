/* io_write.c - every file a built-in writes (save_npy, save_csv, write_text, export) is
 * written whole or not at all. The bytes go to a new temporary file in the target's folder;
 * only once all of them are written and on the disk (fflush, fsync) does a rename put it in
 * the target's place. A write that fails (disk full, the file size limit) removes the
 * temporary file and leaves the old file as it was, byte for byte. Missing parent folders are
 * made first (as `mkdir -p`), so writing OUTDIR/x works on a fresh checkout. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "tops.h"

/* A write past the file size limit (ulimit -f) raises SIGXFSZ, whose default action kills the
 * process with the old file already gone in an in-place write; ignored, the write fails with
 * EFBIG, which is reported as an error like any other. A handler the host set is left alone. */
static void ignore_file_size_signal(void) {
    struct sigaction old;
    if (sigaction(SIGXFSZ, NULL, &old) == 0 && !(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_DFL)
        signal(SIGXFSZ, SIG_IGN);
}

static bool fail_errno(const char *who, const char *what, const char *path, int err) {
    op_failk(ERRK_IO, "%s: cannot %s '%s': %s", who, what, path, strerror(err));
    return false;
}

/* The file a write replaces: path itself, or where the link at path points (the link stays a
 * link). An existing target must be a regular file: a FIFO or a device is never replaced. */
static bool resolve_target(IoWriter *w, const char *path) {
    struct stat st;
    size_t n = strlen(path);
    if (n >= sizeof w->target) return fail_errno(w->who, "write", path, ENAMETOOLONG);
    if (n == 0 || path[n - 1] == '/') return fail_errno(w->who, "write", path, n ? EISDIR : ENOENT);
    snprintf(w->target, sizeof w->target, "%s", path);
    w->mode = -1;
    if (lstat(path, &st) != 0) return errno == ENOENT ? true : fail_errno(w->who, "write", path, errno);
    if (S_ISLNK(st.st_mode) && (!realpath(path, w->target) || stat(w->target, &st) != 0))
        return fail_errno(w->who, "write", path, errno);
    if (!S_ISREG(st.st_mode)) return op_failk(ERRK_IO, "%s: cannot write '%s': not a regular file", w->who, path), false;
    w->mode = (int)(st.st_mode & 07777);   /* the replacement keeps the old file's permissions */
    return true;
}

/* Makes the folders above w->target that do not exist yet, outermost first. */
static bool make_parents(IoWriter *w) {
    char dir[sizeof w->target];
    snprintf(dir, sizeof dir, "%s", w->target);
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir) return true;
    *slash = 0;
    for (char *p = dir + 1;; p++) {
        if (*p && *p != '/') continue;
        char c = *p;
        *p = 0;
        if (mkdir(dir, 0777) != 0 && errno != EEXIST) return fail_errno(w->who, "create the folder", dir, errno);
        if (!c) return true;
        *p = c;
    }
}

/* A new file beside the target, named so that two writers (threads, processes) never share one. */
static int create_temp(IoWriter *w) {
    static atomic_uint counter;
    const char *slash = strrchr(w->target, '/');
    int dirlen = slash ? (int)(slash - w->target) + 1 : 0;
    for (int tries = 0; tries < 100; tries++) {
        snprintf(w->tmp, sizeof w->tmp, "%.*s.%s.%ld.%u.tmp", dirlen, w->target, slash ? slash + 1 : w->target,
                 (long)getpid(), atomic_fetch_add(&counter, 1));
        int fd = open(w->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd >= 0 || errno != EEXIST) return fd;
    }
    return -1;
}

FILE *io_write_begin(IoWriter *w, const char *path, const char *who) {
    memset(w, 0, sizeof *w);
    w->who = who;
    w->path = path;
    if (!resolve_target(w, path)) return NULL;
    ignore_file_size_signal();
    int fd = create_temp(w);
    if (fd < 0 && errno == ENOENT) {   /* a folder on the way is missing */
        if (!make_parents(w)) return NULL;
        fd = create_temp(w);
    }
    if (fd < 0) return fail_errno(who, "write", path, errno), NULL;
    if ((w->mode >= 0 && fchmod(fd, (mode_t)w->mode) != 0) || !(w->fp = fdopen(fd, "wb"))) {
        fail_errno(who, "write", path, errno);
        close(fd);
        unlink(w->tmp);
        return NULL;
    }
    return w->fp;
}

/* The folder's entry for the new name is on the disk too (a crash after rename keeps it). */
static void sync_folder(const char *target) {
    char dir[PATH_MAX];
    const char *slash = strrchr(target, '/');
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - target) + (slash == target) : 1, slash ? target : ".");
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
}

int io_write_end(IoWriter *w, bool ok) {
    int err = ok ? 0 : errno ? errno : EIO;
    if (!err && fflush(w->fp) != 0) err = errno;
    if (!err && fsync(fileno(w->fp)) != 0) err = errno;
    if (fclose(w->fp) != 0 && !err) err = errno;
    w->fp = NULL;
    if (!err && rename(w->tmp, w->target) != 0) err = errno;
    if (err) {
        unlink(w->tmp);
        fail_errno(w->who, "write", w->path, err);
        return -1;
    }
    sync_folder(w->target);
    return 0;
}

int io_write_file(const char *path, const char *who, const void *data, size_t n) {
    IoWriter w;
    FILE *fp = io_write_begin(&w, path, who);
    if (!fp) return -1;
    errno = 0;
    return io_write_end(&w, fwrite(data, 1, n, fp) == n);
}
