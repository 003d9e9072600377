/* The harness both Lua fuzzers share (fuzz_pack.c, fuzz_match.c): one Lua
 * 5.4 state with avxbuf, kept across inputs, in which a check chunk runs
 * and returns nil, or what differs from the string library's answer. */
#ifndef FUZZ_LUA_ORACLE_H
#define FUZZ_LUA_ORACLE_H

#include <stdio.h>
#include <stdlib.h>
#include "lua.h"
#include "lauxlib.h"
#include "lualib.h"
#include "avxbuf.h"

static lua_State *L;

/* Leaves check compiled and the avxbuf module on the stack; the fuzzer
 * pushes the rest of check's arguments. */
static void oracle_begin(const char *check)
{
  if (L == NULL) {
    L = luaL_newstate();
    luaL_openlibs(L);
    luaL_requiref(L, "avxbuf", luaopen_avxbuf, 0);
    lua_pop(L, 1);
  }
  lua_settop(L, 0);
  if (luaL_loadstring(L, check) != LUA_OK) abort();
  lua_getglobal(L, "require");
  lua_pushliteral(L, "avxbuf");
  lua_call(L, 1, 1);
}

/* Runs check with the module and nargs more arguments: any error or
 * difference aborts, naming the fuzzer. */
static void oracle_end(int nargs, const char *fuzzer)
{
  if (lua_pcall(L, 1 + nargs, 1, 0) != LUA_OK || !lua_isnil(L, -1)) {
    fprintf(stderr, "%s: %s\n", fuzzer, lua_tostring(L, -1));
    abort();
  }
  lua_gc(L, LUA_GCSTEP, 0);
}

#endif
