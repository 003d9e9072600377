/* LuaJIT: hands the module to avxbuf.ffi (compiled in: src/lua/lembed.c) with
 * the entry points it calls through the FFI, in code the JIT compiles, and
 * what it needs to recognise a buffer. Anything missing (no FFI, a layout
 * it does not recognise) leaves the C functions in place. */
#include <stddef.h>
#include <string.h>
#include "lua/lmodule.h"
#include "lua/lfuncs.h"
#include "lua/largs.h"
#include "lua/lbuffer.h"
#include "lua/lembed.h"
#include "core/packfmt.h"
#include "core/match.h"
#include "kernels/kernels.h"

/* The FFI path's moves. lua/avxbuf/ffi.lua reads a buffer's generation
 * before it makes any cdata; the generation is checked again here, where
 * nothing can run between the check and the move. In Lua it could not be:
 * compiled, a trace may exit between any check and the call, and LuaJIT
 * steps the collector, finalizers included, on such an exit (lj_trace_exit,
 * in the atomic and finalize phases), so a finalizer could free the block
 * in between (seen: spec/gc_spec.lua under the torture build). What an
 * entry refuses goes to the C function, which does it or raises the
 * documented error. */

/* copy and fill (zero: byte 0) for the FFI path, every form, from the
 * arguments as given: l_copy's and fill's rules (avxbuf_copy_count,
 * avxbuf_fill_count: src/lua/largs.h) on the buffers as they are now (nothing
 * runs in here), and the move with the kernel the plan picks. ffi.lua
 * passes a defaulted source or start index as AVXBUF_FIRST (exported as
 * `first`) and an absent n as FFI_ABSENT (`absent`: no number it passes as
 * given is that large). The source is a buffer (copy_from_buffer) or a Lua
 * string's bytes (copy_from_string), so that every argument travels in a
 * register.
 *
 * What they answer is the generation: ffi.lua reads it (gen) just before
 * the call, and the entry moves only when it is still gen, stepping it to
 * gen + 1 first (buffer_wrote's step); refused (an argument it does not
 * take, a freed buffer, a generation a finalizer moved since ffi.lua read
 * it), it leaves the buffer as it is, stepping the generation once more
 * should it be gen + 1, so that gen + 1 after the call means done and
 * nothing else. No return value: the move is then the entry's last call,
 * which the compiler makes a jump, where a value returned after it needs a
 * call and a return (their cost: docs/runs/zen5-vm-2026-12-05.md). */
#define FFI_ABSENT ((int64_t)1 << 53)

static inline void refuse(buffer *d, uint32_t gen)
{
  if (d->gen == gen + 1) d->gen++;
}

AVXBUF_INLINE void copy_checked_here(buffer *d, uint32_t gen, int64_t di, const unsigned char *src, size_t slen,
                                     int same, int64_t si, int64_t n)
{
  lua_Integer count = avxbuf_copy_count((lua_Integer)di, d->len, (lua_Integer)si, slen, n != FFI_ABSENT,
                                        (lua_Integer)n);
  if (d->gen != gen || d->module == NULL || count < 0) { refuse(d, gen); return; }
  unsigned char *dst = d->data + (di - 1);
  src += si - 1;
  buffer_wrote(d);   /* gen + 1: d->gen is gen here */
  avxbuf_copy(&d->module->state.plan, dst, src, (size_t)count, same ? avxbuf_overlap_of(dst, src, (size_t)count)
                                                                       : OV_NONE);
}

static void ffi_copy_from_buffer(buffer *d, uint32_t gen, const buffer *s, int64_t di, int64_t si, int64_t n)
{
  copy_checked_here(d, gen, di, s->data, s->len, s == d, si, n);
}

static void ffi_copy_from_string(buffer *d, uint32_t gen, const unsigned char *str, int64_t slen, int64_t di,
                                 int64_t si, int64_t n)
{
  copy_checked_here(d, gen, di, str, (size_t)slen, 0, si, n);
}

