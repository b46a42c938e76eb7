/* load.h - the graph file reader's state, shared by vm/file/load.c (the file's structure) and
 * vm/file/verify.c (what each instruction may read and write). Private to those two files. */
#ifndef TSL_LOAD_H
#define TSL_LOAD_H
#include "graphfile.h"

#define MAX_REGS (1 << 24)
#define MAX_CODE (1 << 24)
#define MAX_STEPS 4096

typedef struct {
    uint64_t off, len;
} Span;

typedef struct {
    const uint8_t *data;
    size_t n;
    Span sec[GF_SEC_END];
    Reader r;             /* the section being read */
    const char *where;    /* its name, for messages */
    char *err;
    size_t errlen;
    bool failed;
    char **strs;
    uint32_t nstrs;
    OpCode *ops;
    uint32_t nops;
    uint32_t version;     /* the file's format version */
    GraphFile *gf;
    Source *src;
    /* PUSH/POP stacks: the register each stack first saw, so all agree in kind and type */
    int *stack_reg;
} Load;

/* The first problem becomes the message (in L->err); always false, so `return load_fail(...)`. */
bool load_fail(Load *L, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
bool load_is_reg(Load *L, int r, RegKind kind);
bool load_want_reg(Load *L, int r, RegKind kind, const char *what);
/* Same kind, and for tensors the same dtype and shape. */
bool load_same_type(const RegInfo *a, const RegInfo *b);
/* verify.c: one instruction against the registers and the op table. */
bool load_verify_ins(Load *L, Ins *in);

#endif
