/* A few-line Lua interpreter: runner SCRIPT [ARGS...], with `arg` set as
 * lua5.4 sets it. Two uses: running the specs where no lua5.4 binary of the
 * target architecture can be installed (aarch64 under qemu-aarch64), and,
 * built with -DAVXBUF_STATIC against libavxbuf.a, as the host program of
 * an embedder, which registers avxbuf's openers before running any Lua. */
#include <stdio.h>
#include "lua.h"
#include "lauxlib.h"
#include "lualib.h"
#ifdef AVXBUF_STATIC
#include "avxbuf.h"
#endif

int main(int argc, char **argv)
{
  if (argc < 2) { fprintf(stderr, "usage: runner SCRIPT [ARGS...]\n"); return 2; }
  lua_State *L = luaL_newstate();
  luaL_openlibs(L);
#ifdef AVXBUF_STATIC
  luaL_requiref(L, "avxbuf", luaopen_avxbuf, 0);
  luaL_requiref(L, "avxbuf.counters", luaopen_avxbuf_counters, 0);
  lua_pop(L, 2);
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