static void ffi_fill_args(buffer *b, uint32_t gen, int64_t byte, int64_t i, int64_t n)
{
  lua_Integer count = avxbuf_fill_count((lua_Integer)byte, (lua_Integer)i, b->len, n != FFI_ABSENT, (lua_Integer)n);
  if (b->gen != gen || b->module == NULL || count < 0) { refuse(b, gen); return; }
  buffer_wrote(b);
  avxbuf_fill(&b->module->state.plan, b->data + (i - 1), (int)byte, (size_t)count);
}

/* resize(n) for the FFI path where b holds n bytes without growing:
 * avxbuf_resize's zeroes and new length, 1; 0 when the generation changed,
 * n is no size (avxbuf_issize, the C function's rule) or needs growth (the
 * C function grows or raises). */
static int ffi_resize(buffer *b, uint32_t gen, int64_t n)
{
  if (b->gen != gen || b->module == NULL || !avxbuf_issize((lua_Integer)n) || (size_t)n > b->cap) return 0;
  if ((size_t)n > b->len) avxbuf_fill(&b->module->state.plan, b->data + b->len, 0, (size_t)n - b->len);
  buffer_setlen(b, (size_t)n);
  return 1;
}

/* Consumes n bytes from the front of b (all, when it has fewer: C's
 * rule): get, skip and the stream form of unpack once its values exist.
 * No generation to check: it reads b as it is, as the C functions do
 * after making their values. */
static void ffi_consume(buffer *b, size_t n)
{
  buffer_consume(b, buffer_upto(b, n));
}

/* The reads. ffi.lua makes a read's string (ffi.string) from the stage:
 * memory of the module's own, never freed while a buffer of the module
 * lives, which C fills here after its checks, where nothing can run
 * between the check and the copy. A pointer into a buffer that Lua made
 * and used after a check would be stale when that check, a guard, exits
 * the trace on its passing side and the exit runs a finalizer that frees
 * or resizes the buffer (lj_trace_exit; docs/reliability.md, issue 44).
 * The stamp steps at every staging: ffi.lua reads it before the call and
 * keeps the string only when it is one more after ffi.string, so that a
 * finalizer's read that staged in between (at such an exit, or at an
 * allocation of the interpreter) is seen, and the C function takes the
 * call. ffi.lua declares the stamp (avxbuf_stage) and takes where the
 * bytes start from push_layout. Reads longer than the stage are the C
 * functions'. What needs a search runs here too and returns a double (a
 * Lua number: no cdata to box when interpreted). */
#define STAGE_BYTES 4096
#define STAGE_PIECES 64   /* put's pieces and pack's values (ffi.lua's bound, a literal there) */
typedef struct ffi_stage {
  int32_t stamp;
  struct {                        /* put's pieces, staged by ffi.lua: */
    const unsigned char *p;       /* a Lua string's bytes, which the caller holds, */
    const buffer *buf;            /* or a buffer (then p is NULL), */
    uint32_t gen;                 /* with its generation then, */
    size_t n;                     /* and the length */
  } piece[STAGE_PIECES];
  avxbuf_pack_value value[STAGE_PIECES];   /* pack's values, staged by ffi.lua */
  unsigned char bytes[STAGE_BYTES];   /* a read's bytes, staged by C */
} ffi_stage;

/* n bytes of b from offset at copied to st, the stamp stepped first. By
 * memcpy, as LuaJIT's own copy of them into the string (lj_str_new) is:
 * the stage is no buffer of the user's, and the plan's kernels are for
 * those (the plan's way for a few bytes cost more here:
 * docs/runs/zen5-vm-2026-12-05.md). */
static void step_stamp(ffi_stage *st)
{
  st->stamp = st->stamp == INT32_MAX ? 0 : st->stamp + 1;
}

static void stage(const buffer *b, ffi_stage *st, size_t at, size_t n)
{
  step_stamp(st);
  /* n hidden from the optimiser: knowing it at most STAGE_BYTES, GCC 12
   * expanded this memcpy into rep movsq in ffi_get, whose start-up cost
   * is many times a short copy's (Intel's and AMD's optimisation manuals). */
  __asm__("" : "+r"(n));
  memcpy(st->bytes, b->data + at, n);
}

static int stage_ok(const buffer *b, const ffi_stage *st)
{
  return b->module != NULL && b->module->stage == st;
}

