/* What the Lua binding's files share: the per-state module record, the
 * buffer userdata and its type check, and each file's entry points.
 *   lavxbuf.c   luaopen_avxbuf: the module table, the buffer metatable
 *   largs.c     argument checks and index rules
 *   lbuffer.c   buffers: construction, growth, reads, copy/zero/fill
 *   linspect.c  find, compare, hex; == < <= .. and tostring
 *   lpack.c     pack and unpack (the format parser: packfmt.c)
 *   lmatch.c    find, match, gmatch: Lua 5.4's patterns (the matcher: match.c)
 *   lformat.c   putf: string.format into a buffer
 *   lsplit.c    lines and split: iterators over pieces of a buffer
 *   lio.c       reading and writing files
 *   lsettings.c knobs, kernels, the CPU and the policy as Lua tables
 *   lmeasure.c  kernels timed from C, and tune (lua/avxbuf/tune.lua decides)
 *   lcapi.c     the C API table of include/avxbuf.h
 *   lluajit.c   LuaJIT: hands copy/zero/fill to lua/avxbuf/ffi.lua
 *   lembed.c    the Lua code above, compiled into the module */
#ifndef AVXBUF_LAVXBUF_H
#define AVXBUF_LAVXBUF_H

#include <stdint.h>
#include "compat.h"
#include "gcpoints.h"
#include "dispatch.h"
#include "packfmt.h"
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
  avxbuf_state state;   /* the knobs and the plan made from them */
  size_t unpaced;       /* buffer bytes allocated since the collector was last told */
  size_t refs;
  avxbuf_pk_cache packs; /* formats of pack and unpack, compiled */
} lmodule;

