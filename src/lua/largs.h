/* Argument checks of the binding, each raising "bad argument #arg", and
 * string.sub's index rules. */
#ifndef AVXBUF_LARGS_H
#define AVXBUF_LARGS_H

#include "lua/lmodule.h"

int avxbuf_argtype(lua_State *L, int arg, const char *expected);   /* the type error */
int avxbuf_notbuffer(lua_State *L, int arg);   /* avxbuf_argtype(L, arg, BUFFER_NAME) */
/* lua_pushfstring with the C library's formats (%lld on every Lua version). */
const char *avxbuf_pushf(lua_State *L, const char *fmt, ...);
/* A buffer or a Lua string (not a number: no silent coercion). */
const unsigned char *avxbuf_checkbytes(lua_State *L, int arg, size_t *len, buffer **as_buffer);
int avxbuf_checkbyte(lua_State *L, int arg);
/* A buffer size: 0..MAX_LENGTH. */
static inline int avxbuf_issize(lua_Integer n) { return n >= 0 && (unsigned long long)n <= MAX_LENGTH; }
size_t avxbuf_checksize(lua_State *L, int arg, lua_Integer n);   /* raises unless avxbuf_issize */
/* The one error of growth past MAX_LENGTH ("the buffer would exceed N
 * bytes"), blaming argument arg. */
int avxbuf_toolarge(lua_State *L, int arg);
/* len + more, which argument arg asks to grow a buffer of len bytes to;
 * avxbuf_toolarge beyond MAX_LENGTH. */
static inline size_t avxbuf_checkgrowth(lua_State *L, int arg, size_t len, unsigned long long more)
{
  if (more > MAX_LENGTH - len) avxbuf_toolarge(L, arg);
  return len + (size_t)more;
}
/* "n bytes" or "1 byte": the plural rule of every message that counts bytes. */
#define AVXBUF_BYTES(n) ((n) == 1 ? "byte" : "bytes")
/* The first byte: the default of init (as string.find's and
 * string.gmatch's), of copy's source index and of zero's and fill's
 * start. */
#define AVXBUF_FIRST 1
/* [i, i + n) lies within len bytes (1-based i). Compared as 64-bit numbers
 * before any cast to size_t: on a 32-bit size_t, (size_t)2^62 is 0, and a
 * copy of 2^62 bytes would pass as an empty one. */
static inline int avxbuf_in_range(lua_Integer i, lua_Integer n, size_t len)
{
  return i >= 1 && n >= 0 && (unsigned long long)(i - 1) <= len
         && (unsigned long long)n <= len - (size_t)(i - 1);
}
/* copy's range rule: n bytes (unless n_given, the rest of the source from
 * si) from index si of slen bytes to index di of dlen bytes; the count, or
 * -1 when either range is not within its bytes. l_copy's fast tier and the
 * FFI path (src/luajit/lluajit.c) ask it; copy_checked says what is wrong. */
static inline lua_Integer avxbuf_copy_count(lua_Integer di, size_t dlen, lua_Integer si, size_t slen, int n_given,
                                            lua_Integer n)
{
  if (!n_given) n = si >= 1 && (unsigned long long)(si - 1) <= slen ? (lua_Integer)(slen - (size_t)(si - 1)) : -1;
  return avxbuf_in_range(si, n, slen) && avxbuf_in_range(di, n, dlen) ? n : -1;
}
/* A byte's value, as fill takes it. */
static inline int avxbuf_isbyte(lua_Integer c) { return c >= 0 && c <= 255; }
/* zero's and fill's: byte c over n bytes (unless n_given, the rest) from
 * index i of len bytes; the count, or -1 (for a value that is no byte too). */
static inline lua_Integer avxbuf_fill_count(lua_Integer c, lua_Integer i, size_t len, int n_given, lua_Integer n)
{
  return avxbuf_isbyte(c) ? avxbuf_copy_count(i, len, i, len, n_given, n) : -1;
}
/* string.sub's start rule: negative from the end, then at least 1. */
size_t avxbuf_sub_start(lua_Integer i, size_t len);
/* Where an iteration from init starts (init 1 unless given), as a 0-based
 * offset into len bytes: lines' and split's rule, for their C functions and
 * the FFI path's entry alike (src/luajit/lluajit.c). */