/* tostring(i, j) and unpack's fields: the n bytes of b from offset at,
 * staged, which steps the stamp once; refused (they are not all in b, or
 * do not fit the stage), the stamp steps twice, so that ffi.lua, which
 * reads it before the call, finds it one step on exactly when these bytes
 * were staged; st not b's module's stage is left alone. No return value,
 * so that the copy is the entry's last call, a jump (as copy's entries). */
static void ffi_read(const buffer *b, ffi_stage *st, int64_t at, int64_t n)
{
  if (!stage_ok(b, st)) return;
  if (at < 0 || n < 0 || n > STAGE_BYTES || (uint64_t)at > b->len || (uint64_t)n > b->len - (uint64_t)at) {
    step_stamp(st);
    step_stamp(st);
    return;
  }
  stage(b, st, (size_t)at, (size_t)n);
}

/* byte(i): the byte at offset at of b, or -1 past the end. */
static int ffi_byte(const buffer *b, int64_t at)
{
  return at >= 0 && (uint64_t)at < b->len ? b->data[at] : -1;
}

/* pack(fmt, v...) of the count values ffi.lua staged in st under stamp
 * (as ffi_put), appended to b: src/lua/lpack.c's avxbuf_pack_staged, the
 * index after the last byte written, or 0, with nothing written. */
static double ffi_pack(buffer *b, ffi_stage *st, int32_t stamp, const char *fmt, size_t len, int count)
{
  if (!stage_ok(b, st) || st->stamp != stamp || count < 0 || count > STAGE_PIECES) return 0;
  return avxbuf_pack_staged(b, fmt, len, st->value, count);
}

/* pack's n bytes, which the code ffi_format.lua made for the format checked
 * as avxbuf_pack_staged does and wrote to st's bytes under stamp, appended
 * to b as it is now: the index after them, or 0, with nothing written, when
 * st is not b's module's or holds another stamp (a finalizer staged in
 * between), n does not fit, or growth failed (then the C path packs). */
static double ffi_pack_bytes(buffer *b, ffi_stage *st, int32_t stamp, int64_t n)
{
  if (!stage_ok(b, st) || st->stamp != stamp || n < 0 || n > STAGE_BYTES || (size_t)n > MAX_LENGTH - b->len)
    return 0;
  size_t end = b->len + (size_t)n;
  if (!avxbuf_room(b, end)) return 0;
  __asm__("" : "+r"(n));   /* as in stage: a memcpy, not rep movsq */
  memcpy(b->data + b->len, st->bytes, (size_t)n);
  buffer_setlen(b, end);
  return (double)end + 1;
}

/* The same for a format of integers of n bytes in all (1 to 4), which
 * ffi_format.lua's code gives as bits (the first byte in bits 0-7, the next
 * in 8-15, and so on), with no stage: an argument cannot change between
 * the checks in Lua and the write here. 0 also for a buffer whose __gc has
 * run (no module). */
static double ffi_pack_bits(buffer *b, int32_t bits, int n)
{
  if (b->module == NULL || n < 1 || n > 4 || (size_t)n > MAX_LENGTH - b->len) return 0;
  size_t end = b->len + (size_t)n;
  if (!avxbuf_room(b, end)) return 0;
  unsigned char *d = b->data + b->len;
  for (int k = 0; k < n; k++) d[k] = (unsigned char)((uint32_t)bits >> (8 * k));
  buffer_setlen(b, end);
  return (double)end + 1;
}

/* put of the count pieces ffi.lua staged in st under stamp (it sets the
 * stamp first: a finalizer's read or put that staged in between steps
 * it), appended to b as it is now, grown by C's rule and moved with the
 * kernel the plan picks: 1. 0, with nothing written, when st is not b's
 * module's or holds another stamp, a piece buffer changed since it was
 * staged (a piece that is b itself must still be all of b), or growth
 * failed: the C function then puts, or raises. Growth uses the allocator
 * the module was made with (LuaJIT frees every object with whatever
 * allocator is current, so a program that changes it must keep the two
 * compatible anyway), and cannot tell the collector (no Lua call here):
 * the next call into C that paces does, avxbuf.new among them. */
