/* Looking at bytes without changing them: compare, hex dumps, and the
 * metamethods that compare and concatenate. Buffers behave as LuaJIT's
 * string.buffer does where it has an answer (tostring and .. give strings),
 * and compare by bytes, not by the locale, where it has none (== < <=). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "lua/largs.h"
#include "lua/lbuffer.h"
#include "lua/lfuncs.h"

/* By unsigned bytes, then by length: memcmp's order, extended. */
static int compare_bytes(const unsigned char *a, size_t la, const unsigned char *b, size_t lb)
{
  int c = memcmp(a, b, la < lb ? la : lb);
  if (c != 0) return c < 0 ? -1 : 1;
  return la < lb ? -1 : la > lb;
}

static int compare_args(lua_State *L)
{
  size_t la, lb;
  const unsigned char *a = avxbuf_checkbytes(L, 1, &la, NULL);
  const unsigned char *b = avxbuf_checkbytes(L, 2, &lb, NULL);
  return compare_bytes(a, la, b, lb);
}

/* avxbuf.compare(a, b) -> -1, 0 or 1 (buffers or strings) */
static int l_compare(lua_State *L)
{
  lua_pushinteger(L, compare_args(L));
  return 1;
}

/* __eq: Lua asks it of two userdata only; anything not a buffer is unequal. */
static int l_eq(lua_State *L)
{
  buffer *a = testbuffer(L, 1), *b = testbuffer(L, 2);
  lua_pushboolean(L, a && b && a->len == b->len && memcmp(a->data, b->data, a->len) == 0);
  return 1;
}

static int l_lt(lua_State *L)
{
  lua_pushboolean(L, compare_args(L) < 0);
  return 1;
}

static int l_le(lua_State *L)
{
  lua_pushboolean(L, compare_args(L) <= 0);
  return 1;
}

/* The bytes of a buffer or string, as .. takes them (numbers are strings by
 * then). */
static const char *concat_piece(lua_State *L, int arg, size_t *len)
{
  buffer *b = testbuffer(L, arg);
  if (b) { *len = b->len; return (const char *)b->data; }
  if (lua_type(L, arg) == LUA_TSTRING) return lua_tolstring(L, arg, len);
  luaL_error(L, "attempt to concatenate a %s value with an " BUFFER_NAME, luaL_typename(L, arg));
  return NULL;
}

/* __concat: a string, as string.buffer's .. gives. Turning a number into a
 * string and making the result both allocate: the pieces are read after
 * both, and again if a finalizer changed their total on the way. */
static int l_concat(lua_State *L)
{
  for (int i = 1; i <= 2; i++)
    if (lua_type(L, i) == LUA_TNUMBER) lua_tolstring(L, i, NULL);   /* in place */
  for (;;) {
    size_t la, lb;
    concat_piece(L, 1, &la);
    concat_piece(L, 2, &lb);
    size_t total = la + lb;
    char *out = avxbuf_pushscratch(L, total);
    const char *a = concat_piece(L, 1, &la), *b = concat_piece(L, 2, &lb);
    if (la + lb == total) {
      memcpy(out, a, la);
      memcpy(out + la, b, lb);
      lua_pushlstring(L, out, total);
      return 1;
    }
    lua_pop(L, 1);
  }
}

/* __tostring: the contents, as tostring(string.buffer) gives. */
static int l_contents(lua_State *L)
{
  buffer *b = checkbuffer(L, 1);
  avxbuf_pushall(L, b);
  return 1;
}

/* One line of hexdump -C: the offset, 16 bytes in two groups of 8 (blanks
 * for those past the end), the printable ones between bars. Returns its
 * length (at most HEX_LINE_MAX). */
