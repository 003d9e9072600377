/* Argument checks shared by the binding: byte strings, bytes, sizes, and
 * the index rules (string.sub's for reads, 1..len + 1 for writes). Every
 * failure is a "bad argument #k" naming the argument. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "lua/largs.h"

const char *avxbuf_pushf(lua_State *L, const char *fmt, ...)
{
  char buf[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  lua_pushstring(L, buf);
  return lua_tostring(L, -1);
}

/* luaL_typeerror names a userdata by its metatable's __name, so one given
 * the buffer metatable by hand (debug.setmetatable) would be "avxbuf.buffer
 * expected, got avxbuf.buffer". */
int avxbuf_argtype(lua_State *L, int arg, const char *expected)
{
  if (luaL_getmetafield(L, arg, "__name")) {
    int forged = lua_type(L, -1) == LUA_TSTRING && strcmp(lua_tostring(L, -1), BUFFER_NAME) == 0
                 && testbuffer(L, arg) == NULL;
    lua_pop(L, 1);
    if (forged)
      return luaL_argerror(L, arg, lua_pushfstring(L, "%s expected, got a %s with the buffer metatable",
                                                   expected, lua_typename(L, lua_type(L, arg))));
  }
  return luaL_typeerror(L, arg, expected);
}

int avxbuf_notbuffer(lua_State *L, int arg)
{
  return avxbuf_argtype(L, arg, BUFFER_NAME);
}

const unsigned char *avxbuf_checkbytes(lua_State *L, int arg, size_t *len, buffer **as_buffer)
{
  buffer *b = testbuffer(L, arg);
  if (as_buffer) *as_buffer = b;
  if (b) { *len = b->len; return b->data; }
  if (lua_type(L, arg) != LUA_TSTRING)
    avxbuf_argtype(L, arg, "string or " BUFFER_NAME);
  return (const unsigned char *)lua_tolstring(L, arg, len);
}

int avxbuf_checkbyte(lua_State *L, int arg)
{
  lua_Integer c = checkint(L, arg);
  luaL_argcheck(L, avxbuf_isbyte(c), arg, "byte must be from 0 to 255");
  return (int)c;
}

lua_Integer avxbuf_checkwhole(lua_State *L, int arg)
{
#if LUA_VERSION_NUM < 503
  if (lua_type(L, arg) == LUA_TNUMBER) {
    /* 2^(bits - 1): lua_Integer's range is [-lim, lim) */
    const lua_Number lim = (lua_Number)((lua_Integer)1 << (sizeof(lua_Integer) * 8 - 2)) * 2;
    lua_Number x = lua_tonumber(L, arg);
    if (x >= -lim && x < lim && x == (lua_Number)(lua_Integer)x) return (lua_Integer)x;   /* (in range: the cast is defined) */
  }
#endif
  return checkint(L, arg);
}

size_t avxbuf_checksize(lua_State *L, int arg, lua_Integer n)
{
  luaL_argcheck(L, n >= 0, arg, "size must not be negative");
  luaL_argcheck(L, (unsigned long long)n <= MAX_LENGTH, arg, "size too large");
  return (size_t)n;
}

int avxbuf_toolarge(lua_State *L, int arg)
{
  return luaL_argerror(L, arg, avxbuf_pushf(L, "the buffer would exceed %llu bytes", (unsigned long long)MAX_LENGTH));
}

int avxbuf_isint(lua_State *L, int idx, lua_Integer lo, lua_Integer hi, lua_Integer *v)
{
  return lua_type(L, idx) == LUA_TNUMBER && testint(L, idx, v) && lo <= *v && *v <= hi;
}

lua_Integer avxbuf_intfield(lua_State *L, int arg, const char *name, lua_Integer lo, lua_Integer hi,
                            lua_Integer dflt)
{
  lua_Integer v = dflt;
  lua_getfield(L, arg, name);
  int ok = lua_isnil(L, -1) ? lo <= dflt && dflt <= hi : avxbuf_isint(L, -1, lo, hi, &v);
  lua_pop(L, 1);
  if (!ok) {
    /* the whole of lua_Integer's range: no bounds worth naming */
    if (lo == AVXBUF_INTEGER_MIN && hi == AVXBUF_INTEGER_MAX)
      luaL_argerror(L, arg, lua_pushfstring(L, "field '%s' must be an integer", name));
    luaL_argerror(L, arg, avxbuf_pushf(L, "field '%s' must be an integer from %lld to %lld", name,
                                       (long long)lo, (long long)hi));
  }
  return v;
}

/* string.sub's rules: negative from the end, then clipped to 1..len. */
size_t avxbuf_sub_start(lua_Integer i, size_t len)
{
  /* beyond len + 1, any start past the end will do: (size_t)i may wrap */
  if (i > 0) return (unsigned long long)i > (unsigned long long)len + 1 ? len + 2 : (size_t)i;
  if (i == 0 || i < -(lua_Integer)len) return 1;
  return len + (size_t)i + 1;
}

/* string.sub's start, and past the end clamped to the end, as
 * string.gmatch clamps its init. */
size_t avxbuf_start_offset(int given, lua_Integer init, size_t len)
{
  size_t off = avxbuf_sub_start(given ? init : AVXBUF_FIRST, len) - 1;
  return off > len ? len : off;
}

static size_t sub_end(lua_Integer j, size_t len)
{
  if (j > (lua_Integer)len) return len;
  if (j >= 0) return (size_t)j;
  if (j < -(lua_Integer)len) return 0;
  return len + (size_t)j + 1;
}

size_t avxbuf_sub_range(lua_State *L, int arg_i, int j_defaults_to_i, size_t len, size_t *start)
{
  lua_Integer i = optint(L, arg_i, 1);
  size_t s = avxbuf_sub_start(i, len);
  size_t e = sub_end(optint(L, arg_i + 1, j_defaults_to_i ? i : -1), len);
  *start = s > e ? 0 : s - 1;
  return s > e ? 0 : e - s + 1;
}

size_t avxbuf_checkindex(lua_State *L, int arg, lua_Integer i, size_t len)
{
  if (i < 1 || (unsigned long long)i > (unsigned long long)len + 1)
    luaL_argerror(L, arg, avxbuf_pushf(L, "index %lld out of range 1..%lld", (long long)i, (long long)len + 1));
  return (size_t)(i - 1);
}

size_t avxbuf_checkcount(lua_State *L, int arg, size_t off, size_t len, const char *what)
{
  size_t room = len - off;
  lua_Integer n = optint(L, arg, (lua_Integer)room);
  if (n < 0)
    luaL_argerror(L, arg, avxbuf_pushf(L, "length %lld is negative", (long long)n));
  if ((unsigned long long)n > room)
    luaL_argerror(L, arg, avxbuf_pushf(L, "length %lld exceeds the %lld %s of %s from index %lld",
                                       (long long)n, (long long)room, AVXBUF_BYTES(room), what, (long long)off + 1));
  return (size_t)n;
}