static int ffi_put(buffer *b, ffi_stage *st, int32_t stamp, int count)
{
  if (!stage_ok(b, st) || st->stamp != stamp || count < 0 || count > STAGE_PIECES) return 0;
  size_t total = b->len;
  for (int k = 0; k < count; k++) {
    const buffer *s = st->piece[k].buf;
    size_t n = st->piece[k].n;
    if (s == b ? n != b->len : s != NULL ? s->gen != st->piece[k].gen || n > s->len : st->piece[k].p == NULL)
      return 0;
    if (n > MAX_LENGTH - total) return 0;
    total += n;
  }
  if (!avxbuf_room(b, total)) return 0;
  const avxbuf_plan *plan = &b->module->state.plan;
  unsigned char *d = b->data + b->len;
  for (int k = 0; k < count; k++) {
    const buffer *s = st->piece[k].buf;
    avxbuf_copy(plan, d, s != NULL ? s->data : st->piece[k].p, st->piece[k].n, OV_NONE);
    d += st->piece[k].n;
  }
  buffer_setlen(b, total);
  return 1;
}

/* put of one or two Lua strings (n2 0 for one), which the caller holds,
 * with no stage: ffi_put's answer for them, pointers and lengths being
 * arguments, which nothing can change between ffi.lua's type tests and
 * the move here. */
static int ffi_put_strings(buffer *b, const unsigned char *p1, int64_t n1, const unsigned char *p2, int64_t n2)
{
  if (b->module == NULL || n1 < 0 || n2 < 0 || (uint64_t)n1 > MAX_LENGTH - b->len
      || (uint64_t)n2 > MAX_LENGTH - b->len - (uint64_t)n1)
    return 0;
  size_t end = b->len + (size_t)n1 + (size_t)n2;
  if (!avxbuf_room(b, end)) return 0;
  const avxbuf_plan *plan = &b->module->state.plan;
  unsigned char *d = b->data + b->len;
  avxbuf_copy(plan, d, p1, (size_t)n1, OV_NONE);
  if (n2 > 0) avxbuf_copy(plan, d + n1, p2, (size_t)n2, OV_NONE);
  buffer_setlen(b, end);
  return 1;
}

/* From init (AVXBUF_FIRST unless given; string.sub's start rule, as
 * plain_find in src/lua/lmatch.c) in b: -2 when the generation changed (or b
 * was brought back after __gc), -1 when that is past the end; else
 * 2 * e + found, where
 * e is the offset of the first occurrence of needle (m >= 1 bytes), found
 * 1, or the length when there is none (found 0): buf:find's plain search,
 * with the kernel b's plan picks, and split's. */
static const unsigned char *search_from(const buffer *b, size_t off, const unsigned char *needle, size_t m)
{
  return buffer_search(&b->module->state.plan, b, off, b->len - off, needle, m, 0);
}

static double ffi_search(const buffer *b, uint32_t gen, int given, int64_t init, const unsigned char *needle,
                         size_t m)
{
  if (b->gen != gen || b->module == NULL) return -2;
  size_t off = avxbuf_sub_start(given ? (lua_Integer)init : AVXBUF_FIRST, b->len) - 1;
  if (off > b->len) return -1;
  const unsigned char *p = search_from(b, off, needle, m);
  return p ? 2.0 * (double)(p - b->data) + 1 : 2.0 * (double)b->len;
}

#define SPLIT_BATCH_MAX 64   /* ffi.lua's batch (exported: split_batch): the offsets, then the end */

/* split's next steps from offset off of b, in one call: -2 and -1 as
 * ffi_search; else the number n (0..k) of separators sep (m >= 1 bytes)
 * found, their offsets in out[0..n-1]; fewer than k means the search
 * reached the end, and out[n] is then the length (where the last piece
 * ends). One call per k pieces: a call per piece cost more than the
 * string.find loop it stands for (docs/streams.md). */
