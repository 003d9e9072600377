/* Small copies through an entry shaped like the FFI path's (src/luajit/lluajit.c):
 * a function called through a pointer that checks its arguments and moves
 * n bytes with avxbuf_copy and the plan of a module record on the heap, or
 * with memcpy; 1..64 bytes, timed from C (issue 45).
 *
 * Built as csweep is (no Makefile rule of its own):
 *   cc -O2 -g -fPIC -fno-plt -falign-loops=64 -Isrc -o build/bench/smallcopy bench/smallcopy.c \
 *     build/obj/core/[a-z]*.o build/obj/kernels/[a-z]*.o -lpthread
 *
 *   build/bench/smallcopy [--sizes LO:HI] [--rounds R] [--reps N] [--delta D]
 *                         [--sweep-delta N] [--src fixed|moving] [--readback|--compare]
 *
 * --delta D places the plan so that its first byte lies D bytes (mod 4096)
 * past the destination's: loads of the plan whose address bits 11:0 match
 * a store still in flight wait on it (4K aliasing:
 * docs/runs/zen5-vm-2026-12-05.md, "The default's 4 KiB").
 * --sweep-delta N times size N at every delta 0..4032, step 64.
 * --readback reads the n bytes back after each copy, as LuaJIT makes a
 * string of a read's staged bytes (reader() below); --compare, the same
 * with memcmp against bytes equal to them (a string already interned).
 * Each cell: the median over interleaved rounds of ns per call, for the
 * plan's entry and memcpy's. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/dispatch.h"
#include "timing.h"

/* What the entries see: a module record with the plan inside, and a buffer
 * that points at it, as lmodule and buffer (src/lua/lmodule.h, src/core/buffer.h). */
typedef struct record { char api[64]; avxbuf_state state; } record;
typedef struct buf { size_t len, cap; unsigned char *data; record *module; uint32_t gen; } buf;

#define ENTRY static __attribute__((noinline, aligned(64))) int
ENTRY entry_plan(buf *d, const unsigned char *src, int64_t slen, int64_t n)
{
  if (d->module == NULL || n < 0 || n > slen || (uint64_t)n > d->cap) return 0;
  avxbuf_copy(&d->module->state.plan, d->data, src, (size_t)n, OV_NONE);
  d->gen++;
  return 1;
}
ENTRY entry_memcpy(buf *d, const unsigned char *src, int64_t slen, int64_t n)
{
  if (d->module == NULL || n < 0 || n > slen || (uint64_t)n > d->cap) return 0;
  memcpy(d->data, src, (size_t)n);
  d->gen++;
  return 1;
}
typedef int (*entry_fn)(buf *, const unsigned char *, int64_t, int64_t);
static volatile entry_fn v_entry;
static volatile int sink;

static int moving = 1, readback = 0;
/* The reader after each copy, with --readback: what LuaJIT does with a
 * read's staged bytes (lj_str_new: a hash of 4-byte words at the start,
 * the middle and the end, then the C library's memcmp or memcpy of all n),
 * so that a copy whose stores a wider load spans is seen: such a load
 * cannot take its bytes from the stores still in flight. */
