/* Buffers as Lua sees them: construction, growth and release, reads with
 * string.sub's index rules, and copy/zero/fill through the dispatcher.
 * Every argument is checked before the first byte is written. */
#include <limits.h>
#include <string.h>

#include "lua/largs.h"
#include "lua/lbuffer.h"
#include "lua/lfuncs.h"

/* What an empty buffer's data points at: aligned, never written (every
 * write to an empty buffer has length 0), in read-only memory so that a
 * bug would fault instead of corrupting it. */
static const unsigned char empty_area[BUFFER_ALIGN] __attribute__((aligned(BUFFER_ALIGN)));
#define EMPTY ((unsigned char *)empty_area)

static inline void copy_bytes(lmodule *m, void *d, const void *s, size_t n)
{
  avxbuf_copy(&m->state.plan, d, s, n, avxbuf_overlap_of(d, s, n));
}

static inline void fill_bytes(lmodule *m, void *d, int c, size_t n)
{
  avxbuf_fill(&m->state.plan, d, c, n);
}

/* ---- memory ---------------------------------------------------------------- */

/* The collector does not see blocks from the allocator, so every 64 KiB of
 * them is reported as a step "as if that many KiB were allocated": a loop
 * that drops large buffers then collects them as it would Lua's own
 * objects. A stopped collector stays stopped (Lua 5.1, which cannot say
 * whether it is, is stepped anyway). */
#define PACE_BYTES (64 * 1024)

/* The step, called protected (avxbuf_pace): 5.1's and LuaJIT's collector
 * lets a finalizer's error out of lua_gc. */
static int step(lua_State *L)
{
  lua_gc(L, LUA_GCSTEP, (int)lua_tointeger(L, 1));
  return 0;
}

/* Whether m's buffer bytes call for a step now, and of how many KiB. */
static int step_due(lua_State *L, lmodule *m, int *kb)
{
  if (m->stats.unpaced < PACE_BYTES) return 0;
#if LUA_VERSION_NUM < 502
  /* Lua 5.1 and LuaJIT step "until that many KiB are freed or the cycle
   * ends": a whole cycle per pace when the heap holds less garbage than
   * that. There a pace waits until the blocks since the last one match the
   * Lua heap and the blocks held after the last pace, as the collector's
   * own pause waits for its heap to double. (Matching the Lua heap alone,
   * which a program of large buffers keeps small, ran a cycle at nearly
   * every doubling of a growing buffer: docs/runs/figures-once-cited.md.) */
  if (m->stats.unpaced < ((size_t)lua_gc(L, LUA_GCCOUNT, 0) << 10) + m->held_paced) return 0;
#endif
  size_t k = m->stats.unpaced >> 10;
  m->stats.unpaced = 0;
#ifdef LUA_GCISRUNNING
  if (!lua_gc(L, LUA_GCISRUNNING, 0)) return 0;
#endif
  *kb = k > INT_MAX ? INT_MAX : (int)k;
  return 1;
}

lmodule *avxbuf_pace(lua_State *L, lmodule *m)
{
  /* The step may run finalizers, and at lua_close on 5.1 and LuaJIT those
   * include the module anchor's and the buffers', which let go of m: so m
   * is held over it, and given back only while something else holds it. */
  m->refs++;
  avxbuf_gcpoint(L);
  int kb, status = 0;
  if (step_due(L, m, &kb)) {
    lua_pushcfunction(L, step);
    lua_pushinteger(L, kb);
    status = lua_pcall(L, 1, 0, 0);
    if (status == 0) m->held_paced = m->stats.held;   /* else the cycle was cut short */
  }
  if (m->refs == 1) {
    avxbuf_module_unref(L, m);
    if (status == 0) luaL_error(L, "avxbuf: the module was finalized (lua_close)");
    lua_error(L);
  }
  m->refs--;
  if (status != 0) lua_error(L);   /* a finalizer's error, as the step would have raised it */
  return m;
}

static void free_block(lua_State *L, void *block, size_t size)
{
  void *ud;
  lua_Alloc alloc = lua_getallocf(L, &ud);
  if (block) alloc(ud, block, size, 0);
}