static int ffi_split(const buffer *b, uint32_t gen, size_t off, const unsigned char *sep, size_t m, double *out,
                     int k)
{
  if (b->gen != gen || b->module == NULL) return -2;
  if (off > b->len) return -1;
  if (k < 0 || k > SPLIT_BATCH_MAX) k = SPLIT_BATCH_MAX;   /* out holds SPLIT_BATCH_MAX + 1 */
  if (m == 1) {   /* one byte: the offsets in one scan */
    size_t at[SPLIT_BATCH_MAX];
    size_t n = avxbuf_byte_offsets(b->data + off, b->len - off, sep[0], at, (size_t)k);
    for (size_t j = 0; j < n; j++) out[j] = (double)(off + at[j]);
    if (n < (size_t)k) out[n] = (double)b->len;
    return (int)n;
  }
  for (int n = 0; n < k; n++) {
    const unsigned char *p = search_from(b, off, sep, m);
    if (p == NULL) {
      out[n] = (double)b->len;
      return n;
    }
    out[n] = (double)(p - b->data);
    off = (size_t)(p - b->data) + m;
  }
  return k;
}

/* The line of b from offset off, staged: -2 when it does not fit the
 * stage or st is not b's module's (the C iterator goes on), -1 when off
 * is at or past the end; else 2 * n + newline, for n bytes up to a
 * newline (newline 1) or the end (0): src/lua/lsplit.c's line_range. */
static double ffi_line(const buffer *b, ffi_stage *st, size_t off)
{
  if (!stage_ok(b, st)) return -2;
  size_t n;
  int newline = buffer_line(b, off, &n);
  if (newline < 0) return -1;
  if (n > STAGE_BYTES) return -2;
  stage(b, st, off, n);
  return 2.0 * (double)n + newline;
}

/* Where lines(init) and split(sep, init) start in b as it is now (init
 * 1 unless given): C's rule (src/lua/largs.c), as a 0-based offset. No
 * generation: the offset is a number, which nothing can make stale. */
static double ffi_start(const buffer *b, int given, int64_t init)
{
  return (double)avxbuf_start_offset(given, (lua_Integer)init, b->len);
}

/* get(n) (n absent unless given): the bytes it takes of b by C's rule
 * (src/lua/lbuffer.c), staged, and their count; -1 when n is refused (the C
 * function raises), -2 when they do not fit the stage or st is not b's
 * module's. Nothing is consumed: ffi.lua does, once its string exists. */
static int ffi_get(const buffer *b, ffi_stage *st, int given, int64_t n)
{
  if (!stage_ok(b, st)) return -2;
  long long k = avxbuf_get_count(b, given, (lua_Integer)n);
  if (k < 0) return -1;
  if (k > STAGE_BYTES) return -2;
  stage(b, st, 0, (size_t)k);
  return (int)k;
}

static const char *const kind_names[] = {
  [PK_INT] = "int", [PK_UINT] = "uint", [PK_FLOAT] = "float", [PK_DOUBLE] = "double",
  [PK_NUMBER] = "number", [PK_CHAR] = "char", [PK_STRING] = "string", [PK_ZSTR] = "zstr",
  [PK_PAD] = "pad", [PK_ALIGN] = "align",
};

/* The numbers pack takes for an integer op under LuaJIT, lo <= v <= most
 * (each exact in a double), with v integral: avxbuf_number_is_integer's,
 * within string.pack's limits for the op (lpack.c's value_error). */
static void int_range(const avxbuf_pk_op *op, lua_Number *lo, lua_Number *most)
{
  long long l;
  unsigned long long h;
  *lo = -AVXBUF_NUMBER_INT_MOST;
  *most = AVXBUF_NUMBER_INT_MOST;
  if (!avxbuf_pk_int_limits(op, sizeof(lua_Integer), &l, &h)) return;
  if ((lua_Number)l > *lo) *lo = (lua_Number)l;
  if ((lua_Number)(h - 1) < *most) *most = (lua_Number)(h - 1);   /* exact below 2^53 */
}

/* pack_ops(fmt): format fmt as packfmt.c compiles it, for ffi_format.lua
 * to make a packer and an unpacker of: a list of { kind =, size =,
 * little =, align =, least =, lo =, most = } (packfmt.h): least, the bytes
 * unpack counts the op as missing at byte 0; lo and most, the values pack
 * takes (an integer op's numbers, int_range; a string op's longest
 * length, avxbuf_pk_str_most; nil for others). Nothing when the format is
 * wrong, holds a zero byte or is longer than a chunk (the C function deals
 * with those). */