#define HEX_LINE_MAX 87   /* 79, and 8 more offset digits past 4 GiB */
static size_t hex_line(char *text, unsigned long long offset, const unsigned char *p, size_t count)
{
  static const char digits[] = "0123456789abcdef";
  char head[24];
  size_t w = (size_t)snprintf(head, sizeof head, "%08llx  ", offset);
  memcpy(text, head, w);
  for (size_t k = 0; k < 16; k++) {
    if (k < count) { text[w++] = digits[p[k] >> 4]; text[w++] = digits[p[k] & 15]; }
    else { text[w++] = ' '; text[w++] = ' '; }
    text[w++] = ' ';
    if (k == 7) text[w++] = ' ';
  }
  text[w++] = ' ';
  text[w++] = '|';
  for (size_t k = 0; k < count; k++) text[w++] = p[k] >= 0x20 && p[k] < 0x7F ? (char)p[k] : '.';
  text[w++] = '|';
  text[w++] = '\n';
  return w;
}

/* The most a dump of n bytes takes: every line in full, the closing offset. */
static size_t hex_bound(lua_State *L, size_t n)
{
  size_t lines = n / 16 + 1;
  if (lines > (SIZE_MAX - 32) / HEX_LINE_MAX) luaL_argerror(L, 1, "too large to dump");
  return lines * HEX_LINE_MAX + 32;
}

/* buf:hex([i [, j]]) -> exactly what hexdump -C prints for those bytes
 * (offsets counted from the buffer's start, as hexdump -s gives them): a
 * run of lines equal to the one before is one "*", and the last line is
 * the offset after the end; nothing for no bytes. Written into a userdata
 * made before the bytes are read. */
static int l_hex(lua_State *L)
{
  buffer *b = checkbuffer(L, 1);
  size_t start, n;
  char *out;
  lua_settop(L, 3);   /* the userdata goes above the arguments */
  for (;;) {
    n = avxbuf_sub_range(L, 2, 0, b->len, &start);
    size_t bound = hex_bound(L, n);
    out = avxbuf_pushscratch(L, bound);
    n = avxbuf_sub_range(L, 2, 0, b->len, &start);
    if (hex_bound(L, n) <= bound) break;
    lua_pop(L, 1);
  }
  const unsigned char *p = b->data + start;
  size_t w = 0;
  int squeezed = 0;
  for (size_t line = 0; line < n; line += 16) {
    int full = n - line >= 16;
    if (full && line > 0 && memcmp(p + line, p + line - 16, 16) == 0) {
      if (!squeezed) { out[w++] = '*'; out[w++] = '\n'; }
      squeezed = 1;
      continue;
    }
    squeezed = 0;
    w += hex_line(out + w, (unsigned long long)(start + line), p + line, full ? 16 : n - line);
  }
  if (n > 0) {
    char tail[24];
    size_t t = (size_t)snprintf(tail, sizeof tail, "%08llx\n", (unsigned long long)(start + n));
    memcpy(out + w, tail, t);
    w += t;
  }
  lua_pushlstring(L, out, w);
  return 1;
}

/* buf:ref() -> the data as a light userdata, and the length: for the FFI
 * (ffi.cast("uint8_t *", p)) and for C code; valid until the buffer grows,
 * is freed or is collected. A pointer to write through: buffer_wrote. */
static int l_ref(lua_State *L)
{
  buffer *b = checkbuffer(L, 1);
  buffer_wrote(b);
  lua_pushlightuserdata(L, b->data);
  lua_pushinteger(L, (lua_Integer)b->len);
  return 2;
}

const luaL_Reg avxbuf_inspect_funcs[] = {
  { "compare", l_compare },
  { NULL, NULL }
};

const luaL_Reg avxbuf_inspect_methods[] = {
  { "hex", l_hex }, { "ref", l_ref },
  { NULL, NULL }
};

const luaL_Reg avxbuf_inspect_meta[] = {
  { "__eq", l_eq }, { "__lt", l_lt }, { "__le", l_le }, { "__concat", l_concat },
  { "__tostring", l_contents },
  { NULL, NULL }
};
