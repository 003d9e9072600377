/* Typed access: buf:pack(i, fmt, v...) and buf:unpack(i, fmt), with the
 * format language of string.pack (src/packfmt.c) and its results byte for
 * byte and value for value, on every Lua version (5.1, 5.2 and LuaJIT have
 * no string.pack). A pack is checked whole, values and room, before it
 * writes; an unpack never reads past the buffer. */
#include <string.h>

#include "lavxbuf.h"
#include "packfmt.h"

#define NB 8
#define SZINT ((size_t)sizeof(lua_Integer))

/* Format errors name the format argument. */
static int next_item(lua_State *L, avxbuf_pk *h, size_t pos, avxbuf_pk_item *item, int fmt_arg)
{
  const char *err;
  char errbuf[64];
  int r = avxbuf_pk_next(h, pos, item, &err, errbuf);
  if (r < 0) luaL_argerror(L, fmt_arg, err);
  return r;
}

/* ---- pack ----------------------------------------------------------------- */

static void put_int(unsigned char *out, unsigned long long v, int little, size_t size, int negative)
{
  for (size_t k = 0; k < size; k++) {
    unsigned char byte = k < sizeof v ? (unsigned char)(v >> (NB * k)) : (negative ? 0xFF : 0);
    out[little ? k : size - 1 - k] = byte;
  }
}

static void put_bytes(unsigned char *out, const void *p, size_t size, int little)
{
  const unsigned char *s = p;   /* host order is little-endian */
  for (size_t k = 0; k < size; k++) out[little ? k : size - 1 - k] = s[k];
}

/* One pass over the format from value argument `arg`: with out == NULL it
 * checks every value and returns the total size; with out it writes. The
 * checks are string.pack's. */
static size_t pack_pass(lua_State *L, const char *fmt, int fmt_arg, int arg, unsigned char *out)
{
  avxbuf_pk h;
  avxbuf_pk_item it;
  size_t total = 0;
  avxbuf_pk_init(&h, fmt);
  while (next_item(L, &h, total, &it, fmt_arg)) {
    size_t need = it.padding + (it.kind == PK_STRING || it.kind == PK_CHAR || it.kind == PK_ZSTR ? 0 : it.size);
    if (need > MAX_LENGTH - total) luaL_argerror(L, fmt_arg, "format result too large");
    if (out) memset(out + total, 0, it.padding);
    total += it.padding;
    switch (it.kind) {
    case PK_INT: case PK_UINT: {
      lua_Integer n = luaL_checkinteger(L, arg);
      if (it.size < SZINT) {
        if (it.kind == PK_INT) {
          lua_Integer lim = (lua_Integer)1 << (it.size * NB - 1);
          luaL_argcheck(L, -lim <= n && n < lim, arg, "integer overflow");
        } else {
          luaL_argcheck(L, (unsigned long long)n < (1ull << (it.size * NB)), arg, "unsigned overflow");
        }
      }
      /* Only signed formats extend the sign past 8 bytes (string.pack: I16 of -1 is ff x8 00 x8). */
      if (out) put_int(out + total, (unsigned long long)n, h.little, it.size, it.kind == PK_INT && n < 0);
      total += it.size;
      arg++;
      break;
    }
    case PK_FLOAT: {
      float f = (float)luaL_checknumber(L, arg++);
      if (out) put_bytes(out + total, &f, sizeof f, h.little);
      total += it.size;
      break;
    }
    case PK_DOUBLE: case PK_NUMBER: {
      double d = (double)luaL_checknumber(L, arg++);
      lua_Number num = (lua_Number)d;
      if (out) {
        if (it.kind == PK_DOUBLE) put_bytes(out + total, &d, sizeof d, h.little);
        else put_bytes(out + total, &num, sizeof num, h.little);
      }
      total += it.size;
      break;
    }
    case PK_CHAR: case PK_STRING: case PK_ZSTR: {
      size_t len;
      const char *s = luaL_checklstring(L, arg, &len);
      size_t body = it.kind == PK_CHAR ? it.size : it.kind == PK_STRING ? it.size + len : len + 1;
      if (it.kind == PK_CHAR)
        luaL_argcheck(L, len <= it.size, arg, "string longer than given size");
      else if (it.kind == PK_STRING)
        luaL_argcheck(L, it.size >= sizeof(size_t) || len < ((size_t)1 << (it.size * NB)), arg,
                      "string length does not fit in given size");
      else
        luaL_argcheck(L, strlen(s) == len, arg, "string contains zeros");
      if (len > MAX_LENGTH || body > MAX_LENGTH - total) luaL_argerror(L, fmt_arg, "format result too large");
      if (out) {
        unsigned char *p = out + total;
        if (it.kind == PK_STRING) { put_int(p, len, h.little, it.size, 0); p += it.size; }
        memcpy(p, s, len);
        if (it.kind == PK_CHAR) memset(p + len, 0, it.size - len);
        if (it.kind == PK_ZSTR) p[len] = '\0';
      }
      total += body;
      arg++;
      break;
    }
    case PK_PAD:
      if (out) out[total] = 0;
      total += 1;
      break;
    case PK_ALIGN: case PK_NOP:
      break;
    }
  }
  return total;
}