static int l_pack_ops(lua_State *L)
{
  size_t len;
  const char *fmt = luaL_checklstring(L, 1, &len);
  if (strlen(fmt) != len) return 0;
  avxbuf_pk h;
  avxbuf_pk_chunk c;
  avxbuf_pk_init(&h, fmt, AVXBUF_PK_LUA);
  avxbuf_pk_compile(&h, &c);
  if (c.more || c.bad) return 0;
  lua_createtable(L, c.n, 0);
  for (int i = 0; i < c.n; i++) {
    const avxbuf_pk_op *op = &c.op[i];
    lua_createtable(L, 0, 7);
    lua_pushstring(L, kind_names[op->kind]);
    lua_setfield(L, -2, "kind");
    lua_pushinteger(L, (lua_Integer)op->size);
    lua_setfield(L, -2, "size");
    lua_pushboolean(L, op->little);
    lua_setfield(L, -2, "little");
    lua_pushinteger(L, op->align);
    lua_setfield(L, -2, "align");
    lua_pushinteger(L, (lua_Integer)avxbuf_pk_least(op, 0));
    lua_setfield(L, -2, "least");
    if (op->kind == PK_INT || op->kind == PK_UINT) {
      lua_Number lo, most;
      int_range(op, &lo, &most);
      lua_pushnumber(L, lo);
      lua_setfield(L, -2, "lo");
      lua_pushnumber(L, most);
      lua_setfield(L, -2, "most");
    } else if (op->kind == PK_CHAR || op->kind == PK_STRING) {
      lua_pushnumber(L, (lua_Number)avxbuf_pk_str_most(op));
      lua_setfield(L, -2, "most");
    }
    lua_rawseti(L, -2, i + 1);
  }
  return 1;
}

/* The layout ffi.lua declares for the buffer's first fields, the plan's
 * small calls and the stage, to check at load: offsets of len, data, cap,
 * gen and module, the sizes of len and gen, where the small calls' fields
 * lie from copy_small_fn, the stage's size and where its bytes start. */
static void push_layout(lua_State *L)
{
  static const struct { const char *name; size_t value; } facts[] = {
    { "len", offsetof(buffer, len) }, { "data", offsetof(buffer, data) },
    { "cap", offsetof(buffer, cap) }, { "gen", offsetof(buffer, gen) },
    { "module", offsetof(buffer, module) }, { "len_size", sizeof(size_t) }, { "gen_size", sizeof(uint32_t) },
    { "small_fill", offsetof(avxbuf_plan, fill_small_fn) - offsetof(avxbuf_plan, copy_small_fn) },
    { "small_copy_upto", offsetof(avxbuf_plan, copy_small_upto) - offsetof(avxbuf_plan, copy_small_fn) },
    { "small_fill_upto", offsetof(avxbuf_plan, fill_small_upto) - offsetof(avxbuf_plan, copy_small_fn) },
    { "stage_size", sizeof(ffi_stage) }, { "stage_bytes", offsetof(ffi_stage, bytes) },
    { "stage_pieces", STAGE_PIECES }, { "stage_piece", offsetof(ffi_stage, piece) },
    { "piece_size", sizeof(((ffi_stage *)0)->piece[0]) }, { "stage_value", offsetof(ffi_stage, value) },
    { "value_size", sizeof(avxbuf_pack_value) },
  };
  lua_createtable(L, 0, (int)(sizeof facts / sizeof facts[0]));
  for (size_t i = 0; i < sizeof facts / sizeof facts[0]; i++) {
    lua_pushinteger(L, (lua_Integer)facts[i].value);
    lua_setfield(L, -2, facts[i].name);
  }
}

/* What ffi.lua is given: function pointers travel as light userdata, which
 * it casts to the types it declares for them. */
