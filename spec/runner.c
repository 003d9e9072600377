/* A few-line Lua interpreter: runner SCRIPT [ARGS...], with `arg` set as
 * lua5.4 sets it. Two uses: running the specs where no lua5.4 binary of the
 * target architecture can be installed (aarch64 under qemu-aarch64), and,
 * built with -DAVXBUF_STATIC against libavxbuf.a, as the host program of
 * an embedder, which registers avxbuf's openers before running any Lua
 * (on every Lua the module supports: make static LUA=luajit). */
#include <stdio.h>
#include "lua.h"
#include "lauxlib.h"
#include "lualib.h"
#ifdef AVXBUF_STATIC
#include "avxbuf.h"
#endif

#if LUA_VERSION_NUM < 502
#define LUA_OK 0
#endif

#ifdef AVXBUF_STATIC
/* Registers a built-in module as luaL_requiref(L, name, open, 0) does, which
 * Lua 5.1 and LuaJIT lack: the opener's result stored in package.loaded. */
static void requiref(lua_State *L, const char *name, lua_CFunction open)
{
#if LUA_VERSION_NUM >= 502
  luaL_requiref(L, name, open, 0);
#else
  lua_pushcfunction(L, open);
  lua_pushstring(L, name);
  lua_call(L, 1, 1);
  lua_getfield(L, LUA_REGISTRYINDEX, "_LOADED");
  lua_pushvalue(L, -2);
  lua_setfield(L, -2, name);
  lua_pop(L, 1);
#endif
  lua_pop(L, 1);
}
#endif

int main(int argc, char **argv)
{
  if (argc < 2) { fprintf(stderr, "usage: runner SCRIPT [ARGS...]\n"); return 2; }
  lua_State *L = luaL_newstate();
  luaL_openlibs(L);
#ifdef AVXBUF_STATIC
  requiref(L, "avxbuf", luaopen_avxbuf);
  requiref(L, "avxbuf.counters", luaopen_avxbuf_counters);
#endif
  lua_createtable(L, argc - 2, 2);
  for (int i = 0; i < argc; i++) {
    lua_pushstring(L, argv[i]);
    lua_rawseti(L, -2, i - 1);
  }
  lua_setglobal(L, "arg");
  int status = luaL_dofile(L, argv[1]);
  if (status != LUA_OK) fprintf(stderr, "%s\n", lua_tostring(L, -1));
  lua_close(L);
  return status == LUA_OK ? 0 : 1;
}
