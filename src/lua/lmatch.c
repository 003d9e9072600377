/* Searching a buffer: the plain search with the vector kernels (find's,
 * rfind, and split's separator, lsplit.c), and buf:find, buf:match and
 * buf:gmatch: Lua 5.4's string.find, string.match and string.gmatch on the
 * bytes of a buffer, on every Lua version (the matcher is match.c, ours,
 * not the running Lua's string library). A plain search (no magic byte in
 * the needle, or plain = true) goes to the vector kernels, and its needle
 * may be a buffer; a pattern is a Lua string.
 *
 * The matcher runs on b->data and b->len read right before it and
 * allocates nothing; its results are offsets. Pushing them allocates (the
 * strings), which can run a finalizer that frees, resizes or appends to the
 * buffer. So the captured bytes are copied out right after the match,
 * before the first string is made: onto the C stack when they are few.
 * When they need more room, a scratch userdata is made, and since that can
 * run finalizers too, the match is made again on what the buffer holds
 * then and copied out at once. The results are always what the pattern
 * gives on the buffer's bytes at one moment, and never an error of their
 * own. (5.4's lua_pushlstring copies its bytes before it may collect: a
 * single string comes straight from the buffer there.) */
#include <string.h>

#include "lua/largs.h"
#include "lua/lbuffer.h"
#include "lua/lfuncs.h"
#include "lua/lmatch.h"
#include "core/match.h"

/* Where the captured bytes are copied before any string is made: the C
 * stack, or a scratch userdata once they need more. (The scratch stays on
 * the Lua stack under the results, which are the top values returned.) */
#define SNAPSHOT_BYTES 512

typedef struct copyspace {
  unsigned char *at;
  size_t room;
  unsigned char small[SNAPSHOT_BYTES];
} copyspace;

static void copyspace_init(copyspace *c)
{
  c->at = c->small;
  c->room = sizeof c->small;
}

/* Room for need bytes: a scratch userdata, in place of the one before (on
 * top of the stack). Making it may run finalizers: the caller makes the
 * match again. */
static void copyspace_grow(lua_State *L, copyspace *c, size_t need)
{
  if (c->at != c->small) lua_pop(L, 1);
  c->at = (unsigned char *)avxbuf_pushscratch(L, need);
  c->room = need;
}

/* One value to push: an integer, or bytes [start, start + len) of the
 * subject. */
typedef struct result {
  int is_integer;
  lua_Integer integer;
  size_t start, len;
} result;

/* The values a match gives: find's start and end first (when find), then
 * the captures (positions as integers), or the whole match when there are
 * none and it is not find. Returns how many. */
static int results_of(const avxbuf_match *ms, int find, result *r)
{
  int n = 0;
  if (find) {
    r[n++] = (result){ 1, (lua_Integer)ms->start + 1, 0, 0 };
    r[n++] = (result){ 1, (lua_Integer)ms->end, 0, 0 };
  } else if (ms->level == 0) {
    r[n++] = (result){ 0, 0, ms->start, ms->end - ms->start };
  }
  for (int k = 0; k < ms->level; k++) {
    const avxbuf_capture *c = &ms->capture[k];
    if (c->len == AVXBUF_CAP_POSITION) r[n++] = (result){ 1, (lua_Integer)c->start + 1, 0, 0 };
    else r[n++] = (result){ 0, 0, c->start, c->len };
  }
  return n;
}

/* Pushes the results of the match just made on b's current bytes, with
 * nothing allocated in between; returns how many, or -1 (nothing pushed)
 * when the captured bytes need more room than c has: *need bytes. */
