/* Looking at bytes without changing them: find, compare, hex dumps, and the
 * metamethods that compare and concatenate. Buffers behave as LuaJIT's
 * string.buffer does where it has an answer (tostring and .. give strings),
 * and compare by bytes, not by the locale, where it has none (== < <=). */
#include <stdio.h>
#include <string.h>

#include "lavxbuf.h"

/* buf:find(s [, init]) -> start, end | nil: string.find(buf, s, init, true)
 * with Lua 5.4's rules for init and the empty string. */
static int l_find(lua_State *L)
{
  buffer *b = checkbuffer(L, 1);
  size_t m;
  const unsigned char *needle = avxbuf_checkbytes(L, 2, &m, NULL);
  size_t init = avxbuf_sub_start(optint(L, 3, 1), b->len) - 1;
  if (init > b->len || m > b->len - init) {
    luaL_pushfail(L);
    return 1;
  }
  size_t at = init;
  if (m > 0) {
    size_t n = b->len - init;
    const unsigned char *p = avxbuf_pick_find(&buffer_module(L, b)->settings.plan, n)
                               ->find(b->data + init, n, needle, m);
    if (p == NULL) {
      luaL_pushfail(L);
      return 1;
    }
    at = (size_t)(p - b->data);
  }
  lua_pushinteger(L, (lua_Integer)at + 1);
  lua_pushinteger(L, (lua_Integer)(at + m));
  return 2;
}

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

/* The bytes of a buffer, string or number, as .. takes them. */
static const char *concat_piece(lua_State *L, int arg, size_t *len)
{
  buffer *b = testbuffer(L, arg);
  if (b) { *len = b->len; return (const char *)b->data; }
  if (lua_type(L, arg) == LUA_TSTRING || lua_type(L, arg) == LUA_TNUMBER) return lua_tolstring(L, arg, len);
  luaL_error(L, "attempt to concatenate a %s value with an " BUFFER_NAME, luaL_typename(L, arg));
  return NULL;
}

/* __concat: a string, as string.buffer's .. gives. */
static int l_concat(lua_State *L)
{
  size_t la, lb;
  const char *a = concat_piece(L, 1, &la), *b = concat_piece(L, 2, &lb);
  luaL_Buffer out;
  luaL_buffinit(L, &out);
  luaL_addlstring(&out, a, la);
  luaL_addlstring(&out, b, lb);
  luaL_pushresult(&out);
  return 1;
}

/* __tostring: the contents, as tostring(string.buffer) gives. */
static int l_contents(lua_State *L)
{
  buffer *b = checkbuffer(L, 1);
  lua_pushlstring(L, (const char *)b->data, b->len);
  return 1;
}

/* buf:hex([i [, j]]) -> a dump as hexdump -C prints it: the offset in the
 * buffer, 16 bytes in two groups of 8, and the printable ones. */
static int l_hex(lua_State *L)
{
  buffer *b = checkbuffer(L, 1);
  size_t start, n = avxbuf_sub_range(L, 2, 0, b->len, &start);
  static const char digits[] = "0123456789abcdef";
  luaL_Buffer out;
  luaL_buffinit(L, &out);
  for (size_t line = 0; line < n; line += 16) {
    char text[100];
    const unsigned char *p = b->data + start + line;
    size_t k, count = n - line;
    if (count > 16) count = 16;
    int w = snprintf(text, sizeof text, "%08llx  ", (unsigned long long)(start + line));
    for (k = 0; k < 16; k++) {
      if (k < count) { text[w++] = digits[p[k] >> 4]; text[w++] = digits[p[k] & 15]; }
      else { text[w++] = ' '; text[w++] = ' '; }
      text[w++] = ' ';
      if (k == 7) text[w++] = ' ';
    }
    text[w++] = ' ';
    text[w++] = '|';
    for (k = 0; k < count; k++) text[w++] = p[k] >= 0x20 && p[k] < 0x7F ? (char)p[k] : '.';
    text[w++] = '|';
    text[w++] = '\n';
    luaL_addlstring(&out, text, (size_t)w);
  }
  luaL_pushresult(&out);
  return 1;
}

/* buf:ref() -> the data as a light userdata, and the length: for the FFI
 * (ffi.cast("uint8_t *", p)) and for C code; valid until the buffer grows,
 * is freed or is collected. */
static int l_ref(lua_State *L)
{
  buffer *b = checkbuffer(L, 1);
  lua_pushlightuserdata(L, b->data);
  lua_pushinteger(L, (lua_Integer)b->len);
  return 2;
}

const luaL_Reg avxbuf_inspect_funcs[] = {
  { "compare", l_compare },
  { NULL, NULL }
};

const luaL_Reg avxbuf_inspect_methods[] = {
  { "find", l_find }, { "hex", l_hex }, { "ref", l_ref },
  { NULL, NULL }
};

const luaL_Reg avxbuf_inspect_meta[] = {
  { "__eq", l_eq }, { "__lt", l_lt }, { "__le", l_le }, { "__concat", l_concat },
  { "__tostring", l_contents },
  { NULL, NULL }
};