static void *(*volatile v_memcpy)(void *, const void *, size_t) = memcpy;
static int (*volatile v_memcmp)(const void *, const void *, size_t) = memcmp;
static unsigned char out[128], ref[128];
static inline uint32_t ld32u(const unsigned char *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static __attribute__((noinline)) int reader(const unsigned char *p, size_t n)
{
  uint32_t h = (uint32_t)n;
  if (n >= 4) h ^= ld32u(p) + ld32u(p + n - 4) + ld32u(p + (n >> 1) - 2);
  else h ^= p[0] + p[n - 1] + p[n >> 1];
  if (readback == 2) return (int)(h & 1) + (v_memcmp(p, ref, n) == 0);
  v_memcpy(out, p, n);
  return (int)(h & 1);
}
#define TIMED_LOOP static __attribute__((noinline, aligned(64))) void
TIMED_LOOP loop(buf *d, const unsigned char *src, int64_t n, long reps)
{
  entry_fn f = v_entry;
  int acc = 0;
  if (readback)
    for (long r = 0; r < reps; r++) { acc += f(d, src + r % 4000, 4096, n); acc += reader(d->data, (size_t)n); }
  else if (moving)
    for (long r = 0; r < reps; r++) acc += f(d, src + r % 4000, 4096, n);
  else
    for (long r = 0; r < reps; r++) acc += f(d, src, 4096, n);
  sink = acc;
}

static unsigned char *arena, *srcmem, *dstmem;
static buf b;

/* The record placed so that the plan starts delta bytes past dst mod 4096. */
static void place(long delta)
{
  static record *rec;
  uintptr_t dst_off = (uintptr_t)dstmem & 4095;
  uintptr_t want = (dst_off + (uintptr_t)delta) & 4095;
  uintptr_t base = ((uintptr_t)arena + 4095) & ~(uintptr_t)4095;
  uintptr_t plan_at = base + 4096 + want;
  record *r = (record *)(plan_at - offsetof(record, state) - offsetof(avxbuf_state, plan));
  if (rec == NULL) { rec = r; avxbuf_state_init(&rec->state, getenv("AVXBUF_OPTIONS"), NULL, NULL); }
  else if (r != rec) { memmove(r, rec, sizeof *r); rec = r; }
  b.module = rec;
}

static void cell(int64_t n, long reps, int rounds, double *plan_ns, double *libc_ns)
{
  double tp[64], tl[64];
  for (int k = 0; k < rounds; k++) {
    for (int w = 0; w < 2; w++) {
      int first_plan = k % 2 == 0;
      int is_plan = w == 0 ? first_plan : !first_plan;
      v_entry = is_plan ? entry_plan : entry_memcpy;
      loop(&b, srcmem, n, reps / 10);   /* warm */
      double t0 = avxbuf_now();
      loop(&b, srcmem, n, reps);
      double t = (avxbuf_now() - t0) / (double)reps * 1e9;
      if (is_plan) tp[k] = t; else tl[k] = t;
    }
  }
  *plan_ns = median(tp, rounds);
  *libc_ns = median(tl, rounds);
}

int main(int argc, char **argv)
{
  int lo = 1, hi = 64, rounds = 7, sweep = 0;
  long reps = 2000000, delta = -1;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--sizes") && i + 1 < argc) sscanf(argv[++i], "%d:%d", &lo, &hi);
    else if (!strcmp(argv[i], "--rounds") && i + 1 < argc) rounds = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atol(argv[++i]);
    else if (!strcmp(argv[i], "--delta") && i + 1 < argc) delta = atol(argv[++i]);
    else if (!strcmp(argv[i], "--sweep-delta") && i + 1 < argc) sweep = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--src") && i + 1 < argc) moving = strcmp(argv[++i], "fixed") != 0;
    else if (!strcmp(argv[i], "--readback")) readback = 1;
    else if (!strcmp(argv[i], "--compare")) readback = 2;
    else { fprintf(stderr, "usage: %s [--sizes LO:HI] [--rounds R] [--reps N] [--delta D] [--sweep-delta N] [--src fixed|moving] [--readback|--compare]\n", argv[0]); return 2; }
  }
  if (rounds > 64) rounds = 64;
  arena = aligned_alloc(4096, 3 * 4096);
  srcmem = aligned_alloc(4096, 2 * 4096);
  dstmem = aligned_alloc(4096, 2 * 4096);
  for (int i = 0; i < 8192; i++) srcmem[i] = 7;
  memset(ref, 7, sizeof ref);
  b.data = dstmem + 64; b.cap = 4096; b.len = 0;
  dstmem += 64;
  place(delta < 0 ? 2048 : delta);
  const avxbuf_plan *p = &b.module->state.plan;
  printf("# plan: small kernel %s below %zu, le16_upto %zu, call_from %zu span %zu, call_fn %s, mid_fn %s\n",
         p->copy_small->name, p->copy_small_below, p->copy_le16_upto, p->copy_call_from, p->copy_call_span,
         p->copy_call_fn ? avxbuf_pick_copy(p, AVXBUF_CALL_MIN, OV_NONE)->name : "NULL",
         p->copy_mid_fn ? avxbuf_pick_copy(p, AVXBUF_CALL_MAX + 1, OV_NONE)->name : "NULL");
  printf("# dst page offset %lu, plan page offset %lu, src %s\n", (unsigned long)((uintptr_t)b.data & 4095),
         (unsigned long)((uintptr_t)p & 4095), moving ? "moving" : "fixed");
  if (sweep) {
    printf("delta\tplan_ns\tmemcpy_ns\n");
    for (long dl = 0; dl < 4096; dl += 64) {
      place(dl);
      double tp, tl;
      cell(sweep, reps, rounds, &tp, &tl);
      printf("%ld\t%.2f\t%.2f\n", dl, tp, tl);
      fflush(stdout);
    }
    return 0;
  }
  printf("# %s\n", readback == 2 ? "compared after each copy" : readback ? "read back after each copy" : "no reader");
  printf("n\tplan_ns\tmemcpy_ns\tdiff\n");
  for (int n = lo; n <= hi; n++) {
    double tp, tl;
    cell(n, reps, rounds, &tp, &tl);
    printf("%d\t%.2f\t%.2f\t%+.2f\n", n, tp, tl, tp - tl);
    fflush(stdout);
  }
  return 0;
}