static size_t less(size_t a, size_t b) { return a - (b < a ? b : a); }

static void release(lua_State *L, buffer *b)
{
  lmodule *m = b->module;   /* NULL once a finalizer brought it back: not counted */
  if (m) {
    m->stats.held = less(m->stats.held, b->block_size);
    /* A block given back needs no cycle to find it: the collector is told
     * of the bytes grown and not given back since, so that a collection
     * that freed them (a program's own collectgarbage, which 5.1's and
     * LuaJIT's pace would follow with a whole cycle) is not paced again. */
    m->stats.unpaced = less(m->stats.unpaced, b->block_size);
  }
  free_block(L, b->block, b->block_size);
  b->block = NULL;
  b->block_size = 0;
  b->data = EMPTY;
  b->cap = 0;
  buffer_setlen(b, 0);
}

void avxbuf_reserve(lua_State *L, lmodule *m, buffer *b, size_t need, size_t keep)
{
  void *ud;
  lua_Alloc alloc = lua_getallocf(L, &ud);
  if (!buffer_grow(&m->stats, alloc, ud, b, need, keep))
    luaL_error(L, "%s", avxbuf_pushf(L, "not enough memory for a buffer of %llu %s", (unsigned long long)need,
                                     AVXBUF_BYTES(need)));
}

buffer *avxbuf_pushbuffer(lua_State *L, lmodule *m, int mt, size_t n)
{
  buffer *b = (buffer *)lua_newuserdatauv(L, sizeof *b, 0);
  memset(b, 0, sizeof *b);
  b->data = EMPTY;
  lua_pushvalue(L, mt);
  lua_setmetatable(L, -2);
  b->cookie = buffer_cookie(b);
  b->module = m;
  m->refs++;
  avxbuf_resize(L, m, b, n, 1);
  return b;
}

void avxbuf_resize(lua_State *L, lmodule *m, buffer *b, size_t n, int arg)
{
  luaL_argcheck(L, n <= MAX_LENGTH, arg, "size too large");
  avxbuf_reserve(L, m, b, n, b->len);
  if (n > b->len) fill_bytes(m, b->data + b->len, 0, n - b->len);
  buffer_setlen(b, n);
}

int avxbuf_pushrange(lua_State *L, buffer *b, avxbuf_range range, void *ctx)
{
  size_t off, n = range(L, b, ctx, &off);
  if (n == AVXBUF_NO_RANGE) return 0;
#if LUA_VERSION_NUM >= 504
  /* 5.4's lua_pushlstring copies the bytes before it may collect. */
  lua_pushlstring(L, (const char *)b->data + off, n);
#else
  /* Older versions (and LuaJIT) may collect first: the bytes go through a
   * userdata made before they are read. A finalizer run while it is made
   * may change b, so the range is read again after it; one that no longer
   * fits is made anew at twice the size, so that finalizers changing b at
   * every collection cannot keep this from ending. */
  size_t cap = n;
  char *copy = avxbuf_pushscratch(L, cap);
  for (;;) {
    n = range(L, b, ctx, &off);
    if (n == AVXBUF_NO_RANGE) {
      lua_pop(L, 1);
      return 0;
    }
    if (n <= cap) break;
    lua_pop(L, 1);
    cap = cap > MAX_LENGTH / 2 || n > 2 * cap ? n : 2 * cap;
    copy = avxbuf_pushscratch(L, cap);
  }
  memcpy(copy, b->data + off, n);
  lua_pushlstring(L, copy, n);
  lua_remove(L, -2);
#endif
  return 1;
}

static size_t whole(lua_State *L, buffer *b, void *ctx, size_t *off)
{
  (void)L, (void)ctx;
  *off = 0;
  return b->len;
}

void avxbuf_pushall(lua_State *L, buffer *b)
{
  avxbuf_pushrange(L, b, whole, NULL);
}

char *avxbuf_pushscratch(lua_State *L, size_t n)
{
  return (char *)lua_newuserdatauv(L, n, 0);
}

/* ---- constructors, growth, release ----------------------------------------- */

