/* The Lua code avxbuf runs (lua/avxbuf/ffi.lua and ffi_format.lua, the
 * LuaJIT path, and lua/avxbuf/tune.lua, licence.lua and the stats.lua they
 * use) is part of the shared object, so that require
 * "avxbuf" gives the same module whatever package.path says. The
 * assembler's .incbin takes the files as they are: LuaRocks' builtin build,
 * which compiles from the source tree's top like the Makefile, can run no
 * generator. ELF and the GNU assembler syntax (GCC, clang; x86, aarch64). */
#include <string.h>

#include "lua/lembed.h"

#define EMBED(sym, file)                                                     \
  __asm__(".pushsection .rodata\n"                                           \
          ".hidden " #sym "\n.globl " #sym "\n" #sym ":\n"                   \
          ".incbin \"" file "\"\n"                                           \
          ".hidden " #sym "_end\n.globl " #sym "_end\n" #sym "_end:\n"       \
          ".popsection\n");                                                  \
  extern const char sym[], sym##_end[];

EMBED(avxbuf_lua_ffi, "lua/avxbuf/ffi.lua")
EMBED(avxbuf_lua_ffi_format, "lua/avxbuf/ffi_format.lua")
EMBED(avxbuf_lua_tune, "lua/avxbuf/tune.lua")
EMBED(avxbuf_lua_stats, "lua/avxbuf/stats.lua")
EMBED(avxbuf_lua_licence, "lua/avxbuf/licence.lua")

static const struct {
  const char *name, *chunkname, *start, *end;
} embedded[] = {
  { "avxbuf.ffi", "@lua/avxbuf/ffi.lua", avxbuf_lua_ffi, avxbuf_lua_ffi_end },
  { "avxbuf.ffi_format", "@lua/avxbuf/ffi_format.lua", avxbuf_lua_ffi_format, avxbuf_lua_ffi_format_end },
  { "avxbuf.tune", "@lua/avxbuf/tune.lua", avxbuf_lua_tune, avxbuf_lua_tune_end },
  { "avxbuf.stats", "@lua/avxbuf/stats.lua", avxbuf_lua_stats, avxbuf_lua_stats_end },
  { "avxbuf.licence", "@lua/avxbuf/licence.lua", avxbuf_lua_licence, avxbuf_lua_licence_end },
};

int avxbuf_require_embedded(lua_State *L, const char *name)
{
  lua_getfield(L, LUA_REGISTRYINDEX, "_LOADED");
  int ok = 1;
  if (lua_getfield(L, -1, name) == LUA_TNIL) {
    lua_pop(L, 1);
    size_t k = 0, n = sizeof embedded / sizeof embedded[0];
    while (k < n && strcmp(embedded[k].name, name) != 0) k++;
    if (k == n) {
      lua_pushfstring(L, "avxbuf: no embedded module '%s'", name);
      ok = 0;
    } else {
      ok = luaL_loadbuffer(L, embedded[k].start, (size_t)(embedded[k].end - embedded[k].start),
                           embedded[k].chunkname) == LUA_OK;
      if (ok) {
        lua_pushstring(L, name);
        ok = lua_pcall(L, 1, 1, 0) == LUA_OK;
      }
      if (ok) {
        lua_pushvalue(L, -1);
        lua_setfield(L, -3, name);   /* package.loaded[name], as require keeps it */
      }
    }
  }
  lua_remove(L, -2);   /* _LOADED */
  return ok;
}
