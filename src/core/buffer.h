/* The buffer and its rules, without Lua: growth and compaction, consuming
 * from the front, the length, the generation, and the reads the iterators
 * step by (a line, a plain search). The Lua binding (src/lua/l*.c) and the FFI
 * path's entries (src/luajit/lluajit.c, which lua/avxbuf/ffi.lua calls) both call
 * these: a rule is written here once. */
#ifndef AVXBUF_BUFFER_H
#define AVXBUF_BUFFER_H

#include <stddef.h>
#include <stdint.h>
#include "core/dispatch.h"

#define BUFFER_ALIGN 64

/* Largest buffer: lengths, indices and their sums stay exact in lua_Integer
 * (and in a double, for Lua 5.1/5.2), and twice it fits in size_t. */
#if SIZE_MAX > 0xFFFFFFFFu
#define MAX_LENGTH ((size_t)1 << 48)
#else
#define MAX_LENGTH ((size_t)1 << 30)
#endif

/* The buffer userdata. Its data lives in a block from the Lua state's
 * allocator, so that growth can move it and free() can return it at once.
 * lua/avxbuf/ffi.lua declares the fields up to module (len and cap as
 * int64_t, the same layout only where size_t has 64 bits; it checks the
 * offsets src/luajit/lluajit.c gives it) and reads them; it writes gen by
 * one step after each plain move it makes (buffer_wrote's rule:
 * docs/luajit.md says why that is safe there).
 *
 * A stream consumes from the front (skip, get, unpack without an index:
 * docs/streams.md) by moving data forward: data, len and cap always mean
 * the first unread byte, the unread bytes and the room from data, so
 * every index-based method sees the unread bytes as 1..#buf. The bytes
 * consumed lie between the block's aligned start and data
 * (buffer_consumed); only growth, reset and release look at them. */
typedef struct buffer {
  uintptr_t cookie;      /* its own address plus &avxbuf_cookie_key */
  size_t len;
  unsigned char *data;   /* never NULL; 64-byte aligned until bytes are consumed */
  size_t cap;            /* bytes usable at data */
  uint32_t gen;          /* changes whenever data, cap, len or a byte within len */
                         /* may (buffer_wrote) */
  void *block;           /* what the allocator returned (NULL: nothing) */
  size_t block_size;
  struct lmodule *module;   /* whose plan copy, zero and fill use; NULL once collected */
} buffer;

/* What growth tells its owner (the module record: src/lua/lmodule.h). */
typedef struct buffer_stats {
  size_t unpaced;       /* block bytes allocated, less those freed, since the */
                        /* collector was last told (src/lua/lbuffer.c) */
  size_t held;          /* bytes in buffers' blocks now */
  size_t compactions;   /* unread bytes moved to a block's base: times, and */
  size_t compacted;     /* bytes (avxbuf.compactions(), for the specs) */
} buffer_stats;

/* lua_Alloc's contract, without Lua's header. */
typedef void *(*buffer_alloc)(void *ud, void *ptr, size_t osize, size_t nsize);

/* The bytes consumed from the front since the data last started at the
 * block's aligned start: data is that start plus them (derived, not
 * stored, so that nothing else has to keep it in step). */
static inline size_t buffer_consumed(const buffer *b)
{
  if (b->block == NULL) return 0;
  uintptr_t base = ((uintptr_t)b->block + BUFFER_ALIGN - 1) & ~(uintptr_t)(BUFFER_ALIGN - 1);
  return (size_t)((uintptr_t)b->data - base);
}

/* At most n (>= 0) of the bytes b has now: what get(n) and skip(n) take. */
static inline size_t buffer_upto(const buffer *b, unsigned long long n)
{
  return n < b->len ? (size_t)n : b->len;
}

/* Consumes n <= len bytes from the front: data moves on, nothing moves. */
static inline void buffer_consume(buffer *b, size_t n)
{
  b->data += n;
  b->cap -= n;
  b->len -= n;
  b->gen++;
}

/* Bytes within the length changed, or may change through a pointer handed
 * out (ref, the C API's tobuffer): the generation moves on, so that what
 * was read ahead of them (LuaJIT's split takes 64 separators at a time,
 * lua/avxbuf/ffi.lua) is read again. */
static inline void buffer_wrote(buffer *b)
{
  b->gen++;
}

static inline void buffer_setlen(buffer *b, size_t n)
{
  b->len = n;
  b->gen++;
}

/* Room for need bytes (need <= MAX_LENGTH), keeping the first `keep`
 * (b->len, or more for bytes written but not yet counted): the first block
 * is exact, later ones at least double, and bytes consumed from the front
 * make room by compaction first. Runs no Lua code; 0 when the allocator
 * fails, the buffer unchanged; 1 when there was room or it was made (the
 * generation then moved on by one). */
int buffer_grow(buffer_stats *st, buffer_alloc alloc, void *ud, buffer *b, size_t need, size_t keep);

/* The line of b from offset off: -1 when off is at or past the end; else
 * whether a newline ends it (1) or the end of the bytes does (0), with its
 * length, the newline left out, in *n. */
int buffer_line(const buffer *b, size_t off, size_t *n);

/* The first (reverse: the last) occurrence of needle (m >= 1 bytes) in the
 * n bytes of b from offset off, with the find kernel plan p picks for n
 * bytes, or NULL: find's, rfind's and split's plain search. */
const unsigned char *buffer_search(const avxbuf_plan *p, const buffer *b, size_t off, size_t n,
                                   const unsigned char *needle, size_t m, int reverse);

#endif