/* avxbuf.new([n [, byte]]) */
static int l_new(lua_State *L)
{
  lmodule *m = avxbuf_pace(L, MODULE(L));
  size_t n = avxbuf_checksize(L, 1, lua_isnoneornil(L, 1) ? 0 : avxbuf_checkwhole(L, 1));
  int c = lua_isnoneornil(L, 2) ? 0 : avxbuf_checkbyte(L, 2);
  buffer *b = avxbuf_pushbuffer(L, m, METATABLE, n);
  if (c) fill_bytes(m, b->data, c, n);
  return 1;
}

/* avxbuf.from(s [, i [, j]]) */
static int l_from(lua_State *L)
{
  lmodule *m = MODULE(L);
  size_t len, start;
  buffer *src_buffer;
  m = avxbuf_pace(L, m);
  lua_settop(L, 3);   /* the new buffer goes above the arguments */
  avxbuf_checkbytes(L, 1, &len, &src_buffer);
  avxbuf_sub_range(L, 2, 0, len, &start);
  buffer *b = avxbuf_pushbuffer(L, m, METATABLE, 0);
  /* Creating the userdata may have run finalizers, which may have resized
   * a source buffer: read it only now. */
  const unsigned char *s = avxbuf_checkbytes(L, 1, &len, &src_buffer);
  size_t n = avxbuf_sub_range(L, 2, 0, len, &start);
  avxbuf_reserve(L, m, b, n, b->len);
  copy_bytes(m, b->data, s + start, n);
  buffer_setlen(b, n);
  return 1;
}

/* buf:resize(n) -> buf */
static int l_resize(lua_State *L)
{
  buffer *b = checkbuffer(L, 1);
  lmodule *m = buffer_module(L, b);
  m = avxbuf_pace(L, m);
  avxbuf_resize(L, m, b, avxbuf_checksize(L, 2, avxbuf_checkwhole(L, 2)), 2);
  lua_settop(L, 1);
  return 1;
}

/* buf:reserve(n) -> buf: room for n more bytes; the length stays. */
static int l_reserve(lua_State *L)
{
  buffer *b = checkbuffer(L, 1);
  lmodule *m = buffer_module(L, b);
  m = avxbuf_pace(L, m);
  lua_Integer n = avxbuf_checkwhole(L, 2);
  luaL_argcheck(L, n >= 0, 2, "count must not be negative");
  avxbuf_reserve(L, m, b, avxbuf_checkgrowth(L, 2, b->len, (unsigned long long)n), b->len);
  lua_settop(L, 1);
  return 1;
}

/* buf:capacity() -> the bytes the buffer holds without allocating */
static int l_capacity(lua_State *L)
{
  lua_pushinteger(L, (lua_Integer)checkbuffer(L, 1)->cap);
  return 1;
}

/* buf:reset() -> buf: empty, the memory kept for what comes next (all of
 * it: the data starts at the block's aligned start again) */
static int l_reset(lua_State *L)
{
  buffer *b = checkbuffer(L, 1);
  size_t used = buffer_consumed(b);
  b->data -= used;
  b->cap += used;
  buffer_setlen(b, 0);
  lua_settop(L, 1);
  return 1;
}

/* buf:put(v, ...) -> buf: strings, numbers (as tostring writes them) and
 * buffers (buf itself too: the value it had before this call), all checked
 * before the first byte moves. The pieces are found once: a string stays
 * where it is while on the stack, and of the buffers only buf's own data
 * can move (when it grows). */