typedef struct anchor {
  const avxbuf_api *api;   /* first: what include/avxbuf.h reads */
  lmodule *module;         /* NULL once collected */
  uintptr_t cookie;        /* its own address plus &avxbuf_anchor_key */
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
 * lua/avxbuf/ffi.lua declares the first five fields (len and cap as
 * int64_t, the same layout only where size_t has 64 bits; it checks the
 * offsets src/lluajit.c gives it), reads them and writes len and gen
 * itself (put, resize within cap): a change to what they mean, or to when
 * gen changes, is a change there too.
 *
 * The rule every function of the binding keeps: anything that can allocate
 * Lua memory (a userdata, a string, a number turned into a string, a
 * luaL_Buffer growing, avxbuf_pace) can run the collector, and so any
 * finalizer, which can free, resize or append to any buffer. No data
 * pointer or length read before such a call is used after it: read them
 * again (the userdata itself stays put while it is on the stack). `gen`
 * tells the FFI path, which cannot avoid allocating between its checks and
 * its moves when interpreted, that this happened. */
typedef struct buffer {
  uintptr_t cookie;      /* its own address plus &avxbuf_cookie_key */
  size_t len;
  unsigned char *data;   /* 64-byte aligned, never NULL */
  size_t cap;            /* bytes usable at data */
  uint32_t gen;          /* changes whenever data, cap or len do */
  void *block;           /* what the allocator returned (NULL: nothing) */
  size_t block_size;
  lmodule *module;       /* whose plan copy, zero and fill use; NULL once collected */
} buffer;

/* Only avxbuf writes a buffer's cookie, and a userdata of another size is
 * never one: no metatable games (debug.setmetatable) can pass this check. */
extern const char avxbuf_cookie_key, avxbuf_anchor_key;

/* A sum, not a XOR: LuaJIT's recorder compiles 64-bit cdata arithmetic
 * but threw on bit.bxor of two uint64_t (2.1.0-beta3), which sent every
 * FFI call to the interpreter. */
static inline uintptr_t buffer_cookie(const buffer *b)
{
  return (uintptr_t)b + (uintptr_t)&avxbuf_cookie_key;
}

/* Two API calls: lua_touserdata (NULL for anything but userdata) and
 * lua_rawlen (0 for light userdata). */
static inline buffer *testbuffer(lua_State *L, int idx)
{
  buffer *b = (buffer *)lua_touserdata(L, idx);
  if (b == NULL || lua_rawlen(L, idx) != sizeof(buffer) || b->cookie != buffer_cookie(b)) return NULL;
  return b;
}

/* largs.c: argument checks, each raising "bad argument #arg" */
int avxbuf_argtype(lua_State *L, int arg, const char *expected);   /* the type error */
int avxbuf_notbuffer(lua_State *L, int arg);   /* avxbuf_argtype(L, arg, BUFFER_NAME) */
/* lua_pushfstring with the C library's formats (%lld on every Lua version). */
const char *avxbuf_pushf(lua_State *L, const char *fmt, ...);
/* A buffer or a Lua string (not a number: no silent coercion). */
const unsigned char *avxbuf_checkbytes(lua_State *L, int arg, size_t *len, buffer **as_buffer);
int avxbuf_checkbyte(lua_State *L, int arg);
/* A buffer size: 0..MAX_LENGTH. */
size_t avxbuf_checksize(lua_State *L, int arg, lua_Integer n);
/* string.sub's start rule: negative from the end, then at least 1. */
size_t avxbuf_sub_start(lua_Integer i, size_t len);
/* [*start, *start + count) for string.sub-style arguments i (default 1) and
 * j (default -1, or i itself as string.byte has it). */
size_t avxbuf_sub_range(lua_State *L, int arg_i, int j_defaults_to_i, size_t len, size_t *start);
/* A write (or read) position: 1 <= i <= len + 1; the 0-based offset. */
size_t avxbuf_checkindex(lua_State *L, int arg, lua_Integer i, size_t len);
/* A length at offset off of len bytes: 0 <= n <= len - off, by default all
 * of it; `what` names the bytes in the error. */
size_t avxbuf_checkcount(lua_State *L, int arg, size_t off, size_t len, const char *what);

/* luaL_checkinteger and luaL_optinteger with the common case (an integer is
 * there) first: one API call instead of two or three on the hot path. */
static inline lua_Integer checkint(lua_State *L, int arg)
{
  int isint;
  lua_Integer v = lua_tointegerx(L, arg, &isint);
  return isint ? v : luaL_checkinteger(L, arg);
}

static inline lua_Integer optint(lua_State *L, int arg, lua_Integer dflt)
{
  int isint;
  lua_Integer v = lua_tointegerx(L, arg, &isint);
  if (isint) return v;
  return lua_isnoneornil(L, arg) ? dflt : luaL_checkinteger(L, arg);
}

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

static inline void buffer_setlen(buffer *b, size_t n)
{
  b->len = n;
  b->gen++;
}

/* Pushes bytes [off, off + n) of b as a string and returns 1, or returns 0
 * and pushes nothing when a finalizer run on the way has shortened b so
 * that they are gone. The range must be checked just before the call. */
int avxbuf_pushbytes(lua_State *L, buffer *b, size_t off, size_t n);
/* Pushes a userdata of n bytes to build a result in before it becomes a
 * string: made first, so that no buffer pointer is held while it is. */
char *avxbuf_pushscratch(lua_State *L, size_t n);

/* Pushes a new buffer of n zero bytes; mt is the metatable's absolute or
 * pseudo-index. */
buffer *avxbuf_pushbuffer(lua_State *L, lmodule *m, int mt, size_t n);
/* Sets the length to n (new bytes zero); arg names n in errors. */
void avxbuf_resize(lua_State *L, lmodule *m, buffer *b, size_t n, int arg);
/* Capacity for need bytes, keeping the first `keep`; runs no Lua code and
 * leaves b unchanged when memory runs out. */
void avxbuf_reserve(lua_State *L, lmodule *m, buffer *b, size_t need, size_t keep);
/* Tells the collector about the buffer memory allocated since last time;
 * call it last, when no pointer into a buffer is held (finalizers may run). */
void avxbuf_pace(lua_State *L, lmodule *m);
extern const luaL_Reg avxbuf_buffer_funcs[], avxbuf_buffer_methods[], avxbuf_buffer_meta[];

/* lsettings.c, linspect.c, lpack.c, lio.c, lformat.c, lsplit.c, lmeasure.c */
extern const luaL_Reg avxbuf_settings_funcs[];
extern const luaL_Reg avxbuf_inspect_funcs[], avxbuf_inspect_methods[], avxbuf_inspect_meta[];
extern const luaL_Reg avxbuf_pack_methods[], avxbuf_io_methods[];
extern const luaL_Reg avxbuf_match_methods[];   /* lmatch.c */
extern const luaL_Reg avxbuf_format_methods[], avxbuf_split_methods[];
extern const luaL_Reg avxbuf_measure_funcs[];

/* lembed.c: require(name) of a Lua module compiled into avxbuf
 * (avxbuf.ffi, avxbuf.tune): pushes it and returns 1, or pushes the error
 * and returns 0. */
int avxbuf_require_embedded(lua_State *L, const char *name);

/* lcapi.c */
void avxbuf_capi_init(avxbuf_api *api);

/* lluajit.c: under LuaJIT, the module table at the top of the stack gets
 * the FFI path, and its field ffi says whether it is in use. */
void avxbuf_luajit_install(lua_State *L, lmodule *m);

#endif
