/* avxbuf: the module entry, on top of the binding; nothing includes or
 * calls into it. One record per Lua state (lmodule: its knobs and plan, its
 * C API table, its compiled pack formats) held by an anchor userdata, the
 * buffer metatable, and the functions and methods of every binding file's
 * lists below, each with the anchor (upvalue 1) and the metatable (upvalue
 * 2). Under LuaJIT, lua/avxbuf/ffi.lua then replaces copy, zero, fill, put,
 * resize, pack and unpack with FFI code (lluajit.c). The binding's files:
 *   lmodule.c   the module record, the anchor and buffer types' checks
 *   largs.c     argument checks and index rules
 *   lbuffer.c   buffers: construction, growth, reads, copy/zero/fill
 *   linspect.c  compare, hex, ref; == < <= .. and tostring
 *   lpack.c     pack and unpack (the format parser: packfmt.c)
 *   lmatch.c    the plain search (find, rfind, split's), and find, match,
 *               gmatch: Lua 5.4's patterns (the matcher: match.c)
 *   lformat.c   putf: string.format into a buffer
 *   lsplit.c    lines and split: iterators over pieces of a buffer
 *   lio.c       reading and writing files
 *   lsettings.c knobs and kernels as Lua tables
 *   lcpu.c      the CPU and the policy as Lua tables (cpu, decide)
 *   lmeasure.c  kernels timed from C, and tune (lua/avxbuf/tune.lua decides)
 *   lcapi.c     the C API table of include/avxbuf.h
 *   lluajit.c   LuaJIT: hands copy/zero/fill/put/pack... to lua/avxbuf/ffi.lua
 *   lembed.c    the Lua code above, compiled into the module */
#define _GNU_SOURCE   /* dladdr */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__unix__) || defined(__APPLE__)
#include <dlfcn.h>
#endif

#include "lua/lmodule.h"
#include "lua/lfuncs.h"
#include "core/packfmt.h"

/* What each table gets, from the files that define it. */
static const luaL_Reg *const meta[] = { avxbuf_buffer_meta, avxbuf_inspect_meta, NULL };
static const luaL_Reg *const funcs[] = { avxbuf_buffer_funcs, avxbuf_inspect_funcs, avxbuf_settings_funcs,
                                         avxbuf_cpu_funcs, avxbuf_measure_funcs, NULL };
static const luaL_Reg *const methods[] = {
  avxbuf_buffer_methods, avxbuf_inspect_methods, avxbuf_pack_methods, avxbuf_io_methods, avxbuf_match_methods,
  avxbuf_format_methods, avxbuf_split_methods, NULL };
/* Methods that are the module's own closures: buf:copy == avxbuf.copy. */
static const char *const shared_methods[] = { "copy", "zero", "fill", NULL };

/* Registers lists of functions in the table on top of the stack, each
 * closing over the anchor and the metatable (absolute indices). */
static void set_funcs(lua_State *L, int anchor, int mt, const luaL_Reg *const *lists)
{
  for (; *lists; lists++) {
    lua_pushvalue(L, anchor);
    lua_pushvalue(L, mt);
    luaL_setfuncs(L, *lists, 2);
  }
}

static void warn_stderr(void *ud, const char *message)
{
  (void)ud;
  fprintf(stderr, "%s\n", message);
}

static int l_anchor_gc(lua_State *L)
{
  anchor *a = avxbuf_testanchor(L, 1);
  if (a && a->module) {
    /* The registry keeps the anchor until lua_close frees every object,
     * after every finalizer: those that run later (objects made before
     * require "avxbuf") find no table, not a freed one. */
    a->api = NULL;
    avxbuf_module_unref(L, a->module);
    a->module = NULL;
  }
  return 0;
}

/* Pushes this state's anchor: the registry's, or a new one with a new
 * module record (settings from AVXBUF_OPTIONS). */
static lmodule *push_anchor(lua_State *L)
{
  lua_getfield(L, LUA_REGISTRYINDEX, AVXBUF_API_KEY);
  anchor *a = avxbuf_testanchor(L, -1);
  if (a && a->module) return a->module;
  lua_pop(L, 1);
  a = (anchor *)lua_newuserdatauv(L, sizeof *a, 0);
  a->api = NULL;
  a->module = NULL;
  a->cookie = avxbuf_cookie(a, &avxbuf_anchor_key);
  luaL_newmetatable(L, "avxbuf.module");
  lua_pushcfunction(L, l_anchor_gc);
  lua_setfield(L, -2, "__gc");
  lua_setmetatable(L, -2);
  void *ud;
  lua_Alloc alloc = lua_getallocf(L, &ud);
  lmodule *m = (lmodule *)alloc(ud, NULL, 0, sizeof *m);
  avxbuf_pk_cache *packs = m ? (avxbuf_pk_cache *)alloc(ud, NULL, 0, sizeof *packs) : NULL;
  if (packs == NULL) {
    if (m) alloc(ud, m, sizeof *m, 0);
    luaL_error(L, "not enough memory");
  }
  memset(m, 0, sizeof *m);   /* every counter starts at 0, whatever fields come */
  avxbuf_state_init(&m->state, getenv("AVXBUF_OPTIONS"), warn_stderr, NULL);
  avxbuf_capi_init(&m->api);
  m->alloc = alloc;
  m->alloc_ud = ud;
  m->refs = 1;
  avxbuf_pk_cache_init(packs, AVXBUF_PK_LUA);
  m->packs = packs;
  a->module = m;
  a->api = &m->api;
  lua_pushvalue(L, -1);
  lua_setfield(L, LUA_REGISTRYINDEX, AVXBUF_API_KEY);
  return m;
}

/* LuaJIT's lua_close finalizes in rounds and unloads C libraries in an
 * early one: a buffer a finalizer made had its __gc called later, in code
 * no longer mapped (SIGSEGV; spec/gc_spec.lua). So the library pins itself:
 * RTLD_NODELETE on the handle it is already loaded under keeps its code
 * for the life of the process. The price: a state made after a lua_close
 * in the same process runs this copy, not a file replaced since. */
static void pin_library(void)
{
#if defined(RTLD_NODELETE) && defined(RTLD_NOLOAD)
  Dl_info info;
  if (dladdr((void *)&pin_library, &info) && info.dli_fname != NULL)
    (void)dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
#endif
}

__attribute__((visibility("default"))) int luaopen_avxbuf(lua_State *L)
{
  pin_library();
  lmodule *m = push_anchor(L);
  int anchor = lua_gettop(L);                       /* upvalue 1 */
  luaL_newmetatable(L, BUFFER_NAME);                /* upvalue 2 */
  int mt = anchor + 1;
  set_funcs(L, anchor, mt, meta);
  lua_newtable(L);                                  /* the module */
  set_funcs(L, anchor, mt, funcs);
  lua_newtable(L);                                  /* the methods */
  set_funcs(L, anchor, mt, methods);
  for (int i = 0; shared_methods[i]; i++) {
    lua_getfield(L, -2, shared_methods[i]);
    lua_setfield(L, -2, shared_methods[i]);
  }
  lua_setfield(L, mt, "__index");

  lua_pushboolean(L, avxbuf_machine_get()->emulated);
  lua_setfield(L, -2, "emulated");
  lua_pushliteral(L, AVXBUF_VERSION);
  lua_setfield(L, -2, "version");
  avxbuf_luajit_install(L, m);
  return 1;
}
