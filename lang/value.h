/* value.h - TSL values and heap objects.
 *
 * A Value is a 16-byte tagged union: nil, bool and number are unboxed; everything else
 * points to a reference-counted object (strings, lists, dicts, functions, cells) or to
 * a Tensor (which the ops layer reference-counts itself).
 *
 * Ownership rules (read these before touching a Value):
 *  - A Value stored in a variable slot, list, dict, cell or closure OWNS one reference.
 *  - Functions named *_new / val_* constructors and every eval_* function return an
 *    OWNED value: the caller must val_release it or store it.
 *  - Arguments passed to functions are BORROWED unless the name says "take".
 *  - list_push / dict_set / cell stores TAKE nothing: they retain what they store.
 *  - VAL_ERR is a marker, not a value: it owns nothing and means "an error is pending
 *    in the interpreter"; VAL_UNDEF marks an unbound variable slot.
 * Every object sits on one of two lists (containers, the rest). Reference cycles (a dict that holds itself, a
 * closure stored in the dict it captures) are reclaimed by the cycle collector (gc.c),
 * which relies on every holder of a pointer to an object counting it in rc; whatever is
 * left at exit is swept by val_free_all. */
#ifndef TSL_VALUE_H
#define TSL_VALUE_H
#include <stdbool.h>
#include <stdint.h>
#include "tensor.h"
#include "ast.h"

typedef enum {
    VAL_NIL, VAL_BOOL, VAL_NUM, VAL_STR, VAL_LIST, VAL_DICT, VAL_FUNC,
    VAL_CELL,      /* internal: a captured local's slot holds its cell */
    VAL_TENSOR, VAL_UNDEF, VAL_ERR
} ValType;

typedef enum { OBJ_STR, OBJ_LIST, OBJ_DICT, OBJ_CLOSURE, OBJ_BUILTIN, OBJ_CELL } ObjKind;

typedef struct Obj {
    int rc;
    ObjKind kind;
    int gc_refs;               /* cycle collector scratch (gc.c) */
    uint32_t marks;            /* OBJ_PRINTING while printing is inside it; gc.c's marks */
    struct Obj *next, *prev;   /* the containers list or the other objects list (value.c) */
} Obj;

#define OBJ_PRINTING 1u    /* fmt_value is inside this container */
#define OBJ_LIFTING 2u     /* the static compiler is lifting this container (vm/compile/cvalue.c) */
#define OBJ_GC_REACHABLE 4u  /* the cycle collector reached it from a root (gc.c) */
#define OBJ_COMPARING 8u   /* --verify-static is comparing inside this container (vm/static.c) */
#define OBJ_DETACHED 16u   /* a string of a loaded graph: on no interpreter's object list, shared
                              by the threads running the graph, so never retained (vm/graph.c) */

typedef struct Value {
    int64_t type;   /* a ValType, held in a whole word: the compiler then moves a Value as two plain
                       words (a 4-byte tag with padding got merged and split on every copy) */
    union {
        bool b;
        double n;
        Obj *o;
        Tensor *t;
    } as;
} Value;

typedef struct {
    Obj h;
    int len;          /* bytes */
    int cap;          /* bytes chars[] has room for (> len: spare room to append in place) */
    int ncp;          /* code points; == len when the string is all ASCII (O(1) indexing) */
    int cur_cp, cur_byte;   /* the last code point looked up and its byte offset, so walking a
                               non-ASCII string in order is O(1) a step */
    uint32_t hash;    /* FNV-1a of the bytes: appending continues it */
    char chars[];     /* NUL-terminated */
} ObjString;

typedef struct {
    Obj h;
    int len, cap;
    Value *items;
} ObjList;

typedef struct {
    ObjString *key;
    Value val;
} DictEntry;

typedef struct {
    Obj h;
    int len, cap;         /* entries, in insertion order */
    DictEntry *entries;
    int32_t *index;       /* open-addressing table of entry positions, -1 empty */
    int index_cap;        /* power of two */
} ObjDict;

typedef struct {
    Obj h;
    Value v;
} ObjCell;

struct Module;
typedef struct ObjClosure {
    Obj h;
    FnProto *proto;
    struct Module *module;    /* globals this function reads */
    ObjCell **upvals;
} ObjClosure;

struct Interp;
struct CallArgs;
typedef Value (*BuiltinFn)(struct Interp *I, struct CallArgs *a);
struct BuiltinDef;
typedef struct {
    Obj h;
    const char *name;
    BuiltinFn fn;
    const struct BuiltinDef *def;   /* its row (lang/builtins.h), or NULL: an op, a loaded graph */
    const struct BuiltinParams *params;   /* its row's parameters, parsed once (builtin_bind) */
    Value bound;    /* owned: grad(f)'s f (nil for the plain built-ins) */
    void *udata;    /* owned through udata_free: a loaded model's state (vm/file/model.c) */
    void (*udata_free)(void *udata);
} ObjBuiltin;

#define NIL_VAL ((Value){VAL_NIL, {.n = 0}})
#define UNDEF_VAL ((Value){VAL_UNDEF, {.n = 0}})
#define ERR_VAL ((Value){VAL_ERR, {.n = 0}})
#define BOOL_VAL(x) ((Value){VAL_BOOL, {.b = (x)}})
#define NUM_VAL(x) ((Value){VAL_NUM, {.n = (x)}})
#define OBJ_VAL(ty, p) ((Value){(ty), {.o = (Obj *)(p)}})
#define TENSOR_VAL(p) ((Value){VAL_TENSOR, {.t = (p)}})

