/* The functions and methods each binding file registers, and the other
 * entry points the module entry (lavxbuf.c) calls: the tables it puts
 * together, and nothing else. */
#ifndef AVXBUF_LFUNCS_H
#define AVXBUF_LFUNCS_H

#include "lua/lmodule.h"

extern const luaL_Reg avxbuf_buffer_funcs[], avxbuf_buffer_methods[], avxbuf_buffer_meta[];   /* lbuffer.c */
extern const luaL_Reg avxbuf_settings_funcs[];   /* lsettings.c */
extern const luaL_Reg avxbuf_cpu_funcs[];        /* lcpu.c */
extern const luaL_Reg avxbuf_inspect_funcs[], avxbuf_inspect_methods[], avxbuf_inspect_meta[];   /* linspect.c */
extern const luaL_Reg avxbuf_pack_methods[];     /* lpack.c */

/* lpack.c, for LuaJIT's FFI path (src/luajit/lluajit.c): buf:pack(fmt, v...)
 * appending, with the values as ffi.lua staged them (a string's bytes and
 * length, or a number when s is NULL); the index after the last byte
 * written, or 0, with nothing written, where the C function must pack or
 * raise. Runs no Lua code. */
typedef struct avxbuf_pack_value {
  const char *s;
  int64_t len;
  double n;
} avxbuf_pack_value;
double avxbuf_pack_staged(buffer *b, const char *fmt, size_t len, const avxbuf_pack_value *v, int count);
extern const luaL_Reg avxbuf_io_methods[];       /* lio.c */
extern const luaL_Reg avxbuf_match_methods[];    /* lmatch.c */
extern const luaL_Reg avxbuf_format_methods[];   /* lformat.c */
extern const luaL_Reg avxbuf_split_methods[];    /* lsplit.c */
extern const luaL_Reg avxbuf_measure_funcs[];    /* lmeasure.c */

/* lcapi.c: the C API table of include/avxbuf.h. */
void avxbuf_capi_init(avxbuf_api *api);

/* lluajit.c: under LuaJIT, the module table at the top of the stack gets
 * the FFI path, and its field ffi says whether it is in use. */
void avxbuf_luajit_install(lua_State *L, lmodule *m);

#endif
