/* The operations a plan picks a kernel for, one numbering for avxbuf.kernel(),
 * decide()'s picks, avxbuf.measure and bench/csweep.c. Lua-free. */
#ifndef AVXBUF_OP_H
#define AVXBUF_OP_H

typedef enum avxbuf_op { OP_COPY, OP_ZERO, OP_FILL, OP_FIND, OP_COUNT } avxbuf_op;

/* "copy", "zero", "fill", "find", then NULL (as luaL_checkoption takes a
 * list); in src/core/dispatch.c. */
extern const char *const avxbuf_op_names[OP_COUNT + 1];

#endif