#define IS_ERR(v) ((v).type == VAL_ERR)
#define IS_NUM(v) ((v).type == VAL_NUM)
#define IS_STR(v) ((v).type == VAL_STR)
#define IS_LIST(v) ((v).type == VAL_LIST)
#define IS_DICT(v) ((v).type == VAL_DICT)
#define IS_TENSOR(v) ((v).type == VAL_TENSOR)
#define IS_FUNC(v) ((v).type == VAL_FUNC)
#define AS_STR(v) ((ObjString *)(v).as.o)
#define AS_LIST(v) ((ObjList *)(v).as.o)
#define AS_DICT(v) ((ObjDict *)(v).as.o)
#define AS_CLOSURE(v) ((ObjClosure *)(v).as.o)
#define AS_BUILTIN(v) ((ObjBuiltin *)(v).as.o)

static inline bool val_is_heap(Value v) { return v.type >= VAL_STR && v.type <= VAL_TENSOR; }

void val_obj_free(Obj *o);
static inline Value val_retain(Value v) {
    if (v.type == VAL_TENSOR) tensor_retain(v.as.t);
    else if (val_is_heap(v)) v.as.o->rc++;
    return v;
}
static inline void val_release(Value v) {
    if (v.type == VAL_TENSOR) tensor_release(v.as.t);
    else if (val_is_heap(v) && --v.as.o->rc == 0) val_obj_free(v.as.o);
}

/* Objects. */
ObjString *str_new(const char *s, int len);
/* A string of len bytes with room for cap (>= len) without reallocating. */
ObjString *str_new_room(const char *s, int len, int cap);
/* Appends n bytes in place: only for a string nothing else can see, with cap - len >= n. */
void str_append_in_place(ObjString *o, const char *s, int n);
Value val_str(const char *s, int len);
Value val_cstr(const char *s);
ObjList *list_new(int cap);
void list_push(ObjList *l, Value v);
ObjDict *dict_new(void);
/* Returns a pointer to the stored value, or NULL. */
Value *dict_get(ObjDict *d, const char *key, int len);
void dict_set(ObjDict *d, ObjString *key, Value v);
void dict_set_cstr(ObjDict *d, const char *key, Value v);
/* Removes key (false when missing); *out takes its value, owned by the caller. */
bool dict_remove(ObjDict *d, const char *key, int len, Value *out);
void dict_truncate(ObjDict *d, int n);   /* keeps the first n entries (--verify-static's undo) */
ObjCell *cell_new(Value v);
ObjClosure *closure_new(FnProto *p, struct Module *m);
ObjBuiltin *builtin_new(const char *name, BuiltinFn fn);

/* The objects of one interpreter: two lists (containers: lists, dicts, closures, cells,
 * what can form a cycle; the rest: strings, built-ins) and the cycle collector's
 * counters. Each Interp has one; value.c works on the current interpreter's heap
 * (interp_current()), or on the thread's own default heap when none is entered (unit
 * tests that build values without an interpreter). */
typedef struct ObjHeap {
    Obj objects, containers;  /* sentinels */
    long gc_allocs;           /* containers made since the last collection */
    long gc_threshold;        /* a collection is due past this many */
    long live_containers;     /* on the containers list */
    bool gc_due;
    Obj *free_pending;        /* frees deferred past FREE_MAX_DEPTH (value.c) */
    int free_depth;
} ObjHeap;
void val_heap_init(ObjHeap *h);
ObjHeap *val_heap(void);   /* the current heap */
/* After an out-of-memory unwind: clears the marks a walk that never finished left set. */
void val_heap_clear_marks(void);

/* Sweep every object left in the current heap (at exit, so leak checkers stay quiet). */
void val_free_all(void);

/* For the cycle collector (gc.c): the sentinel of the list of all containers (lists,
 * dicts, closures, cells); moving a container to another list; clearing its contents;
 * freeing the storage of one whose contents are cleared; and the end of a collection,
 * whose live containers and their slots (what the next walks) set when it is due. */
Obj *val_containers_head(void);
void val_obj_move(Obj *o, Obj *list);
void val_obj_clear(Obj *o);
void val_obj_release_storage(Obj *o);
void val_gc_done(long work);

const char *val_type_name(Value v);
bool val_truthy_simple(Value v);       /* non-tensor truthiness */

/* Formatting (print/str): appends to a growable buffer. */
typedef struct {
    char *s;
    size_t len, cap;
} StrBuf;
void sb_putn(StrBuf *b, const char *s, size_t n);
void sb_puts(StrBuf *b, const char *s);
void sb_printf(StrBuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sb_free(StrBuf *b);
void fmt_number(StrBuf *b, double x);
/* quote: strings inside containers are quoted. A container inside itself prints [...] /
 * {...}; nesting past 200 levels prints "...". Text longer than TSL_MAX_TEXT stops the
 * walk: false (the buffer holds a prefix); fmt_value_in then has an error pending in I,
 * as it does when I is interrupted (Ctrl-C, --timeout) during the walk. */
#define TSL_MAX_TEXT ((size_t)1 << 26)
bool fmt_value(StrBuf *b, Value v, bool quote);
bool fmt_value_in(struct Interp *I, StrBuf *b, Value v, bool quote);

/* Deep equality as spec section 3 ('==' on non-tensors; tensors inside containers use equal).
 * Terminates on cycles (a pair of containers met again compares equal there) and visits
 * each pair of containers once, so shared structure costs polynomial time. val_equal_in
 * polls I for Ctrl-C and the limits: 1 equal, 0 not, -1 error pending in I. */
bool val_equal(Value a, Value b);
int val_equal_in(struct Interp *I, Value a, Value b);

#endif
