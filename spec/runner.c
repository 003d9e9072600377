/* A few-line Lua interpreter for running the specs where no lua5.4 binary of
 * the target architecture can be installed (aarch64 under qemu-aarch64):
 * runner SCRIPT [ARGS...], with `arg` set as lua5.4 sets it. */
#include <stdio.h>
#include "lua.h"
#include "lauxlib.h"
#include "lualib.h"

int main(int argc, char **argv)
{
  if (argc < 2) { fprintf(stderr, "usage: runner SCRIPT [ARGS...]\n"); return 2; }
  lua_State *L = luaL_newstate();
  luaL_openlibs(L);
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
