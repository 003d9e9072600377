/* Argument checks of the binding, each raising "bad argument #arg", and
 * string.sub's index rules. */
#ifndef AVXBUF_LARGS_H
#define AVXBUF_LARGS_H

#include "lmodule.h"

int avxbuf_argtype(lua_State *L, int arg, const char *expected);   /* the type error */
int avxbuf_notbuffer(lua_State *L, int arg);   /* avxbuf_argtype(L, arg, BUFFER_NAME) */
/* lua_pushfstring with the C library's formats (%lld on every Lua version). */
const char *avxbuf_pushf(lua_State *L, const char *fmt, ...);
/* A buffer or a Lua string (not a number: no silent coercion). */
const unsigned char *avxbuf_checkbytes(lua_State *L, int arg, size_t *len, buffer **as_buffer);
int avxbuf_checkbyte(lua_State *L, int arg);
/* A buffer size: 0..MAX_LENGTH. */
size_t avxbuf_checksize(lua_State *L, int arg, lua_Integer n);
/* string.sub's start rule: negative from the end, then at least 1. */
size_t avxbuf_sub_start(lua_Integer i, size_t len);
/* [*start, *start + count) for string.sub-style arguments i (default 1) and
 * j (default -1, or i itself as string.byte has it). */
size_t avxbuf_sub_range(lua_State *L, int arg_i, int j_defaults_to_i, size_t len, size_t *start);
/* A write (or read) position: 1 <= i <= len + 1; the 0-based offset. */
size_t avxbuf_checkindex(lua_State *L, int arg, lua_Integer i, size_t len);
/* A length at offset off of len bytes: 0 <= n <= len - off, by default all
 * of it; `what` names the bytes in the error. */
size_t avxbuf_checkcount(lua_State *L, int arg, size_t off, size_t len, const char *what);

/* luaL_checkinteger and luaL_optinteger with the common case (an integer is
 * there) first: one API call instead of two or three on the hot path. */
static inline lua_Integer checkint(lua_State *L, int arg)
{
  int isint;
  lua_Integer v = lua_tointegerx(L, arg, &isint);
  return isint ? v : luaL_checkinteger(L, arg);
}

static inline lua_Integer optint(lua_State *L, int arg, lua_Integer dflt)
{
  int isint;
  lua_Integer v = lua_tointegerx(L, arg, &isint);
  if (isint) return v;
  return lua_isnoneornil(L, arg) ? dflt : luaL_checkinteger(L, arg);
}

/* checkint for a size or count: a whole number beyond the Lua's own exact
 * integers (2^53 on 5.1, 5.2 and LuaJIT) but within lua_Integer is taken
 * as that integer, so that new, resize and reserve of 2^62 say what 5.4
 * says ("size too large"), not "number has no integer representation". */
lua_Integer avxbuf_checkwhole(lua_State *L, int arg);

static inline buffer *checkbuffer(lua_State *L, int arg)
{
  buffer *b = testbuffer(L, arg);
  if (b == NULL) avxbuf_notbuffer(L, arg);
  return b;
}

#endif