/* buf:pack(i, fmt, v...) -> the index after the last byte written */
static int l_pack(lua_State *L)
{
  buffer *b = checkbuffer(L, 1);
  lua_Integer i = checkint(L, 2);
  const char *fmt = luaL_checkstring(L, 3);
  avxbuf_checkindex(L, 2, i, b->len);
  size_t total = pack_pass(L, fmt, 3, 4, NULL);
  /* Checking a value may have turned a number into a string, which may have
   * run a finalizer, which may have resized b: its length is read now. */
  size_t off = avxbuf_checkindex(L, 2, i, b->len);
  if (total > b->len - off)
    luaL_argerror(L, 3, avxbuf_pushf(L, "the %llu bytes packed do not fit at index %lld of a %llu-byte buffer",
                                     (unsigned long long)total, (long long)i, (unsigned long long)b->len));
  pack_pass(L, fmt, 3, 4, b->data + off);
  lua_pushinteger(L, (lua_Integer)(off + total + 1));
  return 1;
}

/* ---- unpack ------------------------------------------------------------- */

static lua_Integer get_int(lua_State *L, const unsigned char *p, int little, size_t size, int issigned,
                           int fmt_arg)
{
  unsigned long long res = 0;
  size_t limit = size <= SZINT ? size : SZINT;
  for (size_t k = limit; k-- > 0; ) {
    res <<= NB;
    res |= p[little ? k : size - 1 - k];
  }
  if (size < SZINT) {
    if (issigned) {   /* sign-extend */
      unsigned long long mask = 1ull << (size * NB - 1);
      res = (res ^ mask) - mask;
    }
  } else if (size > SZINT) {   /* the extra bytes must only extend the sign */
    unsigned char ext = issigned && (lua_Integer)res < 0 ? 0xFF : 0;
    for (size_t k = limit; k < size; k++)
      if (p[little ? k : size - 1 - k] != ext)
        luaL_argerror(L, fmt_arg, avxbuf_pushf(L, "%d-byte integer does not fit into Lua Integer", (int)size));
  }
  return (lua_Integer)res;
}

static void get_bytes(void *dst, const unsigned char *p, size_t size, int little)
{
  unsigned char *d = dst;
  for (size_t k = 0; k < size; k++) d[k] = p[little ? k : size - 1 - k];
}

static void too_short(lua_State *L, size_t need, size_t pos, size_t len)
{
  luaL_argerror(L, 2, avxbuf_pushf(L, "data too short: %llu bytes needed at index %llu of a %llu-byte buffer",
                                   (unsigned long long)need, (unsigned long long)pos + 1,
                                   (unsigned long long)len));
}

/* buf:unpack(i, fmt) -> values..., the index after the last byte read. i
 * as string.unpack's init: negative counts from the end. */
static int l_unpack(lua_State *L)
{
  buffer *b = checkbuffer(L, 1);
  lua_Integer i = checkint(L, 2);
  const char *fmt = luaL_checkstring(L, 3);
  size_t pos = avxbuf_sub_start(i, b->len) - 1;
  luaL_argcheck(L, pos <= b->len, 2, "initial position out of the buffer");
  avxbuf_pk h;
  avxbuf_pk_item it;
  int n = 0;
  avxbuf_pk_init(&h, fmt);
  while (next_item(L, &h, pos, &it, 3)) {
    /* A pushed string may run a finalizer, which may resize b: b->data and
     * b->len are read afresh for every item, and avxbuf_pushbytes reads
     * them again after it allocates. */
    size_t len = b->len;
    if (pos > len || it.padding + it.size > len - pos) too_short(L, it.padding + it.size, pos, len);
    const unsigned char *p = b->data + pos + it.padding;
    pos += it.padding;
    if (n % 16 == 0) luaL_checkstack(L, 16 + 1, "too many results");   /* room for 16 more, and the index */
    n++;
    switch (it.kind) {
    case PK_INT: case PK_UINT:
      lua_pushinteger(L, get_int(L, p, h.little, it.size, it.kind == PK_INT, 3));
      break;
    case PK_FLOAT: {
      float f;
      get_bytes(&f, p, sizeof f, h.little);
      lua_pushnumber(L, (lua_Number)f);
      break;
    }
    case PK_DOUBLE: {
      double d;
      get_bytes(&d, p, sizeof d, h.little);
      lua_pushnumber(L, (lua_Number)d);
      break;
    }
    case PK_NUMBER: {
      lua_Number num;
      get_bytes(&num, p, sizeof num, h.little);
      lua_pushnumber(L, num);
      break;
    }
    case PK_CHAR:
      if (!avxbuf_pushbytes(L, b, pos, it.size)) too_short(L, it.size, pos, b->len);
      break;
    case PK_STRING: {
      unsigned long long prefix = (unsigned long long)get_int(L, p, h.little, it.size, 0, 3);
      if (prefix > len - pos - it.size)   /* before the cast: size_t may be 32 bits */
        too_short(L, prefix > SIZE_MAX - it.size ? SIZE_MAX : it.size + (size_t)prefix, pos, len);
      size_t slen = (size_t)prefix;
      if (!avxbuf_pushbytes(L, b, pos + it.size, slen)) too_short(L, it.size + slen, pos, b->len);
      pos += slen;
      break;
    }
    case PK_ZSTR: {
      const unsigned char *z = memchr(p, 0, len - pos);
      if (z == NULL) luaL_argerror(L, 3, "unfinished string for format 'z'");
      size_t slen = (size_t)(z - p);
      if (!avxbuf_pushbytes(L, b, pos, slen)) too_short(L, slen + 1, pos, b->len);
      pos += slen + 1;
      break;
    }
    case PK_PAD: case PK_ALIGN: case PK_NOP:
      n--;
      break;
    }
    pos += it.size;
  }
  lua_pushinteger(L, (lua_Integer)pos + 1);
  return n + 1;
}

const luaL_Reg avxbuf_pack_methods[] = {
  { "pack", l_pack }, { "unpack", l_unpack },
  { NULL, NULL }
};
