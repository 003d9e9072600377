/* A Lua host whose allocator can be told to fail: arm(k) makes the k-th
 * allocation from then on, and every one after it, fail (frees and
 * shrinks still succeed) until disarm(), which returns how many failed.
 * spec/oom_spec.lua runs avxbuf's operations under it for every k until
 * one gets through: a failure must be a clean Lua error that leaves every
 * buffer and setting as it was.
 *   oom_host DIR SCRIPT   (DIR holds the avxbuf.so under test) */
#include <stdio.h>
#include <stdlib.h>

#include "lua/luaapi.h"
#include "lualib.h"

static long countdown = -1;   /* -1: nothing fails */
static long failed;

static void *alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
  (void)ud;
  if (nsize == 0) {
    free(ptr);
    return NULL;
  }
  if (countdown == 0 && (ptr == NULL || nsize > osize)) {
    failed++;
    return NULL;
  }
  if (countdown > 0) countdown--;
  return realloc(ptr, nsize);
}

static int l_arm(lua_State *L)
{
  countdown = (long)luaL_checkinteger(L, 1);
  failed = 0;
  return 0;
}

static int l_disarm(lua_State *L)
{
  countdown = -1;
  lua_pushinteger(L, (lua_Integer)failed);
  return 1;
}

int main(int argc, char **argv)
{
  if (argc != 3) {
    fprintf(stderr, "usage: %s DIR SCRIPT\n", argv[0]);
    return 2;
  }
  lua_State *L = lua_newstate(alloc, NULL);
  if (L == NULL) return 1;
  luaL_openlibs(L);
  lua_getglobal(L, "package");
  lua_pushfstring(L, "%s/?.so", argv[1]);
  lua_setfield(L, -2, "cpath");
  lua_pop(L, 1);
  lua_pushcfunction(L, l_arm);
  lua_setglobal(L, "arm");
  lua_pushcfunction(L, l_disarm);
  lua_setglobal(L, "disarm");
  int status = luaL_dofile(L, argv[2]);
  countdown = -1;
  if (status != LUA_OK) fprintf(stderr, "oom_host: %s\n", lua_tostring(L, -1));
  lua_close(L);
  return status == LUA_OK ? 0 : 1;
}
