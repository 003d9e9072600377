/* The format language of Lua 5.4's string.pack (as 5.3's), compiled into ops: no Lua
 * state here (lpack.c does the values), so the parser can be fuzzed alone.
 * The sizes of the native types are this build's; those of the Lua's own
 * (lua_Integer, lua_Number) are the running Lua's, which the binding gives
 * (avxbuf_pk_lua), as string.pack uses them. */
#ifndef AVXBUF_PACKFMT_H
#define AVXBUF_PACKFMT_H

#include <stddef.h>
#include <stdint.h>

typedef enum avxbuf_pk_kind {
  PK_INT,      /* b h i[n] l j: signed integer of `size` bytes */
  PK_UINT,     /* B H I[n] L J T */
  PK_FLOAT,    /* f */
  PK_DOUBLE,   /* d */
  PK_NUMBER,   /* n: lua_Number */
  PK_CHAR,     /* c[n]: a string of exactly `size` bytes */
  PK_STRING,   /* s[n]: a string after its length in `size` bytes */
  PK_ZSTR,     /* z: a zero-terminated string */
  PK_PAD,      /* x: one zero byte */
  PK_ALIGN     /* X op: padding to op's alignment, no value */
} avxbuf_pk_kind;

/* The host's byte order, which '=' and a format's start select. */
static inline int avxbuf_pk_native_little(void)
{
  const union { int i; char c; } probe = { 1 };
  return probe.c == 1;
}

/* The running Lua's sizes that options take (lstrlib.c): 'j' and 'J' its
 * lua_Integer's, 'n' its lua_Number's, and '!' with no number the
 * alignment of the most demanding of its types and the C ones. */
typedef struct avxbuf_pk_lua {
  unsigned char integer, number, maxalign;
} avxbuf_pk_lua;

/* The parser's place in a format. */
typedef struct avxbuf_pk {
  const char *fmt;     /* what is left of the format */
  int little;          /* byte order from here on */
  size_t maxalign;     /* the ! setting */
  avxbuf_pk_lua lua;
} avxbuf_pk;

/* One option that takes bytes. Options that take none and no value (space
 * < > = !) only change the parser. */
typedef struct avxbuf_pk_op {
  size_t size;           /* bytes of the value (PK_STRING: of the length before it) */
  unsigned char kind;    /* avxbuf_pk_kind */
  unsigned char little;  /* byte order */
  unsigned char align;   /* the position is padded to a multiple of this (1: no padding) */
} avxbuf_pk_op;

/* Ops compiled in one go: a whole format when it is short, or the next
 * part of a long one. */
#define AVXBUF_PK_CHUNK 16
typedef struct avxbuf_pk_chunk {
  int n;                /* ops */
  int more;             /* the format goes on after them */
  int bad;              /* the format is wrong after them: err says how */
  char err[64];
  avxbuf_pk_op op[AVXBUF_PK_CHUNK];
} avxbuf_pk_chunk;

/* The largest integer size (string.pack's limit). */
#define AVXBUF_PK_MAXINT 16

/* Padding before an op at byte pos (counted from where alignment is). */
#define AVXBUF_PK_PADDING(op, pos) (((size_t)(op)->align - ((pos) & ((op)->align - 1u))) & ((op)->align - 1u))

/* The bytes op takes at the least from byte pos on (z: its zero), which
 * unpack counts as missing past short data. */
static inline size_t avxbuf_pk_least(const avxbuf_pk_op *op, size_t pos)
{
  return AVXBUF_PK_PADDING(op, pos) + (op->kind == PK_ZSTR ? 1 : op->size);
}

/* The integers pack takes for op, as string.pack: for an integer of fewer
 * bytes than the Lua's (szint), lo <= n < hi; 0 for any other op. */
static inline int avxbuf_pk_int_limits(const avxbuf_pk_op *op, size_t szint, long long *lo, unsigned long long *hi)
{
  if ((op->kind != PK_INT && op->kind != PK_UINT) || op->size >= szint) return 0;
  int bits = (int)op->size * 8;
  *lo = op->kind == PK_INT ? -(1ll << (bits - 1)) : 0;
  *hi = op->kind == PK_INT ? 1ull << (bits - 1) : 1ull << bits;
  return 1;
}

/* The longest string pack takes for a c or s op (s: what its length's
 * bytes can say), as string.pack. */
static inline size_t avxbuf_pk_str_most(const avxbuf_pk_op *op)
{
  if (op->kind == PK_CHAR) return op->size;
  return op->size >= sizeof(size_t) ? SIZE_MAX : ((size_t)1 << (op->size * 8)) - 1;
}

void avxbuf_pk_init(avxbuf_pk *h, const char *fmt, avxbuf_pk_lua lua);

/* The next ops from h, until AVXBUF_PK_CHUNK of them, the end, or an
 * error. */
void avxbuf_pk_compile(avxbuf_pk *h, avxbuf_pk_chunk *c);

/* Formats compiled before, by the address and bytes of the format: a loop
 * packing the same records parses its format once, not at every call. */
#define AVXBUF_PK_CACHE_SLOTS 8
#define AVXBUF_PK_CACHE_LEN 32
typedef struct avxbuf_pk_slot {
  size_t len;   /* > AVXBUF_PK_CACHE_LEN: empty */
  char fmt[AVXBUF_PK_CACHE_LEN];
  avxbuf_pk_chunk c;
} avxbuf_pk_slot;
typedef struct avxbuf_pk_cache {
  avxbuf_pk_lua lua;   /* the sizes its formats were compiled with */
  avxbuf_pk_slot slot[AVXBUF_PK_CACHE_SLOTS];
} avxbuf_pk_cache;

void avxbuf_pk_cache_init(avxbuf_pk_cache *cache, avxbuf_pk_lua lua);

/* The whole of format fmt (len bytes) compiled, from the cache or compiled
 * into it; NULL when it is longer than AVXBUF_PK_CACHE_LEN or more than a
 * chunk (compile it then). */
const avxbuf_pk_chunk *avxbuf_pk_cached(avxbuf_pk_cache *cache, const char *fmt, size_t len);

#endif