size_t avxbuf_start_offset(int given, lua_Integer init, size_t len);
/* [*start, *start + count) for string.sub-style arguments i (default 1) and
 * j (default -1, or i itself as string.byte has it). */
size_t avxbuf_sub_range(lua_State *L, int arg_i, int j_defaults_to_i, size_t len, size_t *start);
/* A write (or read) position: 1 <= i <= len + 1; the 0-based offset. */
size_t avxbuf_checkindex(lua_State *L, int arg, lua_Integer i, size_t len);
/* A length at offset off of len bytes: 0 <= n <= len - off, by default all
 * of it; `what` names the bytes in the error. */
size_t avxbuf_checkcount(lua_State *L, int arg, size_t off, size_t len, const char *what);

/* The one family of integer readers; every integer argument goes through
 * one of them. testint and testoptint never raise: they are the fast tier
 * of copy, zero and fill, which hand anything else to a checked tier.
 * checkint and optint are luaL_checkinteger and luaL_optinteger with the
 * common case (an integer is there) first: one API call instead of two or
 * three on the hot path. */

/* Argument arg as an integer (in *v): 1, or 0 for anything else. */
static inline int testint(lua_State *L, int arg, lua_Integer *v)
{
  int isint;
  *v = lua_tointegerx(L, arg, &isint);
  return isint;
}

/* Argument arg (of top) as an integer, or dflt when absent or nil: 1, or
 * 0 for anything else. */
static inline int testoptint(lua_State *L, int arg, int top, lua_Integer dflt, lua_Integer *v)
{
  *v = dflt;
  if (arg > top) return 1;
  lua_Integer i;
  if (testint(L, arg, &i)) { *v = i; return 1; }
  return lua_isnil(L, arg);
}

static inline lua_Integer checkint(lua_State *L, int arg)
{
  lua_Integer v;
  return testint(L, arg, &v) ? v : luaL_checkinteger(L, arg);
}

static inline lua_Integer optint(lua_State *L, int arg, lua_Integer dflt)
{
  lua_Integer v;
  if (testint(L, arg, &v)) return v;
  return lua_isnoneornil(L, arg) ? dflt : luaL_checkinteger(L, arg);
}

/* lua_Integer's limits (LUA_MININTEGER and LUA_MAXINTEGER exist from 5.3 on). */
#define AVXBUF_INTEGER_MAX ((lua_Integer)(~0ull >> (65 - 8 * sizeof(lua_Integer))))
#define AVXBUF_INTEGER_MIN (-AVXBUF_INTEGER_MAX - 1)

/* Whether the value at idx is a number with an integer value in lo..hi (a
 * string is not one: a table's fields are not coerced), in *v. */
int avxbuf_isint(lua_State *L, int idx, lua_Integer lo, lua_Integer hi, lua_Integer *v);
/* Field `name` of the table at argument arg: such an integer, or dflt when
 * it is nil (a dflt outside lo..hi makes the field required); anything
 * else raises "field 'name' must be an integer from lo to hi" naming arg. */
lua_Integer avxbuf_intfield(lua_State *L, int arg, const char *name, lua_Integer lo, lua_Integer hi,
                            lua_Integer dflt);

/* checkint for a size or count: a whole number beyond the Lua's own exact
 * integers (2^53 on 5.1, 5.2 and LuaJIT) but within lua_Integer is taken
 * as that integer, so that new, resize and reserve of 2^62 say what 5.4
 * says ("size too large"), not "number has no integer representation". */
lua_Integer avxbuf_checkwhole(lua_State *L, int arg);

static inline buffer *checkbuffer(lua_State *L, int arg)
{
  buffer *b = testbuffer(L, arg);
  if (b == NULL) avxbuf_notbuffer(L, arg);
  return b;
}

#endif
