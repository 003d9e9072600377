/* What every file of the Lua binding stands on: the per-state module
 * record, and the two userdata avxbuf makes (the record's anchor, buffers)
 * with their unforgeable checks. */
#ifndef AVXBUF_LMODULE_H
#define AVXBUF_LMODULE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "lua/luaapi.h"
#include "core/dispatch.h"
#include "core/buffer.h"
#include "../include/avxbuf.h"   /* from src/, as every include here: include/avxbuf.h */

#define BUFFER_NAME "avxbuf.buffer"

/* This Lua's sizes for the pack formats (core/packfmt.h), as lstrlib.c's
 * string.pack takes them (its LUAI_MAXALIGN: lua_Number, double, a
 * pointer, lua_Integer, long). */
#define AVXBUF_PK_LUA \
  ((avxbuf_pk_lua){ sizeof(lua_Integer), sizeof(lua_Number), \
                    _Alignof(union { lua_Number n; double u; void *s; lua_Integer i; long l; }) })

typedef struct lmodule {
  avxbuf_api api;       /* first: the C API's table is the record */
  avxbuf_state state;   /* the knobs and the plan made from them */
  buffer_stats stats;   /* what growth counted (src/core/buffer.h) */
  size_t held_paced;    /* stats.held, after the collector was last told */
  lua_Alloc alloc;      /* the state's allocator when the module was made, for */
  void *alloc_ud;       /* growth where there is no state (the FFI path) */
  size_t refs;
  struct avxbuf_pk_cache *packs;   /* lpack.c's compiled formats: their own block, */
                                   /* made and freed with the record (packfmt.h) */
  void *stage;          /* the FFI path's stage (src/luajit/lluajit.c), made at its install */
  size_t stage_size;    /* and freed with the record; NULL elsewhere */
} lmodule;

typedef struct anchor {
  const avxbuf_api *api;   /* first: what include/avxbuf.h reads */
  lmodule *module;         /* NULL once collected */
  uintptr_t cookie;        /* its own address plus &avxbuf_anchor_key */
} anchor;

/* The anchor at idx, or NULL for anything else. */
anchor *avxbuf_testanchor(lua_State *L, int idx);
/* The module record of the running function (upvalue 1), checked: a
 * replaced upvalue (debug.setupvalue) is an error, not a crash. */
lmodule *avxbuf_module(lua_State *L);
#define MODULE(L) avxbuf_module(L)
/* Drops a reference (the anchor's or a buffer's); the last frees m. */
void avxbuf_module_unref(lua_State *L, lmodule *m);
/* Upvalue 2 of the buffer functions: the buffer metatable. */
#define METATABLE lua_upvalueindex(2)

/* Buffers (src/core/buffer.h): the rule every function of the binding keeps: anything that can allocate
 * Lua memory (a userdata, a string, a number turned into a string, a
 * luaL_Buffer growing, avxbuf_pace) can run the collector, and so any
 * finalizer, which can free, resize or append to any buffer. No data
 * pointer or length read before such a call is used after it: read them
 * again (the userdata itself stays put while it is on the stack). `gen`
 * tells the FFI path, which cannot avoid allocating between its checks and
 * its moves when interpreted, that this happened.
 */

/* Only avxbuf writes a buffer's cookie, and a userdata of another size is
 * never one: no metatable games (debug.setmetatable) can pass this check. */
extern const char avxbuf_cookie_key, avxbuf_anchor_key;

/* The cookie of one of avxbuf's own userdata, in one of its fields: its address
 * plus the address of a key of its kind, a static no other code can name.
 * A sum, not a XOR: LuaJIT's recorder compiles 64-bit cdata arithmetic
 * but threw on bit.bxor of two uint64_t (2.1.0-beta3), which sent every
 * FFI call to the interpreter (ffi.lua checks buffers' cookies too). */
static inline uintptr_t avxbuf_cookie(const void *p, const char *key)
{
  return (uintptr_t)p + (uintptr_t)key;
}

/* The one test of a private userdata (buffers, module anchors, gmatch
 * states): the value at idx if it is a full userdata of at least *size
 * bytes whose cookie, at byte `at`, is key's, with its size in *size; else
 * NULL. Two API calls: lua_touserdata (NULL for anything but userdata) and
 * lua_rawlen (0 for light userdata), so that the size is checked before
 * the cookie is read. */
static inline void *avxbuf_testprivate(lua_State *L, int idx, const char *key, size_t at, size_t *size)
{
  unsigned char *p = (unsigned char *)lua_touserdata(L, idx);
  if (p == NULL) return NULL;
  size_t n = lua_rawlen(L, idx);
  uintptr_t cookie;
  if (n < *size) return NULL;
  memcpy(&cookie, p + at, sizeof cookie);
  if (cookie != avxbuf_cookie(p, key)) return NULL;
  *size = n;
  return p;
}

static inline uintptr_t buffer_cookie(const buffer *b) { return avxbuf_cookie(b, &avxbuf_cookie_key); }

static inline buffer *testbuffer(lua_State *L, int idx)
{
  size_t size = sizeof(buffer);
  buffer *b = (buffer *)avxbuf_testprivate(L, idx, &avxbuf_cookie_key, offsetof(buffer, cookie), &size);
  return size == sizeof(buffer) ? b : NULL;
}

/* The record whose settings b's operations use: its own, or (a buffer
 * brought back by a finalizer after __gc) the running function's. */
static inline lmodule *buffer_module(lua_State *L, const buffer *b)
{
  return b->module ? b->module : avxbuf_module(L);
}

#endif
