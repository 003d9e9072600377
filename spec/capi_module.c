/* A C module that uses avxbuf's buffers through include/avxbuf.h only (it is
 * not linked against avxbuf), for spec/capi_spec.lua:
 *   capi.isbuffer(v)          -> boolean
 *   capi.sum(buf)             -> the sum of its bytes
 *   capi.new(n, byte)         -> a buffer of n bytes set to byte
 *   capi.append(buf, s)       -> buf, with string s appended (resize, then copy)
 *   capi.version()            -> the C API version avxbuf provides
 *   capi.light(a)             -> a light userdata holding address a (forgeries)
 *   capi.newbuffer(n)         -> api->newbuffer of (size_t)n: -1 asks for SIZE_MAX bytes
 *   capi.resize_top(v, n)     -> api->resize of v, named by the relative index -1
 *   capi.close_probe()        -> an object whose finalizer asks for the C API
 *                                and prints to stderr what it got (lua_close)
 * Built twice: as is, and with -DAVXBUF_API_VERSION=2, as a module made for
 * a future avxbuf would be. */
#include <stdint.h>
#include <stdio.h>
#include "avxbuf.h"

static int isbuffer(lua_State *L)
{
  size_t n;
  lua_pushboolean(L, avxbuf_api_get(L)->tobuffer(L, 1, &n) != NULL);
  return 1;
}

static int sum(lua_State *L)
{
  size_t n;
  const unsigned char *p = avxbuf_api_get(L)->checkbuffer(L, 1, &n);
  lua_Integer s = 0;
  for (size_t i = 0; i < n; i++) s += p[i];
  lua_pushinteger(L, s);
  return 1;
}

static int new_filled(lua_State *L)
{
  const avxbuf_api *api = avxbuf_api_get(L);
  lua_Integer n = luaL_checkinteger(L, 1);
  int byte = (int)luaL_checkinteger(L, 2);
  luaL_argcheck(L, n >= 0, 1, "negative size");
  unsigned char *p = api->newbuffer(api, L, (size_t)n);
  api->fill(api, p, byte, (size_t)n);
  return 1;
}

static int append(lua_State *L)
{
  const avxbuf_api *api = avxbuf_api_get(L);
  size_t n, len;
  api->checkbuffer(L, 1, &n);
  const char *s = luaL_checklstring(L, 2, &len);
  unsigned char *p = api->resize(api, L, 1, n + len);
  api->copy(api, p + n, s, len);
  lua_settop(L, 1);
  return 1;
}

static int version(lua_State *L)
{
  lua_pushinteger(L, avxbuf_api_get(L)->version);
  return 1;
}

static int light(lua_State *L)
{
  lua_pushlightuserdata(L, (void *)(uintptr_t)luaL_checkinteger(L, 1));
  return 1;
}

static int newbuffer(lua_State *L)
{
  const avxbuf_api *api = avxbuf_api_get(L);
  api->newbuffer(api, L, (size_t)luaL_checkinteger(L, 1));
  return 1;
}

static int resize_top(lua_State *L)
{
  const avxbuf_api *api = avxbuf_api_get(L);
  size_t n = (size_t)luaL_checkinteger(L, 2);
  lua_settop(L, 1);
  api->resize(api, L, -1, n);
  return 1;
}

static int probe_get(lua_State *L)
{
  const avxbuf_api *api = avxbuf_api_get(L);
  lua_pushinteger(L, api->version);
  return 1;
}

static int probe_gc(lua_State *L)
{
  lua_pushcfunction(L, probe_get);
  if (lua_pcall(L, 0, 1, 0) == 0)
    fprintf(stderr, "close probe: C API version %d\n", (int)lua_tointeger(L, -1));
  else
    fprintf(stderr, "close probe: error: %s\n", lua_tostring(L, -1));
  return 0;
}

static int close_probe(lua_State *L)
{
  lua_newuserdata(L, 1);
  lua_createtable(L, 0, 1);
  lua_pushcfunction(L, probe_gc);
  lua_setfield(L, -2, "__gc");
  lua_setmetatable(L, -2);
  return 1;
}

__attribute__((visibility("default"))) int luaopen_capi(lua_State *L)
{
  static const luaL_Reg funcs[] = {
    { "isbuffer", isbuffer }, { "sum", sum }, { "new", new_filled }, { "append", append },
    { "version", version }, { "light", light }, { "newbuffer", newbuffer }, { "resize_top", resize_top },
    { "close_probe", close_probe }, { NULL, NULL }
  };
  lua_createtable(L, 0, 9);
  for (const luaL_Reg *f = funcs; f->name; f++) {
    lua_pushcfunction(L, f->func);
    lua_setfield(L, -2, f->name);
  }
  return 1;
}
