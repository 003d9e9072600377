/* Buffers as the other binding files use them: made, grown, read as
 * strings, and the collector told about their memory. */
#ifndef AVXBUF_LBUFFER_H
#define AVXBUF_LBUFFER_H

#include "lua/lmodule.h"

/* A range of b as it is now: its length, with its offset in *off, or
 * AVXBUF_NO_RANGE (there is none). Raising an error is allowed. */
typedef size_t (*avxbuf_range)(lua_State *L, buffer *b, void *ctx, size_t *off);
#define AVXBUF_NO_RANGE ((size_t)-1)
/* Pushes the bytes of range(b) as a string and returns 1 (0, and nothing
 * pushed, when there is no range): the range is read once nothing more
 * that can run a finalizer comes before the copy, so the string is bytes
 * b held at one moment. */
int avxbuf_pushrange(lua_State *L, buffer *b, avxbuf_range range, void *ctx);
/* The same for all of b. */
void avxbuf_pushall(lua_State *L, buffer *b);
/* Pushes a userdata of n bytes to build a result in before it becomes a
 * string: made first, so that no buffer pointer is held while it is. */
char *avxbuf_pushscratch(lua_State *L, size_t n);

/* What buf:get(n) takes of b as it is now (n absent unless given): -1
 * when n is refused (the C function raises), for the FFI path. */
long long avxbuf_get_count(const buffer *b, int given, lua_Integer n);

/* Pushes a new buffer of n zero bytes; mt is the metatable's absolute or
 * pseudo-index. */
buffer *avxbuf_pushbuffer(lua_State *L, lmodule *m, int mt, size_t n);
/* Sets the length to n (new bytes zero); arg names n in errors. */
void avxbuf_resize(lua_State *L, lmodule *m, buffer *b, size_t n, int arg);
/* Capacity for need bytes, keeping the first `keep`; runs no Lua code and
 * leaves b unchanged when memory runs out. */
void avxbuf_reserve(lua_State *L, lmodule *m, buffer *b, size_t need, size_t keep);
/* The same for what has no lua_State to raise on (the FFI entries, pack of
 * staged values), keeping b's bytes: grown with the allocator b's module
 * was made with; 0, and b unchanged, when memory runs out (the caller's C
 * function then raises). */
static inline int avxbuf_room(buffer *b, size_t need)
{
  lmodule *m = b->module;
  return need <= b->cap || buffer_grow(&m->stats, m->alloc, m->alloc_ud, b, need, b->len);
}
/* Tells the collector about the buffer memory grown and not given back
 * since last time (src/lua/lbuffer.c); call it first, when no pointer into a buffer is held (finalizers may run).
 * Returns m, the record to go on with; an error once nothing else holds it
 * (lua_close finalized the anchor and the buffers during the step). */
lmodule *avxbuf_pace(lua_State *L, lmodule *m);

#endif
