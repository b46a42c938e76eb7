/* infer.h - shape and dtype inference shared by the kernels and the static compiler. */
#ifndef TSL_INFER_H
#define TSL_INFER_H
#include <stdbool.h>
#include "tops.h"

/* The compute (*ct) and result (*rt) dtypes of an elementwise call. */
int ew_types(const OpCall *c, DType *ct, DType *rt);

const char *op_symbol(OpCode op);
int shape_matmul(const Shape *a, DType da, const Shape *b, DType db, Shape *out, DType *dt);
int axes_mask(int ndim, const int *axes, int n, const char *name, bool *mask);
DType reduce_dtype(OpCode op, DType in);
int shape_reduce(OpCode op, const Shape *a, DType da, const int *axes, int n, bool keepdims, Shape *out, DType *dt);
int shape_softmax(const Shape *a, DType da, int axis, bool log, int *ax, DType *dt);
int norm_axis(int axis, int ndim, const char *name);
int shape_reshape(const Shape *a, const Shape *req, Shape *out);
int shape_transpose(const Shape *a, const int *perm_in, int n, int *perm, Shape *out);
int shape_expand_dims(const Shape *a, int axis, Shape *out);
int shape_squeeze(const Shape *a, const int *axes, int n, Shape *out);
int shape_concat(const Shape *const *s, const DType *dts, int n, int axis, Shape *out, DType *dt);
int shape_stack(const Shape *const *s, const DType *dts, int n, int axis, Shape *out, DType *dt);
int shape_broadcast_to(const Shape *a, const Shape *s);
/* The shape an assigned value takes for a slot of rank `ndim`: its leading axes of length 1
 * beyond that rank dropped, as NumPy's a[0] = ones([1, 3]) does. */
Shape shape_assigned_value(const Shape *v, int ndim);
/* Result shape of NumPy indexing, with every check the index's shapes and known integers
 * allow, in the order the index itself makes them (index arrays' entries and integers known
 * only at run time are checked when it runs). -1: the index fails with op_error()'s message;
 * INFER_INDEX_UNDECIDED: it fails, but an integer known only at run time comes first in
 * that order (a number is made an integer before every check), so which error it gives is
 * decided only when it runs. */
#define INFER_INDEX_UNDECIDED (-2)
int infer_index(const Shape *a, const IndexItem *idx, int n, Shape *out);

#endif
