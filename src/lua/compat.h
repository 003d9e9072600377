/* Lua 5.1, 5.2, 5.3 and LuaJIT 2.1 under the Lua 5.4 API avxbuf is written
 * against: only what it uses, the way LPeg and luafilesystem carry theirs.
 * One rule differs from what 5.1/5.2 do by themselves: a number with a
 * fraction is not an integer argument (5.3+ refuse it, 5.1/5.2 would
 * truncate it), so every version gives the same error. */
#ifndef AVXBUF_COMPAT_H
#define AVXBUF_COMPAT_H

#ifndef AVXBUF_LUAAPI_H
#error "include luaapi.h, which puts compat.h after gcpoints.h"
#endif

#include <math.h>

#if LUA_VERSION_NUM < 502
#define LUA_OK 0
#ifndef LUA_FILEHANDLE   /* lualib.h has it in 5.1 and LuaJIT */
#define LUA_FILEHANDLE "FILE*"
#endif
#undef lua_rawlen
#define lua_rawlen(L, i) lua_objlen(L, i)
#undef luaL_len
#define luaL_len(L, i) ((lua_Integer)lua_objlen(L, i))
#undef luaL_newlibtable
#define luaL_newlibtable(L, l) lua_createtable(L, 0, (int)(sizeof(l) / sizeof((l)[0]) - 1))
#undef luaL_newlib
#define luaL_newlib(L, l) (luaL_newlibtable(L, l), luaL_setfuncs(L, l, 0))
#undef luaL_setmetatable
#define luaL_setmetatable(L, name) (luaL_getmetatable(L, name), lua_setmetatable(L, -2))
#define luaL_setfuncs avxbuf_setfuncs
#define lua_absindex(L, i) ((i) < 0 && (i) > LUA_REGISTRYINDEX ? lua_gettop(L) + (i) + 1 : (i))
#define luaL_tolstring avxbuf_tolstring

static inline void avxbuf_setfuncs(lua_State *L, const luaL_Reg *l, int nup)
{
  luaL_checkstack(L, nup, "too many upvalues");
  for (; l->name; l++) {
    for (int i = 0; i < nup; i++) lua_pushvalue(L, -nup);
    lua_pushcclosure(L, l->func, nup);
    lua_setfield(L, -(nup + 2), l->name);
  }
  lua_pop(L, nup);
}

static inline const char *avxbuf_tolstring(lua_State *L, int i, size_t *len)
{
  if (lua_type(L, i) == LUA_TSTRING || lua_type(L, i) == LUA_TNUMBER) {
    lua_pushvalue(L, i);
    lua_tostring(L, -1);
  } else {
    lua_pushfstring(L, "%s: %p", luaL_typename(L, i), lua_topointer(L, i));
  }
  return lua_tolstring(L, -1, len);
}
#endif

/* A number as an integer where the Lua has none (5.1, 5.2, LuaJIT):
 * integral and exact in a double, within +-2^53. LuaJIT's FFI path judges
 * the numbers pack takes by it too (src/lua/lpack.c's avxbuf_pack_staged,
 * and the range src/luajit/lluajit.c's pack_ops gives ffi_format.lua). */
#define AVXBUF_NUMBER_INT_MOST 9007199254740992.0   /* 2^53 */
static inline int avxbuf_number_is_integer(lua_Number n)
{
  return n == floor(n) && n >= -AVXBUF_NUMBER_INT_MOST && n <= AVXBUF_NUMBER_INT_MOST;
}

#if LUA_VERSION_NUM < 503
/* lua_getfield returns the type from 5.3 on. */
#define lua_getfield(L, i, k) (lua_getfield(L, i, k), lua_type(L, -1))
#define lua_geti avxbuf_geti
#define lua_tointegerx avxbuf_tointegerx
#define luaL_checkinteger avxbuf_checkinteger

/* t[i] with metamethods, as 5.3's (lua_rawgeti would skip __index). */
static inline int avxbuf_geti(lua_State *L, int t, lua_Integer i)
{
  if (t < 0 && t > LUA_REGISTRYINDEX) t = lua_gettop(L) + t + 1;
  lua_pushinteger(L, i);
  lua_gettable(L, t);
  return lua_type(L, -1);
}

/* avxbuf_number_is_integer's integers. isint may be NULL, as 5.2's
 * lua_tointeger macro passes it. */
static inline lua_Integer avxbuf_tointegerx(lua_State *L, int i, int *isint)
{
  lua_Number n = lua_tonumber(L, i);
  int ok = lua_isnumber(L, i) && avxbuf_number_is_integer(n);
  if (isint) *isint = ok;
  return ok ? (lua_Integer)n : 0;
}
#endif

#if LUA_VERSION_NUM < 504
#define lua_newuserdatauv(L, size, nuv) lua_newuserdata(L, size)
#define luaL_pushfail(L) lua_pushnil(L)
#define luaL_typeerror avxbuf_typeerror

static inline int avxbuf_typeerror(lua_State *L, int arg, const char *tname)
{
  return luaL_argerror(L, arg, lua_pushfstring(L, "%s expected, got %s", tname, luaL_typename(L, arg)));
}
#endif

#if LUA_VERSION_NUM < 503
static inline lua_Integer avxbuf_checkinteger(lua_State *L, int i)
{
  int isint;
  lua_Integer v = avxbuf_tointegerx(L, i, &isint);
  if (!isint) {
    if (lua_isnumber(L, i)) luaL_argerror(L, i, "number has no integer representation");
    else luaL_typeerror(L, i, "number");
  }
  return v;
}
#endif

#endif