static int push_results(lua_State *L, buffer *b, const avxbuf_match *ms, int find, copyspace *c, size_t *need)
{
#if LUA_VERSION_NUM >= 504
  /* The common case, one string and nothing else (the whole match, or
   * one capture): 5.4's lua_pushlstring copies the bytes before it may
   * collect, so they can come straight from the buffer. */
  if (!find && (ms->level == 0 || (ms->level == 1 && ms->capture[0].len != AVXBUF_CAP_POSITION))) {
    size_t start = ms->level ? ms->capture[0].start : ms->start;
    size_t len = ms->level ? ms->capture[0].len : ms->end - ms->start;
    lua_pushlstring(L, (const char *)b->data + start, len);
    return 1;
  }
#endif
  result r[AVXBUF_MATCH_MAXCAPTURES + 2];
  int n = results_of(ms, find, r);
  size_t total = 0;
  for (int k = 0; k < n; k++) total += r[k].is_integer ? 0 : r[k].len;
  if (total > c->room) {
    *need = total;
    return -1;
  }
  unsigned char *copy = c->at;
  size_t at = 0;
  for (int k = 0; k < n; k++)
    if (!r[k].is_integer) {
      memcpy(copy + at, b->data + r[k].start, r[k].len);
      at += r[k].len;
    }
  /* A C function has LUA_MINSTACK free slots to start with, and at most a
   * scratch userdata is pushed yet. (Growing the stack runs no finalizer.) */
  if (n + 1 > LUA_MINSTACK) luaL_checkstack(L, n + 1, "too many captures");
  /* From here on b is not looked at: finalizers may do what they like. */
  at = 0;
  for (int k = 0; k < n; k++) {
    if (r[k].is_integer) {
      lua_pushinteger(L, r[k].integer);
    } else {
      lua_pushlstring(L, (const char *)copy + at, r[k].len);
      at += r[k].len;
    }
  }
  return n;
}

/* A pattern argument: a Lua string (never a number turned into one, as
 * avxbuf_checkbytes has it, nor a buffer). */
static const char *check_pattern(lua_State *L, int arg, size_t *len)
{
  if (lua_type(L, arg) != LUA_TSTRING) {
    if (testbuffer(L, arg)) luaL_argerror(L, arg, "string expected, got " BUFFER_NAME);
    avxbuf_argtype(L, arg, "string");
  }
  return lua_tolstring(L, arg, len);
}

/* Raises the matcher's error, as string.find would. */
static int match_error(lua_State *L, const avxbuf_match *ms)
{
  return luaL_error(L, "%s", ms->error);
}

/* string.find and string.match from argument 3 (init) on. */
static int find_or_match(lua_State *L, buffer *b, const char *p, size_t plen, lua_Integer i, int find)
{
  avxbuf_match ms;
  copyspace c;
  copyspace_init(&c);
  for (;;) {
    size_t len = b->len, init = avxbuf_sub_start(i, len) - 1;
    if (init > len) {
      luaL_pushfail(L);
      return 1;
    }
    avxbuf_match_init(&ms, b->data, len, p, plen);
    int found = avxbuf_match_find(&ms, init);
    if (found == AVXBUF_MATCH_NONE) {
      luaL_pushfail(L);
      return 1;
    }
    if (found == AVXBUF_MATCH_ERROR) return match_error(L, &ms);
    size_t need;
    int n = push_results(L, b, &ms, find, &c, &need);
    if (n >= 0) return n;
    copyspace_grow(L, &c, need);
  }
}

/* ---- plain search: find's, rfind, split's separator ------------------------ */

const unsigned char *avxbuf_search(lua_State *L, const buffer *b, size_t off, size_t n,
                                   const unsigned char *needle, size_t m, int reverse)
{
  return buffer_search(&buffer_module(L, b)->state.plan, b, off, n, needle, m, reverse);
}

/* What find and rfind return for an empty needle at offset at, or for the
 * m bytes at p (NULL: none): start and end, or fail. */
static int push_found(lua_State *L, const buffer *b, size_t at, const unsigned char *p, size_t m)
{
  if (m > 0 && p == NULL) {
    luaL_pushfail(L);
    return 1;
  }
  if (m > 0) at = (size_t)(p - b->data);
  lua_pushinteger(L, (lua_Integer)at + 1);
  lua_pushinteger(L, (lua_Integer)(at + m));
  return 2;
}