#define PUT_CACHED 16
static int l_put(lua_State *L)
{
  buffer *b = checkbuffer(L, 1);
  lmodule *m = buffer_module(L, b);
  m = avxbuf_pace(L, m);   /* first: a finalizer it runs may change b */
  int top = lua_gettop(L);
  /* Numbers become strings in place, as lua_tolstring does for tostring on
   * every Lua version; that allocates, so it comes before b is read. */
  for (int i = 2; i <= top; i++)
    if (lua_type(L, i) == LUA_TNUMBER) lua_tolstring(L, i, NULL);
  size_t old = b->len, total = old;
  struct { const unsigned char *p; size_t len; } piece[PUT_CACHED];
  for (int i = 2; i <= top; i++) {
    const unsigned char *p;
    size_t len;
    if (lua_type(L, i) == LUA_TSTRING) {
      p = (const unsigned char *)lua_tolstring(L, i, &len);
    } else {
      buffer *v = testbuffer(L, i);
      if (v == NULL) return avxbuf_argtype(L, i, "string, number or " BUFFER_NAME);
      p = v == b ? NULL : v->data;
      len = v->len;
    }
    total = avxbuf_checkgrowth(L, i, total, len);
    if (i - 2 < PUT_CACHED) { piece[i - 2].p = p; piece[i - 2].len = len; }
  }
  avxbuf_reserve(L, m, b, total, b->len);
  unsigned char *d = b->data + old;
  const avxbuf_plan *plan = &m->state.plan;
  for (int i = 2; i <= top; i++) {
    const unsigned char *p;
    size_t len;
    if (i - 2 < PUT_CACHED) {
      p = piece[i - 2].p;
      len = piece[i - 2].len;
    } else if (lua_type(L, i) == LUA_TSTRING) {
      p = (const unsigned char *)lua_tolstring(L, i, &len);
    } else {
      buffer *v = (buffer *)lua_touserdata(L, i);
      p = v == b ? NULL : v->data;
      len = v->len;
    }
    if (p == NULL) { p = b->data; len = old; }
    avxbuf_copy(plan, d, p, len, OV_NONE);   /* pieces never overlap d */
    d += len;
  }
  buffer_setlen(b, total);
  lua_settop(L, 1);
  return 1;
}

/* buf:free(): the memory goes back now; the buffer stays, empty. */
static int l_free(lua_State *L)
{
  release(L, checkbuffer(L, 1));
  return 0;
}

/* __gc: anything may carry the metatable (debug.setmetatable), so check. A
 * finalizer may bring the buffer back to life: it is then empty, and copy,
 * zero and fill take the checked path, which uses the function's module. */
static int l_gc(lua_State *L)
{
  buffer *b = testbuffer(L, 1);
  if (b) {
    release(L, b);
    if (b->module) avxbuf_module_unref(L, b->module);
    b->module = NULL;
  }
  return 0;
}

/* ---- reads --------------------------------------------------------------- */

static int l_len(lua_State *L)
{
  lua_pushinteger(L, (lua_Integer)checkbuffer(L, 1)->len);
  return 1;
}

/* Arguments 2 and 3 as string.sub's, over b as it is now. */
static size_t sub_range(lua_State *L, buffer *b, void *ctx, size_t *off)
{
  (void)ctx;
  return avxbuf_sub_range(L, 2, 0, b->len, off);
}

/* buf:tostring([i [, j]]): the range as it is once the string exists (a
 * finalizer run on the way may have changed the buffer). */
static int l_tostring(lua_State *L)
{
  buffer *b = checkbuffer(L, 1);
  lua_settop(L, 3);   /* i and j stay arguments 2 and 3 below what is pushed */
  avxbuf_pushrange(L, b, sub_range, NULL);
  return 1;
}

static int l_byte(lua_State *L)
{
  buffer *b = checkbuffer(L, 1);
  size_t start, n = avxbuf_sub_range(L, 2, 1, b->len, &start);
  luaL_argcheck(L, n <= INT_MAX, 2, "string slice too long");
  luaL_checkstack(L, (int)n, "string slice too long");
  for (size_t k = 0; k < n; k++) lua_pushinteger(L, b->data[start + k]);
  return (int)n;
}

/* ---- consuming from the front (docs/streams.md) --------------------------- */

/* get's count when none is given: all there is. */
#define GET_ALL ((lua_Integer)MAX_LENGTH)

/* A count of bytes to consume: n, or dflt when n is not given (a negative
 * dflt: n is required); -1 when there is none or it is negative. */
static lua_Integer take_count(int given, lua_Integer n, lua_Integer dflt)
{
  if (!given) n = dflt;
  return n < 0 ? -1 : n;
}

