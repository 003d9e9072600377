/* Buffers as the other binding files use them: made, grown, read as
 * strings, and the collector told about their memory. */
#ifndef AVXBUF_LBUFFER_H
#define AVXBUF_LBUFFER_H

#include "lmodule.h"

/* Pushes bytes [off, off + n) of b as a string and returns 1, or returns 0
 * and pushes nothing when a finalizer run on the way has changed b's data
 * or length (its generation): the caller reads its range again and calls
 * again. The range must be checked just before the call. */
int avxbuf_pushbytes(lua_State *L, buffer *b, size_t off, size_t n);
/* Pushes a userdata of n bytes to build a result in before it becomes a
 * string: made first, so that no buffer pointer is held while it is. */
char *avxbuf_pushscratch(lua_State *L, size_t n);

/* Pushes a new buffer of n zero bytes; mt is the metatable's absolute or
 * pseudo-index. */
buffer *avxbuf_pushbuffer(lua_State *L, lmodule *m, int mt, size_t n);
/* Sets the length to n (new bytes zero); arg names n in errors. */
void avxbuf_resize(lua_State *L, lmodule *m, buffer *b, size_t n, int arg);
/* Capacity for need bytes, keeping the first `keep`; runs no Lua code and
 * leaves b unchanged when memory runs out. */
void avxbuf_reserve(lua_State *L, lmodule *m, buffer *b, size_t need, size_t keep);
/* The same without a Lua state, with the allocator given: 0 when memory
 * runs out (b unchanged). */
int avxbuf_grow(lmodule *m, lua_Alloc alloc, void *ud, buffer *b, size_t need, size_t keep);
/* Tells the collector about the buffer memory allocated since last time;
 * call it last, when no pointer into a buffer is held (finalizers may run). */
void avxbuf_pace(lua_State *L, lmodule *m);

#endif
