/* Shared by the C test harnesses: a fresh Lua state whose require finds the
 * avxbuf.so under test in dir. */
#ifndef AVXBUF_HARNESS_H
#define AVXBUF_HARNESS_H

#include "lua/luaapi.h"
#include "lualib.h"

static lua_State *open_state(const char *dir)
{
  lua_State *L = luaL_newstate();
  luaL_openlibs(L);
  lua_getglobal(L, "package");
  lua_pushfstring(L, "%s/?.so", dir);
  lua_setfield(L, -2, "cpath");
  lua_pop(L, 1);
  return L;
}

#endif