/* Argument arg as take_count's count; the caller takes at most what there is. */
static lua_Integer checktake(lua_State *L, int arg, lua_Integer dflt)
{
  int given = dflt < 0 || !lua_isnoneornil(L, arg);
  lua_Integer n = take_count(given, given ? avxbuf_checkwhole(L, arg) : 0, dflt);
  luaL_argcheck(L, n >= 0, arg, "count must not be negative");
  return n;
}

long long avxbuf_get_count(const buffer *b, int given, lua_Integer n)
{
  n = take_count(given, n, GET_ALL);
  return n < 0 ? -1 : (long long)buffer_upto(b, (unsigned long long)n);
}

/* buf:skip(n) -> buf: the first n bytes (all, when there are fewer) are
 * consumed; no byte moves. */
static int l_skip(lua_State *L)
{
  buffer *b = checkbuffer(L, 1);
  buffer_consume(b, buffer_upto(b, (unsigned long long)checktake(L, 2, -1)));
  lua_settop(L, 1);
  return 1;
}

static size_t front_range(lua_State *L, buffer *b, void *ctx, size_t *off)
{
  (void)L;
  *off = 0;
  return buffer_upto(b, (unsigned long long)*(const lua_Integer *)ctx);
}

/* buf:get([n]) -> the first n bytes (all by default, or when there are
 * fewer) as a string, consumed. The string is bytes of one moment; the
 * bytes consumed are that many of the buffer as it is once the string
 * exists (a finalizer run while it was made may have changed it): as if
 * tostring(1, n) and skip(#s) had run one after the other. */
static int l_get(lua_State *L)
{
  buffer *b = checkbuffer(L, 1);
  lua_Integer n = checktake(L, 2, GET_ALL);
  lua_settop(L, 2);
  avxbuf_pushrange(L, b, front_range, &n);
  buffer_consume(b, buffer_upto(b, (unsigned long long)(lua_Integer)lua_rawlen(L, -1)));
  return 1;
}

/* avxbuf.compactions() -> times, bytes: how often this Lua state's buffers
 * moved unread bytes to their block's start, and how many bytes, so far
 * (spec/stream_spec.lua checks that consuming costs O(1) amortised). */
static int l_compactions(lua_State *L)
{
  lmodule *m = MODULE(L);
  lua_pushinteger(L, (lua_Integer)m->stats.compactions);
  lua_pushinteger(L, (lua_Integer)m->stats.compacted);
  return 2;
}

/* ---- copy, zero, fill: never grow ------------------------------------------- */

/* Each is checked in two tiers: a fast one that takes only plainly valid
 * calls, with as few API calls as it can (at small sizes the call costs
 * more than the kernel: docs/benchmarks.md, "Cost of a call from Lua"),
 * and the checked one, which raises the error naming the first bad
 * argument, in argument order, or does the work. */

static int copy_checked(lua_State *L)
{
  buffer *dst = checkbuffer(L, 1);
  lua_Integer di = checkint(L, 2);
  size_t slen;
  buffer *src_buffer;
  const unsigned char *src = avxbuf_checkbytes(L, 3, &slen, &src_buffer);
  size_t doff = avxbuf_checkindex(L, 2, di, dst->len);
  size_t soff = avxbuf_checkindex(L, 4, optint(L, 4, AVXBUF_FIRST), slen);
  size_t n = avxbuf_checkcount(L, 5, soff, slen, "the source");
  if (n > dst->len - doff) {
    /* An explicit length is to blame; a defaulted one means the source is too long. */
    int arg = lua_isnoneornil(L, 5) ? 3 : 5;
    luaL_argerror(L, arg, avxbuf_pushf(L, "%lld %s not fit at index %lld of a %lld-byte buffer", (long long)n,
                                       n == 1 ? "byte does" : "bytes do", (long long)di, (long long)dst->len));
  }
  copy_bytes(buffer_module(L, dst), dst->data + doff, src + soff, n);
  buffer_wrote(dst);
  return 0;
}

