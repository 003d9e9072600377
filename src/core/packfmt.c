/* string.pack's format language (Lua 5.4 manual, 6.4.2): a table of the
 * options, a reader that compiles them into ops with their size and
 * alignment, and a small cache of compiled formats. */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "core/packfmt.h"

/* How an option's size is given: fixed, the running Lua's integer or
 * number, a number that may follow (with a default), or a number that
 * must follow; SZ_NONE marks a character that is no option. */
enum { SZ_NONE, SZ_FIXED, SZ_LUA_INTEGER, SZ_LUA_NUMBER, SZ_OPTIONAL, SZ_REQUIRED };

/* Indexed by the option's character: one load per option, not a search
 * through a list of them at every option of every unpack. */
static const struct option {
  unsigned char kind, how;
  unsigned char size;   /* fixed size, or the default */
} options[UCHAR_MAX + 1] = {
  ['b'] = { PK_INT, SZ_FIXED, 1 },  ['B'] = { PK_UINT, SZ_FIXED, 1 },
  ['h'] = { PK_INT, SZ_FIXED, sizeof(short) },  ['H'] = { PK_UINT, SZ_FIXED, sizeof(short) },
  ['l'] = { PK_INT, SZ_FIXED, sizeof(long) },  ['L'] = { PK_UINT, SZ_FIXED, sizeof(long) },
  ['j'] = { PK_INT, SZ_LUA_INTEGER, 0 },  ['J'] = { PK_UINT, SZ_LUA_INTEGER, 0 },
  ['T'] = { PK_UINT, SZ_FIXED, sizeof(size_t) },
  ['f'] = { PK_FLOAT, SZ_FIXED, sizeof(float) },  ['d'] = { PK_DOUBLE, SZ_FIXED, sizeof(double) },
  ['n'] = { PK_NUMBER, SZ_LUA_NUMBER, 0 },
  ['i'] = { PK_INT, SZ_OPTIONAL, sizeof(int) },  ['I'] = { PK_UINT, SZ_OPTIONAL, sizeof(int) },
  ['s'] = { PK_STRING, SZ_OPTIONAL, sizeof(size_t) },
  ['c'] = { PK_CHAR, SZ_REQUIRED, 0 },
  ['z'] = { PK_ZSTR, SZ_FIXED, 0 },  ['x'] = { PK_PAD, SZ_FIXED, 1 },
};

void avxbuf_pk_init(avxbuf_pk *h, const char *fmt, avxbuf_pk_lua lua)
{
  h->fmt = fmt;
  h->lua = lua;
  h->little = avxbuf_pk_native_little();
  h->maxalign = 1;
}

static int is_digit(char c) { return c >= '0' && c <= '9'; }

/* Digits at *fmt (advancing it), or dflt when there are none. As
 * string.pack does, reading stops before the number could pass INT_MAX:
 * digits left over are read as options (and refused). */
static size_t read_number(const char **fmt, size_t dflt)
{
  if (!is_digit(**fmt)) return dflt;
  size_t n = 0;
  do {
    n = n * 10 + (size_t)(*(*fmt)++ - '0');
  } while (is_digit(**fmt) && n <= (INT_MAX - 9) / 10);
  return n;
}

/* One option without alignment: 1 with op's kind and size set, 0 for an
 * option that only changes the parser, -1 with c->err set. */
