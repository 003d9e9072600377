/* The format language of Lua 5.3's string.pack, parsed one item at a time:
 * no Lua state here (lpack.c does the values), so the parser can be fuzzed
 * alone. The sizes of the native types are this build's, as string.pack
 * uses the running Lua's. */
#ifndef AVXBUF_PACKFMT_H
#define AVXBUF_PACKFMT_H

#include <stddef.h>

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
  PK_ALIGN,    /* X op: padding to op's alignment, no value */
  PK_NOP       /* space < > = ![n]: no bytes, no value */
} avxbuf_pk_kind;

typedef struct avxbuf_pk {
  const char *fmt;     /* what is left of the format */
  int little;          /* byte order from here on */
  size_t maxalign;     /* the ! setting */
} avxbuf_pk;

typedef struct avxbuf_pk_item {
  avxbuf_pk_kind kind;
  size_t size;         /* bytes of the value (PK_STRING: of the length before it) */
  size_t padding;      /* zero bytes before it, to align it */
} avxbuf_pk_item;

/* The largest integer size (string.pack's limit). */
#define AVXBUF_PK_MAXINT 16

void avxbuf_pk_init(avxbuf_pk *h, const char *fmt);

/* The next item, for a value at byte pos (counted from where alignment is
 * counted): 1 with *item set, 0 at the end of the format, or -1 with *err
 * set to what is wrong (err is either a constant or errbuf). */
int avxbuf_pk_next(avxbuf_pk *h, size_t pos, avxbuf_pk_item *item, const char **err, char errbuf[64]);

#endif
