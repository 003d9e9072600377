/* string.pack's format language (Lua 5.4 manual, 6.4.2): a table of the
 * options, and a reader that turns the next one into an item with its size
 * and the padding that aligns it. */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include "lua.h"     /* for the sizes of lua_Integer and lua_Number only */
#include "packfmt.h"

/* The native alignment: that of the most demanding of these types, as
 * string.pack takes it. */
#define NATIVE_MAXALIGN _Alignof(union { double d; void *p; lua_Integer i; lua_Number n; })

/* How an option's size is given: fixed, a number that may follow (with a
 * default), or a number that must follow; SZ_NONE marks a character that
 * is no option. */
enum { SZ_NONE, SZ_FIXED, SZ_OPTIONAL, SZ_REQUIRED };

/* Indexed by the option's character: one load per option (a search through
 * a list of them was a quarter of an unpack's instructions: callgrind). */
static const struct option {
  unsigned char kind, how;
  unsigned char size;   /* fixed size, or the default */
} options[UCHAR_MAX + 1] = {
  ['b'] = { PK_INT, SZ_FIXED, 1 },  ['B'] = { PK_UINT, SZ_FIXED, 1 },
  ['h'] = { PK_INT, SZ_FIXED, sizeof(short) },  ['H'] = { PK_UINT, SZ_FIXED, sizeof(short) },
  ['l'] = { PK_INT, SZ_FIXED, sizeof(long) },  ['L'] = { PK_UINT, SZ_FIXED, sizeof(long) },
  ['j'] = { PK_INT, SZ_FIXED, sizeof(lua_Integer) },  ['J'] = { PK_UINT, SZ_FIXED, sizeof(lua_Integer) },
  ['T'] = { PK_UINT, SZ_FIXED, sizeof(size_t) },
  ['f'] = { PK_FLOAT, SZ_FIXED, sizeof(float) },  ['d'] = { PK_DOUBLE, SZ_FIXED, sizeof(double) },
  ['n'] = { PK_NUMBER, SZ_FIXED, sizeof(lua_Number) },
  ['i'] = { PK_INT, SZ_OPTIONAL, sizeof(int) },  ['I'] = { PK_UINT, SZ_OPTIONAL, sizeof(int) },
  ['s'] = { PK_STRING, SZ_OPTIONAL, sizeof(size_t) },
  ['c'] = { PK_CHAR, SZ_REQUIRED, 0 },
  ['z'] = { PK_ZSTR, SZ_FIXED, 0 },  ['x'] = { PK_PAD, SZ_FIXED, 1 },
  [' '] = { PK_NOP, SZ_FIXED, 0 },
};

void avxbuf_pk_init(avxbuf_pk *h, const char *fmt)
{
  h->fmt = fmt;
  h->little = 1;   /* every architecture avxbuf builds for is little-endian */
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

/* One option without alignment: kind and size, or -1 with *err. */
static int read_option(avxbuf_pk *h, avxbuf_pk_item *item, const char **err, char *errbuf)
{
  char c = *h->fmt++;
  switch (c) {
  case '<': h->little = 1; item->kind = PK_NOP; item->size = 0; return 1;
  case '>': h->little = 0; item->kind = PK_NOP; item->size = 0; return 1;
  case '=': h->little = 1; item->kind = PK_NOP; item->size = 0; return 1;
  case '!': {
    size_t a = read_number(&h->fmt, NATIVE_MAXALIGN);
    if (a < 1 || a > AVXBUF_PK_MAXINT) goto bad_size_a;
    h->maxalign = a;
    item->kind = PK_NOP;
    item->size = 0;
    return 1;
  bad_size_a:
    snprintf(errbuf, 64, "integral size (%zu) out of limits [1,%d]", a, AVXBUF_PK_MAXINT);
    *err = errbuf;
    return -1;
  }
  case 'X': item->kind = PK_ALIGN; item->size = 0; return 1;
  default: break;
  }
  const struct option *o = &options[(unsigned char)c];
  if (o->how != SZ_NONE) {
    item->kind = (avxbuf_pk_kind)o->kind;
    item->size = o->size;
    if (o->how == SZ_OPTIONAL) {
      item->size = read_number(&h->fmt, o->size);
      if (item->size < 1 || item->size > AVXBUF_PK_MAXINT) {
        snprintf(errbuf, 64, "integral size (%zu) out of limits [1,%d]", item->size, AVXBUF_PK_MAXINT);
        *err = errbuf;
        return -1;
      }
    } else if (o->how == SZ_REQUIRED) {
      if (!is_digit(*h->fmt)) { *err = "missing size for format option 'c'"; return -1; }
      item->size = read_number(&h->fmt, 0);
    }
    return 1;
  }
  snprintf(errbuf, 64, "invalid format option '%c'", c);
  *err = errbuf;
  return -1;
}

int avxbuf_pk_next(avxbuf_pk *h, size_t pos, avxbuf_pk_item *item, const char **err, char errbuf[64])
{
  if (*h->fmt == '\0') return 0;
  if (read_option(h, item, err, errbuf) < 0) return -1;
  size_t align = item->size;
  if (item->kind == PK_ALIGN) {   /* X: the next option gives the alignment, and is used up */
    avxbuf_pk_item next;
    int have = *h->fmt != '\0';
    if (have && read_option(h, &next, err, errbuf) < 0) return -1;
    if (!have || next.kind == PK_CHAR || next.size == 0) {
      *err = "invalid next option for option 'X'";
      return -1;
    }
    align = next.size;
  }
  item->padding = 0;
  if (align > 1 && item->kind != PK_CHAR) {
    if (align > h->maxalign) align = h->maxalign;
    if ((align & (align - 1)) != 0) { *err = "format asks for alignment not power of 2"; return -1; }
    item->padding = (align - (pos & (align - 1))) & (align - 1);
  }
  return 1;
}