static int read_option(avxbuf_pk *h, avxbuf_pk_op *op, avxbuf_pk_chunk *c)
{
  char ch = *h->fmt++;
  size_t size;
  switch (ch) {
  case ' ': return 0;
  case '<': h->little = 1; return 0;
  case '>': h->little = 0; return 0;
  case '=': h->little = avxbuf_pk_native_little(); return 0;
  case '!':
    size = read_number(&h->fmt, h->lua.maxalign);
    if (size < 1 || size > AVXBUF_PK_MAXINT) goto bad_size;
    h->maxalign = size;
    return 0;
  case 'X': op->kind = PK_ALIGN; op->size = 0; return 1;
  default: break;
  }
  const struct option *o = &options[(unsigned char)ch];
  switch (o->how) {
  case SZ_FIXED:
    size = o->size;
    break;
  case SZ_LUA_INTEGER:
    size = h->lua.integer;
    break;
  case SZ_LUA_NUMBER:
    size = h->lua.number;
    break;
  case SZ_OPTIONAL:
    size = read_number(&h->fmt, o->size);
    if (size < 1 || size > AVXBUF_PK_MAXINT) goto bad_size;
    break;
  case SZ_REQUIRED:
    if (!is_digit(*h->fmt)) {
      snprintf(c->err, sizeof c->err, "missing size for format option 'c'");
      return -1;
    }
    size = read_number(&h->fmt, 0);
    break;
  default:
    snprintf(c->err, sizeof c->err, "invalid format option '%c'", ch);
    return -1;
  }
  op->kind = o->kind;
  op->size = size;
  return 1;
bad_size:
  snprintf(c->err, sizeof c->err, "integral size (%zu) out of limits [1,%d]", size, AVXBUF_PK_MAXINT);
  return -1;
}

/* The next op, with its alignment: 1, 0 at the end, -1 with c->err. */
static int next_op(avxbuf_pk *h, avxbuf_pk_op *op, avxbuf_pk_chunk *c)
{
  int r;
  do {
    if (*h->fmt == '\0') return 0;
    r = read_option(h, op, c);
  } while (r == 0);
  if (r < 0) return -1;
  op->little = (unsigned char)h->little;
  size_t align = op->size;
  if (op->kind == PK_ALIGN) {   /* X: the next option gives the alignment, and is used up */
    avxbuf_pk_op next = { 0, PK_CHAR, 0, 1 };
    if (*h->fmt != '\0' && read_option(h, &next, c) < 0) return -1;
    if (next.kind == PK_CHAR || next.size == 0) {
      snprintf(c->err, sizeof c->err, "invalid next option for option 'X'");
      return -1;
    }
    align = next.size;
  }
  op->align = 1;
  if (align > 1 && op->kind != PK_CHAR) {
    if (align > h->maxalign) align = h->maxalign;
    if ((align & (align - 1)) != 0) {
      snprintf(c->err, sizeof c->err, "format asks for alignment not power of 2");
      return -1;
    }
    op->align = (unsigned char)align;
  }
  return 1;
}

void avxbuf_pk_compile(avxbuf_pk *h, avxbuf_pk_chunk *c)
{
  int r = 1;
  c->n = 0;
  c->bad = 0;
  while (c->n < AVXBUF_PK_CHUNK && (r = next_op(h, &c->op[c->n], c)) > 0) c->n++;
  c->bad = r < 0;
  c->more = r > 0 && *h->fmt != '\0';
}

void avxbuf_pk_cache_init(avxbuf_pk_cache *cache, avxbuf_pk_lua lua)
{
  cache->lua = lua;
  for (int i = 0; i < AVXBUF_PK_CACHE_SLOTS; i++) cache->slot[i].len = AVXBUF_PK_CACHE_LEN + 1;
}

const avxbuf_pk_chunk *avxbuf_pk_cached(avxbuf_pk_cache *cache, const char *fmt, size_t len)
{
  if (len > AVXBUF_PK_CACHE_LEN) return NULL;
  /* Lua interns short strings, so a format written in the source has one
   * address; the bytes decide whether it is the same format. */
  uintptr_t a = (uintptr_t)fmt;
  avxbuf_pk_slot *s = &cache->slot[((a >> 4) ^ (a >> 9)) % AVXBUF_PK_CACHE_SLOTS];
  if (s->len == len && memcmp(s->fmt, fmt, len) == 0) return &s->c;
  avxbuf_pk h;
  avxbuf_pk_init(&h, fmt, cache->lua);
  avxbuf_pk_compile(&h, &s->c);
  if (s->c.more) {
    s->len = AVXBUF_PK_CACHE_LEN + 1;
    return NULL;
  }
  memcpy(s->fmt, fmt, len);
  s->len = len;
  return &s->c;
}