static void push_entries(lua_State *L, lmodule *m, ffi_stage *st)
{
  const struct { const char *name; uintptr_t fn; } entries[] = {
    { "put", (uintptr_t)&ffi_put }, { "put_strings", (uintptr_t)&ffi_put_strings }, { "pack", (uintptr_t)&ffi_pack },
    { "pack_bytes", (uintptr_t)&ffi_pack_bytes }, { "pack_bits", (uintptr_t)&ffi_pack_bits },
    { "copy_from_buffer", (uintptr_t)&ffi_copy_from_buffer },
    { "copy_from_string", (uintptr_t)&ffi_copy_from_string }, { "fill_args", (uintptr_t)&ffi_fill_args },
    { "resize", (uintptr_t)&ffi_resize }, { "has_specials", (uintptr_t)&avxbuf_match_has_specials },
    { "consume", (uintptr_t)&ffi_consume },
    { "search", (uintptr_t)&ffi_search }, { "line", (uintptr_t)&ffi_line },
    { "read", (uintptr_t)&ffi_read }, { "byte", (uintptr_t)&ffi_byte },
    { "split", (uintptr_t)&ffi_split }, { "start", (uintptr_t)&ffi_start }, { "get", (uintptr_t)&ffi_get },
  };
  lua_createtable(L, 0, 18);
  for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++) {
    lua_pushlightuserdata(L, (void *)entries[i].fn);
    lua_setfield(L, -2, entries[i].name);
  }
  lua_pushinteger(L, AVXBUF_FIRST);
  lua_setfield(L, -2, "first");
  lua_pushnumber(L, (lua_Number)FFI_ABSENT);
  lua_setfield(L, -2, "absent");
  lua_pushinteger(L, SPLIT_BATCH_MAX);
  lua_setfield(L, -2, "split_batch");
  lua_pushinteger(L, (lua_Integer)avxbuf_start_offset(0, 0, 0));   /* lines' and split's, init absent */
  lua_setfield(L, -2, "start_default");
  lua_pushcfunction(L, l_pack_ops);
  lua_setfield(L, -2, "pack_ops");
  lua_pushlightuserdata(L, (void *)&avxbuf_cookie_key);
  lua_setfield(L, -2, "cookie_key");
  lua_pushlightuserdata(L, st);
  lua_setfield(L, -2, "stage");
  lua_pushlightuserdata(L, m);                     /* what a buffer of this module holds */
  lua_setfield(L, -2, "module");
  lua_pushlightuserdata(L, (void *)&m->state.plan.copy_small_fn);   /* the small calls */
  lua_setfield(L, -2, "small");
  push_layout(L);
  lua_setfield(L, -2, "layout");
}

/* The stage, made once per module record (freed with it: src/lua/lmodule.c);
 * NULL when memory ran out, and then no FFI path. */
static ffi_stage *make_stage(lmodule *m)
{
  ffi_stage *st = (ffi_stage *)m->alloc(m->alloc_ud, NULL, 0, sizeof *st);
  if (st == NULL) return NULL;
  st->stamp = 0;
  m->stage = st;
  m->stage_size = sizeof *st;
  return st;
}

void avxbuf_luajit_install(lua_State *L, lmodule *m)
{
  int on = 0;
  lua_getglobal(L, "jit");
  int luajit = !lua_isnil(L, -1);
  lua_pop(L, 1);
  ffi_stage *st = luajit ? make_stage(m) : NULL;
  if (st) {
    int loaded = avxbuf_require_embedded(L, "avxbuf.ffi");
    if (loaded && lua_isfunction(L, -1)) {
      lua_pushvalue(L, -2);                       /* the module */
      push_entries(L, m, st);
      if (avxbuf_require_embedded(L, "avxbuf.ffi_format")) {
        lua_setfield(L, -2, "format");            /* the code pack and unpack make per format */
        on = lua_pcall(L, 2, 0, 0) == LUA_OK;
        if (!on) lua_pop(L, 1);                   /* the error: keep the C path */
      } else {
        lua_pop(L, 4);                            /* the error, the entries, the module, avxbuf.ffi */
      }
    } else {
      lua_pop(L, 1);                              /* the error, or what it gave */
    }
  }
  lua_pushboolean(L, on);
  lua_setfield(L, -2, "ffi");
}
