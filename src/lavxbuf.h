/* What the Lua binding's files share: the per-state module record, the
 * buffer userdata and its type check, and each file's entry points.
 *   lavxbuf.c   luaopen_avxbuf: the module table, the buffer metatable
 *   lbuffer.c   buffers: construction, growth, reads, copy/zero/fill
 *   lsettings.c knobs, kernels, the CPU and the policy as Lua tables
 *   lcapi.c     the C API table of include/avxbuf.h
 *   lluajit.c   LuaJIT: hands copy/zero/fill to lua/avxbuf/ffi.lua */
#ifndef AVXBUF_LAVXBUF_H
#define AVXBUF_LAVXBUF_H

#include <stdint.h>
#include "compat.h"
#include "dispatch.h"
#include "../include/avxbuf.h"

#define BUFFER_NAME "avxbuf.buffer"
#define BUFFER_ALIGN 64

/* Largest buffer: lengths, indices and their sums stay exact in lua_Integer
 * (and in a double, for Lua 5.1/5.2), and twice it fits in size_t. */
#if SIZE_MAX > 0xFFFFFFFFu
#define MAX_LENGTH ((size_t)1 << 48)
#else
#define MAX_LENGTH ((size_t)1 << 30)
#endif

/* One per Lua state that loaded avxbuf (loading it again reuses it), from
 * the Lua allocator. It lives while anything refers to it: its anchor (a
 * userdata: upvalue 1 of every function and the registry's AVXBUF_API_KEY)
 * and every buffer, which keeps a pointer for the hot path. */
typedef struct lmodule {
  avxbuf_api api;       /* first: the C API's table is the record */
  avxbuf_state settings;
  size_t unpaced;       /* buffer bytes allocated since the collector was last told */
  size_t refs;
} lmodule;

typedef struct anchor {
  const avxbuf_api *api;   /* first: what include/avxbuf.h reads */
  lmodule *module;         /* NULL once collected */
  uintptr_t cookie;        /* its own address XOR &avxbuf_anchor_key */
} anchor;

/* The module record of the running function (upvalue 1), checked: a
 * replaced upvalue (debug.setupvalue) is an error, not a crash. */
lmodule *avxbuf_module(lua_State *L);
#define MODULE(L) avxbuf_module(L)
void avxbuf_module_unref(lua_State *L, lmodule *m);
/* Upvalue 2 of the buffer functions: the buffer metatable. */
#define METATABLE lua_upvalueindex(2)

/* The buffer userdata. Its data lives in a block from the Lua state's
 * allocator, so that growth can move it and free() can return it at once.
 * lua/avxbuf/ffi.lua mirrors the first three fields. */
typedef struct buffer {
  uintptr_t cookie;      /* its own address XOR &avxbuf_cookie_key */
  size_t len;
  unsigned char *data;   /* 64-byte aligned, never NULL */
  size_t cap;            /* bytes usable at data */
  void *block;           /* what the allocator returned (NULL: nothing) */
  size_t block_size;
  lmodule *module;       /* whose settings copy, zero and fill use; NULL once collected */
} buffer;

/* Only avxbuf writes a buffer's cookie, and a userdata of another size is
 * never one: no metatable games (debug.setmetatable) can pass this check. */
extern const char avxbuf_cookie_key, avxbuf_anchor_key;

static inline uintptr_t buffer_cookie(const buffer *b)
{
  return (uintptr_t)b ^ (uintptr_t)&avxbuf_cookie_key;
}

/* Two API calls: lua_touserdata (NULL for anything but userdata) and
 * lua_rawlen (0 for light userdata). */
static inline buffer *testbuffer(lua_State *L, int idx)
{
  buffer *b = (buffer *)lua_touserdata(L, idx);
  if (b == NULL || lua_rawlen(L, idx) != sizeof(buffer) || b->cookie != buffer_cookie(b)) return NULL;
  return b;
}

/* lbuffer.c */
int avxbuf_notbuffer(lua_State *L, int arg);   /* raises the type error */

static inline buffer *checkbuffer(lua_State *L, int arg)
{
  buffer *b = testbuffer(L, arg);
  if (b == NULL) avxbuf_notbuffer(L, arg);
  return b;
}

/* The record whose settings b's operations use: its own, or (a buffer
 * brought back by a finalizer after __gc) the running function's. */
static inline lmodule *buffer_module(lua_State *L, const buffer *b)
{
  return b->module ? b->module : avxbuf_module(L);
}

/* Pushes a new buffer of n zero bytes; mt is the metatable's absolute or
 * pseudo-index. */
buffer *avxbuf_pushbuffer(lua_State *L, lmodule *m, int mt, size_t n);
/* Sets the length to n (new bytes zero); arg names n in errors. */
void avxbuf_resize(lua_State *L, lmodule *m, buffer *b, size_t n, int arg);
/* Tells the collector about the buffer memory allocated since last time;
 * call it last, when no pointer into a buffer is held (finalizers may run). */
void avxbuf_pace(lua_State *L, lmodule *m);
extern const luaL_Reg avxbuf_buffer_funcs[], avxbuf_buffer_methods[], avxbuf_buffer_meta[];

/* lsettings.c */
extern const luaL_Reg avxbuf_settings_funcs[];

/* lcapi.c */
void avxbuf_capi_init(avxbuf_api *api);

/* lluajit.c: under LuaJIT, the module table at the top of the stack gets
 * the FFI path, and its field ffi says whether it is in use. */
void avxbuf_luajit_install(lua_State *L, lmodule *m);

#endif
