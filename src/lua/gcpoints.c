/* The collection the collector-torture build runs at each of its points
 * (src/lua/gcpoints.h). Every module whose C code calls the Lua API links it:
 * avxbuf.so and avxbuf/counters.so, each with its own copy. */
#include "lua/luaapi.h"

#ifdef AVXBUF_GC_TORTURE
static int collecting;

void avxbuf_gcpoint(lua_State *L)
{
  if (collecting) return;
#ifdef LUA_GCISRUNNING
  if (!lua_gc(L, LUA_GCISRUNNING, 0)) return;   /* as the real one: stopped stays stopped */
#endif
  collecting = 1;
  lua_gc(L, LUA_GCCOLLECT, 0);
  collecting = 0;
}
#else
typedef int avxbuf_no_gcpoints;   /* C wants a declaration in every file */
#endif
