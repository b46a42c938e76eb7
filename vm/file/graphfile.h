/* graphfile.h - the graph file (docs/format.md): what it holds, and its writer and reader.
 *
 * A file holds one compiled static fn as plain data: the Graph's program (instructions,
 * registers, constants, the guards on its arguments, the result), with the values it read
 * from outside its arguments (a model's weights) turned into constants that registers are
 * bound to before each run. Everything is referred to by index; op codes by name. */
#ifndef TSL_GRAPHFILE_H
#define TSL_GRAPHFILE_H
#include "ir.h"
#include "wire.h"

/* The first GF_MAGIC_BYTES bytes of every file (docs/format.md's layout table). */
#define GF_MAGIC "\x89TSLG\r\n\x1a"
#define GF_MAGIC_BYTES 8u
_Static_assert(sizeof GF_MAGIC - 1 == GF_MAGIC_BYTES, "GF_MAGIC is GF_MAGIC_BYTES bytes");
/* 2 added the epilogue instruction (code 23), 3 the new-axis index item (kind 4, `x[:, nil]`),
 * 4 run-time dimensions (-1 in a register's or guard's shape: export's dynamic axes, and
 * what is computed from them), the dim instruction (code 32) and ops whose result's length
 * the data decides (unique), 5 a second bool attribute (bit 1 of the attributes' flag byte:
 * matmul's transpose_b) and an epilogue's aux 2 and 3 (EPI_TRANS_B). A file says the lowest version that holds what it uses, so a
 * graph without them still reads in an older build. */
#define GF_FORMAT_VERSION 5u
#define GF_FORMAT_EPILOGUE 2u
#define GF_FORMAT_NEWAXIS 3u
#define GF_FORMAT_RUNTIME 4u
#define GF_FORMAT_TRANSPOSE_B 5u
/* The meaning of the ops a file names: bumped when an op's signature, attributes or results
 * change. Ops are stored by name, so adding ops needs no bump. */
#define GF_OPSET_VERSION 1u
#define GF_ENDIAN_TAG 0x0A0B0C0Du
#define GF_HEADER_BYTES 48u
#define GF_SECTION_BYTES 24u
#define GF_WEIGHT_ALIGN 64u
#define GF_MAX_DEPTH 64          /* nesting of result/print operands and argument structures */

enum {
    GF_SEC_META = 1, GF_SEC_STRINGS, GF_SEC_OPS, GF_SEC_REGS, GF_SEC_CONSTS, GF_SEC_INPUTS,
    GF_SEC_GUARDS, GF_SEC_BINDINGS, GF_SEC_CODE, GF_SEC_RESULT, GF_SEC_WEIGHTS,
    GF_SEC_END   /* one past the last id */
};

/* A register bound before each run to a value the function read from outside its arguments. */
typedef struct {
    int reg;
    bool is_tensor;
    int k;                /* tensor: index into g->consts */
    double num;           /* number */
} GfBinding;

typedef struct {
    Graph *g;             /* inputs: the arguments (SRC_ARG) and their parts (SRC_LEAF) only */
    GfBinding *binds;
    int nbinds;
    int nparams;
    char *name;           /* the function's name */
} GraphFile;

/* Writes gf as a file image into w. 0, or -1 with the reason in err. */
int graphfile_write(const GraphFile *gf, Writer *w, char *err, size_t errlen);
/* Reads and verifies a file image; instructions' locations point into src. NULL with the
 * reason in err. `check_sum` false skips the checksum (the bit-flip tests). */
GraphFile *graphfile_read(const uint8_t *data, size_t n, Source *src, bool check_sum, char *err, size_t errlen);
void graphfile_free(GraphFile *gf);

/* export.c: from a static fn compiled for example arguments to a GraphFile (g is taken;
 * vals are its fetched inputs). NULL with the reason in err. */
GraphFile *graphfile_from_compiled(Graph *g, const Value *vals, int nparams, const char *name, char *err,
                                   size_t errlen);

/* model.c: a Model over a GraphFile read by graphfile_read (taken), for the tests that read
 * without the checksum. */
struct Model *model_from_graphfile(GraphFile *gf, const char *name);

#endif
