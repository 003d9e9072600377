/* Walking a buffer in pieces: buf:lines() gives lines as strings, as
 * file:lines() does; buf:split(sep) gives the index ranges between
 * separators, so that a program copies only the pieces it keeps. Each
 * iterator keeps a position, not a pointer, and reads the buffer afresh
 * at every step: the loop body may append to it, resize it or free it. */
#include "lua/largs.h"
#include "lua/lbuffer.h"
#include "lua/lfuncs.h"
#include "lua/lmatch.h"

/* Upvalues of both iterators: the module's anchor (as every function of
 * the binding has, for avxbuf_module), the buffer, the 0-based offset of
 * the next piece (or -1 once done) and, for split, the separator. */
#define IT_BUFFER lua_upvalueindex(2)
#define IT_POS lua_upvalueindex(3)
#define IT_SEP lua_upvalueindex(4)

/* Pushes the iterator over the buffer at argument 1 from offset off; the
 * top `extra` values of the stack become its last upvalues. */
static void push_iterator(lua_State *L, lua_CFunction step, size_t off, int extra)
{
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_pushvalue(L, 1);
  lua_pushinteger(L, (lua_Integer)off);
  for (int k = 0; k < extra; k++) lua_pushvalue(L, -3 - extra);
  lua_pushcclosure(L, step, 3 + extra);
}

/* The start offset of an iteration from argument arg (src/lua/largs.c). */
static size_t start_offset(lua_State *L, int arg, size_t len)
{
  int given = !lua_isnoneornil(L, arg);
  return avxbuf_start_offset(given, given ? checkint(L, arg) : 0, len);
}

/* The iterator's buffer: its upvalue, unless debug.setupvalue replaced it
 * or the position with something that is no integer (what gmatch's
 * iterator says too; the FFI path's iterators keep the same rule). */
static buffer *iterated(lua_State *L, const char *what)
{
  buffer *b = testbuffer(L, IT_BUFFER);
  lua_Integer pos;
  if (b == NULL || !testint(L, IT_POS, &pos))
    luaL_error(L, "avxbuf: this %s iterator's upvalues were replaced", what);
  return b;
}

static void set_pos(lua_State *L, lua_Integer pos)
{
  lua_pushinteger(L, pos);
  lua_replace(L, IT_POS);
}

/* The line from the iterator's position, as b is now; ctx: a flag set when
 * a newline ends it. */
static size_t line_range(lua_State *L, buffer *b, void *ctx, size_t *off)
{
  lua_Integer pos = lua_tointeger(L, IT_POS);
  size_t n;
  int newline = pos < 0 ? -1 : buffer_line(b, (size_t)pos, &n);
  if (newline < 0) return AVXBUF_NO_RANGE;   /* the end, or cut below it */
  *off = (size_t)pos;
  *(int *)ctx = newline;
  return n;
}

static int lines_step(lua_State *L)
{
  buffer *b = iterated(L, "lines");
  int newline = 0;
  if (!avxbuf_pushrange(L, b, line_range, &newline)) {
    set_pos(L, -1);
    return 0;
  }
  /* an unfinished line may go on */
  set_pos(L, lua_tointeger(L, IT_POS) + (lua_Integer)lua_rawlen(L, -1) + newline);
  return 1;
}

/* buf:lines([init]) -> iterator of the lines from init, without their
 * "\n" (a "\r" stays), the last one even without a newline: file:lines(). */
static int l_lines(lua_State *L)
{
  buffer *b = checkbuffer(L, 1);
  push_iterator(L, lines_step, start_offset(L, 2, b->len), 0);
  return 1;
}

static int split_step(lua_State *L)
{
  buffer *b = iterated(L, "split");
  lua_Integer pos = lua_tointeger(L, IT_POS);
  size_t m, len = b->len;
  if (lua_type(L, IT_SEP) != LUA_TSTRING || lua_rawlen(L, IT_SEP) == 0)
    return luaL_error(L, "avxbuf: this split iterator's upvalues were replaced");
  const unsigned char *sep = (const unsigned char *)lua_tolstring(L, IT_SEP, &m);
  if (pos < 0 || (size_t)pos > len) {
    set_pos(L, -1);
    return 0;
  }
  size_t off = (size_t)pos, end = len;
  const unsigned char *p = NULL;
  if (m <= len - off) p = avxbuf_search(L, b, off, len - off, sep, m, 0);
  if (p) end = (size_t)(p - b->data);
  set_pos(L, p ? (lua_Integer)(end + m) : -1);   /* no separator: that was the last piece */
  lua_pushinteger(L, (lua_Integer)off + 1);
  lua_pushinteger(L, (lua_Integer)end);
  return 2;
}

/* buf:split(sep [, init]) -> iterator of i, j: the pieces of the buffer
 * from init between occurrences of the plain separator sep; k separators
 * give k + 1 pieces, empty ones included (Python's str.split(sep)). A piece
 * is buf:tostring(i, j), empty when j = i - 1. */
static int l_split(lua_State *L)
{
  buffer *b = checkbuffer(L, 1);
  size_t m;
  buffer *sep_buffer;
  avxbuf_checkbytes(L, 2, &m, &sep_buffer);
  luaL_argcheck(L, m > 0, 2, "empty separator");
  size_t off = start_offset(L, 3, b->len);
  if (sep_buffer) {   /* its bytes now, as a string; making it may run a finalizer */
    avxbuf_pushall(L, sep_buffer);
    luaL_argcheck(L, lua_rawlen(L, -1) > 0, 2, "empty separator");
  } else {
    lua_pushvalue(L, 2);
  }
  push_iterator(L, split_step, off, 1);
  return 1;
}

const luaL_Reg avxbuf_split_methods[] = {
  { "lines", l_lines }, { "split", l_split },
  { NULL, NULL }
};
