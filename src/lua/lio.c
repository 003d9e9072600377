/* Bytes between buffers and Lua files (io.open, io.tmpfile, io.stdout)
 * without a Lua string in between. Failures come back as io reports them
 * (nil, message, errno), and leave the buffer as it was. */
#define _DEFAULT_SOURCE   /* madvise (sys/mman.h) */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lua/largs.h"
#include "lua/lbuffer.h"
#include "lua/lfuncs.h"

/* The FILE of an open Lua file: a luaL_Stream from Lua 5.2 on, a FILE *
 * first in the userdata in 5.1 and LuaJIT. */
static FILE *checkfile(lua_State *L, int arg)
{
  void *p = luaL_checkudata(L, arg, LUA_FILEHANDLE);
#if LUA_VERSION_NUM >= 502
  luaL_Stream *s = (luaL_Stream *)p;
  if (s->closef == NULL) luaL_error(L, "attempt to use a closed file");
  return s->f;
#else
  FILE *f = *(FILE **)p;
  if (f == NULL) luaL_error(L, "attempt to use a closed file");
  return f;
#endif
}

static int io_failure(lua_State *L, int err)
{
  luaL_pushfail(L);
  lua_pushstring(L, strerror(err));
  lua_pushinteger(L, err);
  return 3;
}

/* buf:write(file [, i [, j]]) -> file | nil, message, errno */
static int l_write(lua_State *L)
{
  buffer *b = checkbuffer(L, 1);
  FILE *f = checkfile(L, 2);
  size_t start, n = avxbuf_sub_range(L, 3, 0, b->len, &start);
  errno = 0;
  if (fwrite(b->data + start, 1, n, f) != n) return io_failure(L, errno ? errno : EIO);
  lua_settop(L, 2);
  return 1;
}

/* Reads grow the buffer a chunk at a time where the bytes to come are not
 * known: a count larger than the file costs no more memory than the file. */
#define READ_CHUNK (64 * 1024)

/* The bytes a regular file has past its position (0 for anything else, or
 * when it cannot tell): how much of the room a read will fill. */
static size_t file_left(FILE *f)
{
  struct stat st;
  long pos = ftell(f);
  if (pos < 0 || fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= (off_t)pos) return 0;
  return (size_t)(st.st_size - (off_t)pos);
}

/* Maps the whole pages of [p, p + n) that a read is about to fill, in one
 * call: untouched pages otherwise fault one at a time while the kernel
 * copies into them, and each fault is a trap (an exit to the hypervisor
 * in a VM). Only room the read grew: a buffer read into again and again
 * has its pages already, and the call would only walk them; and only from
 * POPULATE_FROM bytes, below which the calls (this one, and file_left's
 * lseek and fstat) cost more than the faults they save.
 * MADV_POPULATE_WRITE is Linux 5.14's; where there is none, or it fails,
 * the read faults them in as before. */
#define POPULATE_FROM (64 * 1024)

static void populate(unsigned char *p, size_t n)
{
#ifdef MADV_POPULATE_WRITE
  long page = sysconf(_SC_PAGESIZE);
  if (page <= 0 || n < POPULATE_FROM) return;
  uintptr_t from = ((uintptr_t)p + (uintptr_t)page - 1) & ~((uintptr_t)page - 1);
  uintptr_t to = ((uintptr_t)p + n) & ~((uintptr_t)page - 1);
  if (to > from) (void)madvise((void *)from, to - from, MADV_POPULATE_WRITE);
#else
  (void)p;
  (void)n;
#endif
}

/* buf:read(file [, n [, i]]) -> bytes read (0 at end of file) | nil,
 * message, errno. Up to n bytes, or to the end of the file, at index i
 * (1 .. #buf + 1; by default appended), growing the buffer as needed. The
 * bytes land past the length first and count (moved to i) only once the
 * read has succeeded: a failed read leaves the contents as they were. */
static int l_read(lua_State *L)
{
  buffer *b = checkbuffer(L, 1);
  FILE *f = checkfile(L, 2);
  lmodule *m = buffer_module(L, b);
  m = avxbuf_pace(L, m);   /* first: a finalizer it runs may change b */
  size_t old = b->len, got = 0;
  size_t at = lua_isnoneornil(L, 4) ? old : avxbuf_checkindex(L, 4, checkint(L, 4), old);
  size_t want = MAX_LENGTH - old;
  if (!lua_isnoneornil(L, 3)) {
    lua_Integer n = checkint(L, 3);
    luaL_argcheck(L, n >= 0, 3, "count must not be negative");
    want = avxbuf_checkgrowth(L, 3, old, (unsigned long long)n) - old;
  }
  size_t left = SIZE_MAX;   /* the file's bytes left, asked once it matters */
  int grew = 0;
  while (got < want) {
    size_t chunk = want - got;
    size_t room = b->cap - old - got;
    if (room == 0) {
      /* A regular file's bytes left are reserved at once, with one byte
       * more to meet its end without growing again: one block of the whole
       * size is one the allocator may have at hand, where growing a chunk
       * at a time through the sizes below it ended in blocks mapped afresh,
       * each page a fault (docs/luajit.md, "Programs and the heap they meet"). */
      if (chunk > READ_CHUNK) {
        if (left == SIZE_MAX) left = file_left(f);
        size_t rest = left > got ? left - got + 1 : 0;
        chunk = rest == 0 ? READ_CHUNK : rest < chunk ? rest : chunk;
      }
      avxbuf_reserve(L, m, b, old + got + chunk, old + got);
      room = b->cap - old - got;
      grew = 1;
    }
    if (chunk > room) chunk = room;
    if (grew && chunk >= POPULATE_FROM) {
      if (left == SIZE_MAX) left = file_left(f);
      if (left > got) populate(b->data + old + got, chunk < left - got ? chunk : left - got);
    }
    errno = 0;
    size_t r = fread(b->data + old + got, 1, chunk, f);
    got += r;
    if (r < chunk) {
      if (ferror(f)) return io_failure(L, errno ? errno : EIO);
      break;   /* end of file */
    }
  }
  if (at < old) {
    unsigned char *d = b->data + at, *s = b->data + old;
    avxbuf_copy(&m->state.plan, d, s, got, avxbuf_overlap_of(d, s, got));
  }
  buffer_setlen(b, at + got > old ? at + got : old);
  lua_pushinteger(L, (lua_Integer)got);
  return 1;
}

const luaL_Reg avxbuf_io_methods[] = {
  { "write", l_write }, { "read", l_read },
  { NULL, NULL }
};
