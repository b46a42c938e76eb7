/* opargs.h - from the language's values to an op call (ops/opcall.h).
 *
 * Eager built-ins and the static compiler share these, so a call to an op binds its
 * arguments, converts its attributes and words its errors the same way in both modes. */
#ifndef TSL_OPARGS_H
#define TSL_OPARGS_H
#include "interp.h"
#include "opcall.h"

/* Attributes at their defaults (nil axes, no dtype...). Fields no parameter of op uses are
 * left as they are: zero the struct first where byte-equal attributes matter. */
void opargs_attrs_init(OpCode op, OpAttrs *at);
/* The op a bound call runs: op itself, or the row that one of its choices stands for
 * (gelu(x, approximate="tanh") runs gelu_tanh), at then reset to that row's defaults. */
OpCode opargs_variant(OpCode op, OpAttrs *at);
/* Sets parameter p of op (an attribute, not an operand) from v; UNDEF_VAL leaves the
 * default. false with the error set in I. */
bool opargs_attr(Interp *I, OpCode op, int p, Value v, OpAttrs *at);
/* Whether v may stand for operand parameter p (numbers where a number is wanted...);
 * false with the error set. Values that make tensors are converted later. */
bool opargs_check_operand(Interp *I, OpCode op, int p, Value v);
/* The value argument `which` (from op_bind) stands for: positional, keyword or UNDEF_VAL. */
Value opargs_value(const CallArgs *a, int which);

/* Calls op eagerly with a built-in's arguments: numbers in and out for F_NUM ops on
 * numbers, else tensors (a list for several results). */
Value interp_call_op(Interp *I, OpCode op, CallArgs *a);

#endif
