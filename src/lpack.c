/* Typed access: buf:pack([i,] fmt, v...) and buf:unpack(i, fmt), with the
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

/* Where a pass writes: nowhere (it measures), at a place with room for
 * everything (out), or past the length of a buffer that it grows item by
 * item (b, from offset base). */
typedef struct sink {
  unsigned char *out;
  buffer *b;
  lmodule *m;
  size_t base;
  uint32_t gen;   /* b's generation after the pass's own last growth */
  int fmt_arg;
} sink;

#define RESTART ((size_t)-1)

/* Room for n bytes at offset `at` of the pass's output, or NULL when
 * measuring. */
static unsigned char *place(lua_State *L, sink *k, size_t at, size_t n)
{
  if (k == NULL) return NULL;
  if (k->b == NULL) return k->out + at;
  if (n > MAX_LENGTH - k->base - at)
    luaL_argerror(L, k->fmt_arg, avxbuf_pushf(L, "the buffer would exceed %llu bytes", (unsigned long long)MAX_LENGTH));
  avxbuf_reserve(L, k->m, k->b, k->base + at + n, k->base + at);
  k->gen = k->b->gen;
  return k->b->data + k->base + at;
}

/* One pass over the format from value argument `arg`, checking every
 * value as string.pack does and writing it to k (NULL: measure only);
 * returns the total size. Turning a number into a string (s, z, c) may run
 * a finalizer, which may change the buffer a growing pass writes past:
 * then it returns RESTART, and the number stays a string for the next. */
static size_t pack_pass(lua_State *L, const char *fmt, int fmt_arg, int arg, sink *k)
{
  avxbuf_pk h;
  avxbuf_pk_item it;
  size_t total = 0;
  avxbuf_pk_init(&h, fmt);
  while (next_item(L, &h, total, &it, fmt_arg)) {
    int has_body = !(it.kind == PK_STRING || it.kind == PK_CHAR || it.kind == PK_ZSTR);
    size_t need = it.padding + (has_body ? it.size : 0);
    if (need > MAX_LENGTH - total) luaL_argerror(L, fmt_arg, "format result too large");
    unsigned char *out = NULL;
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
      if ((out = place(L, k, total, need)) != NULL)
        put_int(out + it.padding, (unsigned long long)n, h.little, it.size, it.kind == PK_INT && n < 0);
      arg++;
      break;
    }
    case PK_FLOAT: {
      float f = (float)luaL_checknumber(L, arg++);
      if ((out = place(L, k, total, need)) != NULL) put_bytes(out + it.padding, &f, sizeof f, h.little);
      break;
    }
    case PK_DOUBLE: case PK_NUMBER: {
      double d = (double)luaL_checknumber(L, arg++);
      lua_Number num = (lua_Number)d;
      if ((out = place(L, k, total, need)) != NULL) {
        if (it.kind == PK_DOUBLE) put_bytes(out + it.padding, &d, sizeof d, h.little);
        else put_bytes(out + it.padding, &num, sizeof num, h.little);
      }
      break;
    }
    case PK_CHAR: case PK_STRING: case PK_ZSTR: {
      size_t len;
      const char *s = luaL_checklstring(L, arg, &len);
      if (k && k->b && k->b->gen != k->gen) return RESTART;
      size_t body = it.kind == PK_CHAR ? it.size : it.kind == PK_STRING ? it.size + len : len + 1;
      if (it.kind == PK_CHAR)
        luaL_argcheck(L, len <= it.size, arg, "string longer than given size");
      else if (it.kind == PK_STRING)
        luaL_argcheck(L, it.size >= sizeof(size_t) || len < ((size_t)1 << (it.size * NB)), arg,
                      "string length does not fit in given size");
      else
        luaL_argcheck(L, strlen(s) == len, arg, "string contains zeros");
      if (len > MAX_LENGTH || body > MAX_LENGTH - total - need) luaL_argerror(L, fmt_arg, "format result too large");
      need += body;
      if ((out = place(L, k, total, need)) != NULL) {
        unsigned char *p = out + it.padding;
        if (it.kind == PK_STRING) { put_int(p, len, h.little, it.size, 0); p += it.size; }
        memcpy(p, s, len);
        if (it.kind == PK_CHAR) memset(p + len, 0, it.size - len);
        if (it.kind == PK_ZSTR) p[len] = '\0';
      }
      arg++;
      break;
    }
    case PK_PAD:
      if ((out = place(L, k, total, need)) != NULL) out[it.padding] = 0;
      break;
    case PK_ALIGN: case PK_NOP:
      out = place(L, k, total, need);
      break;
    }
    if (out) memset(out, 0, it.padding);
    total += need;
  }
  return total;
}

/* buf:pack([i,] fmt, v...) -> the index after the last byte written. At i
 * (1 .. #buf + 1), or appended without it; the buffer grows to take what
 * does not fit. */
static int l_pack(lua_State *L)
{
  buffer *b = checkbuffer(L, 1);
  lmodule *m = buffer_module(L, b);
  avxbuf_pace(L, m);   /* first: a finalizer it runs may change b */
  int at = lua_type(L, 2) != LUA_TSTRING;   /* an index before the format */
  int fmt_arg = 2 + at;
  lua_Integer i = at ? checkint(L, 2) : 0;
  const char *fmt = luaL_checkstring(L, fmt_arg);
  size_t total, off;
  if (!at) {
    /* One pass, written past the length, which moves only at the end: an
     * error on the way leaves the buffer as it was. */
    sink k = { NULL, b, m, 0, 0, fmt_arg };
    do {
      k.base = off = b->len;
      k.gen = b->gen;
    } while ((total = pack_pass(L, fmt, fmt_arg, fmt_arg + 1, &k)) == RESTART);
  } else {
    /* Within the bytes there are: every value checked first (measured),
     * then written. Checking may have run a finalizer (a number made a
     * string), which may have resized b: its length is read after. */
    avxbuf_checkindex(L, 2, i, b->len);
    total = pack_pass(L, fmt, fmt_arg, fmt_arg + 1, NULL);
    off = avxbuf_checkindex(L, 2, i, b->len);
    if (total > MAX_LENGTH - off)
      luaL_argerror(L, fmt_arg, avxbuf_pushf(L, "the buffer would exceed %llu bytes", (unsigned long long)MAX_LENGTH));
    if (off + total > b->len) avxbuf_reserve(L, m, b, off + total, b->len);
    sink k = { b->data + off, NULL, NULL, 0, 0, fmt_arg };
    pack_pass(L, fmt, fmt_arg, fmt_arg + 1, &k);
  }
  if (off + total > b->len) buffer_setlen(b, off + total);
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
