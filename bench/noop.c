/* A C function that does nothing, for the call-cost table of
 * bench/kernels.lua: what a call from Lua costs before any work. */
#include "lua.h"

static int noop(lua_State *L)
{
  (void)L;
  return 0;
}

__attribute__((visibility("default"))) int luaopen_noop(lua_State *L)
{
  lua_pushcfunction(L, noop);
  return 1;
}
