/* The collector-torture build (-DAVXBUF_GC_TORTURE, `make test-gc`): each
 * Lua API call of the binding that can allocate, and so run the collector
 * and any finalizer, runs a full collection where the real collector could
 * run: before the call reads its pointer argument where the API collects
 * first (lua_pushlstring and lua_newuserdata on Lua 5.1-5.3 and LuaJIT,
 * luaL_addlstring everywhere), after the call elsewhere, and only when the
 * call really allocates (lua_tolstring of a number, not of a string). With
 * finalizers armed to free, resize and append to the buffers under test,
 * a pointer or length kept across such a call shows under ASan. In any
 * other build only avxbuf_gcpoint, as a no-op.
 *
 * It wraps the API of lua.h and lauxlib.h alone: src/lua/luaapi.h includes it
 * before compat.h, whose shims then call the wrapped functions. */
#ifndef AVXBUF_GCPOINTS_H
#define AVXBUF_GCPOINTS_H

#ifndef AVXBUF_LUAAPI_H
#error "include luaapi.h, which puts gcpoints.h before compat.h"
#endif

#ifndef AVXBUF_GC_TORTURE
#define avxbuf_gcpoint(L) ((void)(L))
#else
/* A full collection, unless one is running already (a finalizer it runs
 * reaches more points). Defined in gcpoints.c. */
void avxbuf_gcpoint(lua_State *L);

#if LUA_VERSION_NUM >= 504
#define GC_COLLECTS_FIRST 0
#else
#define GC_COLLECTS_FIRST 1
#endif

static inline void gcpoint_before(lua_State *L) { if (GC_COLLECTS_FIRST) avxbuf_gcpoint(L); }
static inline void gcpoint_after(lua_State *L) { if (!GC_COLLECTS_FIRST) avxbuf_gcpoint(L); }

/* s, a conversion's result, after the collection it may have run: only
 * one that made a string of a number (was_number, read before) allocated. */
static inline const char *gcpoint_converted(lua_State *L, int was_number, const char *s)
{
  if (was_number) avxbuf_gcpoint(L);
  return s;
}

static inline void torture_pushlstring(lua_State *L, const char *s, size_t n)
{
  gcpoint_before(L);
  (lua_pushlstring)(L, s, n);
  gcpoint_after(L);
}
#undef lua_pushlstring
#define lua_pushlstring torture_pushlstring

static inline void torture_pushstring(lua_State *L, const char *s)
{
  gcpoint_before(L);
  (lua_pushstring)(L, s);
  gcpoint_after(L);
}
#undef lua_pushstring
#define lua_pushstring torture_pushstring

#if LUA_VERSION_NUM >= 504
static inline void *torture_newuserdatauv(lua_State *L, size_t size, int nuv)
{
  void *p = (lua_newuserdatauv)(L, size, nuv);
  avxbuf_gcpoint(L);
  return p;
}
#undef lua_newuserdatauv
#define lua_newuserdatauv torture_newuserdatauv
#else
static inline void *torture_newuserdata(lua_State *L, size_t size)
{
  avxbuf_gcpoint(L);
  return (lua_newuserdata)(L, size);
}
#undef lua_newuserdata
#define lua_newuserdata torture_newuserdata
#endif

static inline const char *torture_tolstring(lua_State *L, int idx, size_t *len)
{
  int number = lua_type(L, idx) == LUA_TNUMBER;
  return gcpoint_converted(L, number, (lua_tolstring)(L, idx, len));
}
#undef lua_tolstring
#define lua_tolstring torture_tolstring

static inline const char *torture_checklstring(lua_State *L, int arg, size_t *len)
{
  int number = lua_type(L, arg) == LUA_TNUMBER;
  return gcpoint_converted(L, number, (luaL_checklstring)(L, arg, len));
}
#undef luaL_checklstring
#define luaL_checklstring torture_checklstring

static inline void torture_addlstring(luaL_Buffer *B, const char *s, size_t n)
{
  avxbuf_gcpoint(B->L);
  (luaL_addlstring)(B, s, n);
}
#undef luaL_addlstring
#define luaL_addlstring torture_addlstring

static inline void torture_pushresult(luaL_Buffer *B)
{
  lua_State *L = B->L;
  (luaL_pushresult)(B);
  avxbuf_gcpoint(L);
}
#undef luaL_pushresult
#define luaL_pushresult torture_pushresult

static inline void torture_createtable(lua_State *L, int narr, int nrec)
{
  (lua_createtable)(L, narr, nrec);
  avxbuf_gcpoint(L);
}
#undef lua_createtable
#define lua_createtable torture_createtable

#undef lua_pushfstring
#define lua_pushfstring(L, ...) (avxbuf_gcpoint(L), (lua_pushfstring)(L, __VA_ARGS__))
#endif

#endif