/* string.find(s, needle, init, true) with Lua 5.4's rules for init and the
 * empty needle. */
static int plain_find(lua_State *L, buffer *b, const unsigned char *needle, size_t m, lua_Integer i)
{
  size_t init = avxbuf_sub_start(i, b->len) - 1;
  if (init > b->len || m > b->len - init) {
    luaL_pushfail(L);
    return 1;
  }
  size_t n = b->len - init;
  return push_found(L, b, init, m > 0 ? avxbuf_search(L, b, init, n, needle, m, 0) : NULL, m);
}

/* buf:rfind(s [, init]) -> start, end | nil: the last plain occurrence of s
 * (a string or a buffer) that starts at or before init; find mirrored.
 * init: negative counts from the end (string.sub's rule, unclamped); below 1
 * after that nothing starts there (nil, whatever s); past the last possible
 * start it is that start. Absent, the last occurrence anywhere. The empty
 * string occurs at every index 1 .. #buf + 1: the answer is init, at most
 * #buf + 1 (also when absent), and init - 1. */
static int l_rfind(lua_State *L)
{
  buffer *b = checkbuffer(L, 1);
  size_t m;
  const unsigned char *needle = avxbuf_checkbytes(L, 2, &m, NULL);
  lua_Integer init = optint(L, 3, (lua_Integer)b->len + 1);
  if (init < 0) init += (lua_Integer)b->len + 1;
  if (init < 1 || m > b->len) {
    luaL_pushfail(L);
    return 1;
  }
  /* the latest start allowed, 0-based, and the bytes a match there can reach */
  size_t at = (unsigned long long)init > b->len ? b->len : (size_t)init - 1;
  size_t n = at + m < b->len ? at + m : b->len;
  return push_found(L, b, at, m > 0 ? avxbuf_search(L, b, 0, n, needle, m, 1) : NULL, m);
}

/* ---- patterns --------------------------------------------------------------- */

/* buf:find(pattern [, init [, plain]]) -> start, end, captures... | nil */
static int l_find(lua_State *L)
{
  buffer *b = checkbuffer(L, 1);
  buffer *as_buffer;
  size_t m;
  const unsigned char *needle = avxbuf_checkbytes(L, 2, &m, &as_buffer);
  lua_Integer i = optint(L, 3, AVXBUF_FIRST);
  if (lua_toboolean(L, 4) || !avxbuf_match_has_specials(needle, m)) return plain_find(L, b, needle, m, i);
  if (as_buffer)
    luaL_argerror(L, 2, "string expected, got " BUFFER_NAME " (a pattern is a string; "
                        "plain = true searches for a buffer's bytes)");
  return find_or_match(L, b, (const char *)needle, m, i, 1);
}

/* buf:match(pattern [, init]) -> captures... | the match | nil */
static int l_match(lua_State *L)
{
  buffer *b = checkbuffer(L, 1);
  size_t plen;
  const char *p = check_pattern(L, 2, &plen);
  return find_or_match(L, b, p, plen, optint(L, 3, AVXBUF_FIRST), 0);
}

/* What a gmatch iterator keeps besides its buffer (upvalue 1), in a
 * userdata (upvalue 2) that no Lua code can make or change: where to go on
 * from, the end of the last match and the matcher's nesting budget (see
 * avxbuf_match.budget), as 5.4's gmatch keeps them, and a copy of the
 * pattern. One lua_touserdata reads it all, and the iterator writes it in
 * place: this is most of what a call costs besides the matching. */
typedef struct gmatch_state {
  uintptr_t cookie;   /* its own address plus &gmatch_key, as buffers have */
  size_t pos;         /* offset to try from */
  size_t last;        /* end of the last match, or AVXBUF_MATCH_NO_LAST */
  int budget;
  avxbuf_match_start plan;   /* for that budget */
  size_t plen;
  char pattern[];
} gmatch_state;