/* avxbuf.copy(dst, di, src [, si [, n]]) */
static int l_copy(lua_State *L)
{
  buffer *dst = testbuffer(L, 1), *sb;
  const unsigned char *src;
  size_t slen;
  lua_Integer di, si, n = 0;
  if (dst == NULL || !testint(L, 2, &di)) return copy_checked(L);
  if ((sb = testbuffer(L, 3)) != NULL) { src = sb->data; slen = sb->len; }
  else if (lua_type(L, 3) == LUA_TSTRING) src = (const unsigned char *)lua_tolstring(L, 3, &slen);
  else return copy_checked(L);
  int top = lua_gettop(L), n_given = top >= 5 && !lua_isnil(L, 5);
  if (!testoptint(L, 4, top, AVXBUF_FIRST, &si) || (n_given && !testint(L, 5, &n))
      || (n = avxbuf_copy_count(di, dst->len, si, slen, n_given, n)) < 0 || dst->module == NULL)
    return copy_checked(L);
  /* only a buffer copied onto itself can overlap */
  unsigned char *d = dst->data + (di - 1);
  const unsigned char *s = src + (si - 1);
  avxbuf_copy(&dst->module->state.plan, d, s, (size_t)n, sb == dst ? avxbuf_overlap_of(d, s, (size_t)n) : OV_NONE);
  buffer_wrote(dst);
  return 0;
}

/* zero and fill of buffer b (argument 1) with byte c, from arguments
 * arg_i (index) and arg_i + 1 (length). */
static int fill_checked(lua_State *L, buffer *b, int c, int arg_i)
{
  size_t off = avxbuf_checkindex(L, arg_i, optint(L, arg_i, AVXBUF_FIRST), b->len);
  size_t n = avxbuf_checkcount(L, arg_i + 1, off, b->len, "the buffer");
  fill_bytes(buffer_module(L, b), b->data + off, c, n);
  buffer_wrote(b);
  return 0;
}

static inline int fill_range(lua_State *L, buffer *b, int c, int arg_i)
{
  lua_Integer i, n = 0;
  int top = lua_gettop(L), n_given = top > arg_i && !lua_isnil(L, arg_i + 1);
  if (!testoptint(L, arg_i, top, AVXBUF_FIRST, &i) || (n_given && !testint(L, arg_i + 1, &n))
      || (n = avxbuf_fill_count(c, i, b->len, n_given, n)) < 0 || b->module == NULL)
    return fill_checked(L, b, c, arg_i);
  fill_bytes(b->module, b->data + (i - 1), c, (size_t)n);
  buffer_wrote(b);
  return 0;
}

/* avxbuf.zero(buf [, i [, n]]) */
static int l_zero(lua_State *L)
{
  buffer *b = testbuffer(L, 1);
  return fill_range(L, b ? b : checkbuffer(L, 1), 0, 2);
}

/* avxbuf.fill(buf, byte [, i [, n]]) */
static int l_fill(lua_State *L)
{
  buffer *b = testbuffer(L, 1);
  lua_Integer c;
  int isint = testint(L, 2, &c);
  if (b == NULL) b = checkbuffer(L, 1);   /* argument 1 is checked before argument 2 */
  if (!isint || !avxbuf_isbyte(c)) c = avxbuf_checkbyte(L, 2);
  return fill_range(L, b, (int)c, 3);
}

/* ---- registration ----------------------------------------------------------- */

/* Module functions; copy, zero and fill are methods too (the same closures). */
const luaL_Reg avxbuf_buffer_funcs[] = {
  { "new", l_new }, { "from", l_from },
  { "copy", l_copy }, { "zero", l_zero }, { "fill", l_fill },
  { "compactions", l_compactions },
  { NULL, NULL }
};

const luaL_Reg avxbuf_buffer_methods[] = {
  { "tostring", l_tostring }, { "byte", l_byte },
  { "resize", l_resize }, { "put", l_put }, { "free", l_free },
  { "reserve", l_reserve }, { "capacity", l_capacity }, { "reset", l_reset },
  { "skip", l_skip }, { "get", l_get },
  { NULL, NULL }
};

const luaL_Reg avxbuf_buffer_meta[] = {
  { "__len", l_len },
  { "__gc", l_gc }, { "__close", l_free },
  { NULL, NULL }
};