static const char gmatch_key = 0;

static gmatch_state *test_gmatch_state(lua_State *L, int idx)
{
  size_t size = sizeof(gmatch_state);   /* lua_rawlen once: it is a part of every step's cost */
  gmatch_state *g = (gmatch_state *)avxbuf_testprivate(L, idx, &gmatch_key, offsetof(gmatch_state, cookie), &size);
  return g != NULL && size == sizeof *g + g->plen ? g : NULL;
}

/* The iterator: data and length are read at each call, and once the
 * buffer is shorter than the offset the iteration is over. */
static int gmatch_next(lua_State *L)
{
  buffer *b = testbuffer(L, lua_upvalueindex(1));
  gmatch_state *g = test_gmatch_state(L, lua_upvalueindex(2));
  if (b == NULL || g == NULL) return luaL_error(L, "avxbuf: this gmatch iterator's upvalues were replaced");
  avxbuf_match ms;
  copyspace c;
  copyspace_init(&c);
  for (;;) {
    if (g->pos > b->len) return 0;
    avxbuf_match_init(&ms, b->data, b->len, g->pattern, g->plen);
    ms.budget = g->budget;
    int found = avxbuf_match_gmatch(&ms, g->pos, g->last, &g->plan);
    if (found == AVXBUF_MATCH_NONE) return 0;
    if (found == AVXBUF_MATCH_ERROR && !ms.found) {
      /* as 5.4 leaves its counter; below 0 it never counts down to 0 again */
      g->budget = ms.budget_left < 0 ? -1 : ms.budget_left;   /* (then g->plan is not used) */
      return match_error(L, &ms);
    }
    size_t need;
    int n = found == AVXBUF_MATCH_FOUND ? push_results(L, b, &ms, 0, &c, &need) : 0;
    if (n < 0) {
      copyspace_grow(L, &c, need);
      continue;
    }
    g->pos = g->last = ms.end;   /* also when its captures are an error, as in 5.4 */
    if (found == AVXBUF_MATCH_ERROR) return match_error(L, &ms);
    return n;
  }
}

/* buf:gmatch(pattern [, init]) -> an iterator over the matches, as 5.4's
 * string.gmatch: init beyond the end starts after it (no match). */
static int l_gmatch(lua_State *L)
{
  buffer *b = checkbuffer(L, 1);
  size_t plen;
  const char *p = check_pattern(L, 2, &plen);
  lua_Integer i = optint(L, 3, AVXBUF_FIRST);
  gmatch_state *g = (gmatch_state *)lua_newuserdatauv(L, sizeof *g + plen, 0);
  g->cookie = avxbuf_cookie(g, &gmatch_key);
  memcpy(g->pattern, p, plen);   /* p stays valid: the string is still on the stack */
  g->plen = plen;
  size_t init = avxbuf_sub_start(i, b->len) - 1;   /* b->len read after the userdata was made */
  g->pos = init > b->len ? b->len + 1 : init;
  g->last = AVXBUF_MATCH_NO_LAST;
  g->budget = AVXBUF_MATCH_MAXDEPTH;
  avxbuf_match ms;
  avxbuf_match_init(&ms, "", 0, g->pattern, plen);
  avxbuf_match_plan_gmatch(&ms, &g->plan);
  /* the upvalues pushed in order: two API calls where settop + remove
   * were three */
  lua_pushvalue(L, 1);
  lua_pushvalue(L, -2);
  lua_pushcclosure(L, gmatch_next, 2);
  return 1;
}

const luaL_Reg avxbuf_match_methods[] = {
  { "find", l_find }, { "rfind", l_rfind }, { "match", l_match }, { "gmatch", l_gmatch },
  { NULL, NULL }
};
