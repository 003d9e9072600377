/* The kernel sweep without Lua: avxbuf's default dispatch, every kernel this
 * CPU can run, and the C library's memmove/memset, called directly from C
 * and timed interleaved in the same process. Below ~16 KiB a call from Lua
 * costs more than the kernel (bench/kernels.lua), so this is where kernels
 * are judged at those sizes.
 *
 *   build/bench/csweep [--quick] [--sizes LO:HI] [--seed N] [--json FILE]
 *
 * --sizes keeps only the cells from LO to HI bytes (a closer look at a few
 * size classes, in the same interleaved rounds); --seed N (default 0) gives
 * the rounds' orders and placements.
 *
 * Rows: the default dispatch, its twin (the same code reading a copy of the
 * plan that lies elsewhere: while the dispatch read three words of the plan
 * a call, where they lay moved small copies' times by up to a fifth on the
 * Zen 4 VM, docs/runs/zen4-vm-2026-12-04.md), kernel_nop (the kernel the
 * default runs in the cell, from a kernel row's loop with one nop more: a
 * control for plancheck's dispatch tax), every vector kernel, the
 * string instructions ("rep": rep movsb for copies, rep stosb for zero and
 * fill) where ERMS has them, the C library.
 * Cells: copy, zero and fill at sizes from 16 B to 64 MiB with both ends
 * 64-byte aligned (and find, of a 16-byte needle at the end of the
 * haystack, against memmem); copies of 256 B to 1 MiB at every pair of destination and
 * source offsets 0, 1, 31, 63 within 64 bytes; and copies between two large
 * buffers whose distance dst - src is 0, 1..63, 64 or 2048 modulo 4096 (the
 * page-aliasing cases, where a copy's loads and stores look alike to the
 * store-forwarding logic). Each cell: the median over interleaved rounds of
 * GB/s, and the median of the per-round ratios to the C library; in the
 * JSON also each row's time a call in every round (ns, in round order:
 * plancheck pairs two rows round by round), the kernel the default runs
 * there and the row timing it (default_kernel, default_row: plancheck's
 * dispatch tax). */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/dispatch.h"
#include "core/op.h"
#include "timing.h"

typedef struct timed {
  const char *name;
  const avxbuf_kernel *k;   /* NULL: the default dispatch; &libc_direct: the C library; &default_twin */
  const avxbuf_kernel *fill_k;   /* for zero and fill, where it differs (the rep row) */
} timed;

static avxbuf_state state, twin;
static const avxbuf_kernel libc_direct = { .name = "libc", .vector_bits = -1 };
static const avxbuf_kernel default_twin = { .name = "default_twin", .vector_bits = -1 };
static const avxbuf_kernel kernel_nop = { .name = "kernel_nop", .vector_bits = -1 };
/* Through pointers the compiler cannot see through: no inlined memmove. */
static void *(*volatile c_memmove)(void *, const void *, size_t) = memmove;
static void *(*volatile c_memset)(void *, int, size_t) = memset;
static void *(*volatile c_memmem)(const void *, size_t, const void *, size_t) = memmem;

/* find: a 16-byte needle that occurs only at the very end of the haystack,
 * so that every byte is looked at; its other bytes differ from the
 * haystack's, which is filled with 1s. */
#define NEEDLE 16
static const unsigned char *volatile found;

/* The C library's functions and the kernels' have other types, so each has
 * its loop; every loop has one shape: the function is read from a volatile
 * pointer and called, once a repetition. Chosen once before the loop, so
 * that no row pays for the choice: choosing at every call, with the C
 * library tested first, charged each kernel row a few more compares and
 * loads per call than the libc row, enough to matter below 1 KiB. Each
 * loop is a function of its own starting on a 64-byte boundary, as the
 * kernels do (src/kernels/kernels.h): loops placed anywhere in one
 * function ran the same call at speeds a few percent apart, which the
 * rows' ratios then carried. */
static void *(*volatile v_memmove)(void *, const void *, size_t);
static void *(*volatile v_memset)(void *, int, size_t);
static const unsigned char *(*volatile v_memmem)(const void *, size_t, const void *, size_t);
static volatile avxbuf_copy_fn v_copy;
static volatile avxbuf_fill_fn v_fill;
static volatile avxbuf_find_fn v_find;

#define TIMED_LOOP static __attribute__((noinline, aligned(64))) void
/* A family's three loops (name_copy, name_fill, name_find), each repeating
 * one call on its arguments. */
#define TIMED_LOOPS(name, copy_call, fill_call, find_call) \
  TIMED_LOOP name##_copy(unsigned char *d, const unsigned char *s, size_t n, long reps) \
  { for (long r = 0; r < reps; r++) copy_call; } \
  TIMED_LOOP name##_fill(unsigned char *d, int byte, size_t n, long reps) \
  { for (long r = 0; r < reps; r++) fill_call; } \
  TIMED_LOOP name##_find(const unsigned char *s, size_t n, const unsigned char *needle, long reps) \
  { for (long r = 0; r < reps; r++) found = find_call; }
TIMED_LOOPS(libc, v_memmove(d, s, n), v_memset(d, byte, n), v_memmem(s, n, needle, NEEDLE))
/* The default: what a caller of avxbuf_copy runs, plan and all; and its
 * twin, the same loops reading the twin state's copy of the plan. */
#define DISPATCH_LOOPS(name, st) \
  TIMED_LOOPS(name, avxbuf_copy(&st.plan, d, s, n, OV_NONE), avxbuf_fill(&st.plan, d, byte, n), \
              avxbuf_find_of(&st.plan, n, 0)(s, n, needle, NEEDLE))
DISPATCH_LOOPS(default, state)
DISPATCH_LOOPS(twin, twin)
TIMED_LOOPS(kernel, v_copy(d, s, n), v_fill(d, byte, n), v_find(s, n, needle, NEEDLE))
/* The kernel row's loop with one nop more before the call: a control for
 * the dispatch tax (up to 16 bytes, where the default moves the bytes
 * inline, it still calls the kernel: plancheck reads no tax there). The
 * default's loop decides before it calls; on the Zen 5 VM one instruction
 * more there, a nop as much as a compare, slowed a kernel's unaligned 1 KiB
 * copies as far as the default's tax there (docs/runs/zen5-vm-2026-12-06.md,
 * "The night"), so the kernel's own row from a loop one nop longer says how
 * far the call site alone moves it. */
static inline void one_nop(void) { __asm__ volatile("nop"); }
TIMED_LOOPS(kernel_nop, (one_nop(), v_copy(d, s, n)), (one_nop(), v_fill(d, byte, n)),
            (one_nop(), v_find(s, n, needle, NEEDLE)))

/* The kernel the default runs for op and n now: picked at each use, as the
 * default's first zero or fill past the rep stosb window's end measures it
 * and may change the pick (src/core/measured.c). */
static const avxbuf_kernel *kernel_for(int op, size_t n)
{
  if (op == OP_COPY) return avxbuf_pick_copy(&state.plan, n, OV_NONE);
  if (op == OP_FIND) return avxbuf_pick_find(&state.plan, n);
  return avxbuf_pick_fill(&state.plan, n, op == OP_FILL);
}

/* Runs family name's loop for op (TIMED_LOOPS) with run()'s arguments. */
#define RUN_LOOP(name) \
  do { \
    if (op == OP_COPY) name##_copy(d, s, n, reps); \
    else if (op == OP_FIND) name##_find(s, n, needle, reps); \
    else name##_fill(d, byte, n, reps); \
  } while (0)

static void run(const timed *t, int op, unsigned char *d, const unsigned char *s, size_t n, long reps)
{
  int byte = op == OP_ZERO ? 0 : 0x5A;
  const unsigned char *needle = s + n - NEEDLE;   /* find: the haystack is s[0..n) */
  if (t->k == &libc_direct) {
    v_memmove = c_memmove; v_memset = c_memset;
    v_memmem = (const unsigned char *(*)(const void *, size_t, const void *, size_t))c_memmem;
    RUN_LOOP(libc);
  } else if (t->k == NULL) {
    RUN_LOOP(default);
  } else if (t->k == &default_twin) {
    RUN_LOOP(twin);
  } else {
    /* A kernel's row, or the control calling the default's kernel. */
    int nop = t->k == &kernel_nop;
    const avxbuf_kernel *k = nop ? kernel_for(op, n) : t->k, *fill_k = !nop && t->fill_k ? t->fill_k : k;
    v_copy = k->copy; v_fill = fill_k->fill; v_find = k->find;
    if (nop) RUN_LOOP(kernel_nop);
    else RUN_LOOP(kernel);
  }
}

/* A row's repetitions are run at each of the four places a caller's stack
 * pointer can have in a 64-byte line (16-byte aligned, as the x86-64 psABI
 * keeps it at a call), a quarter of them each (a row of 1-3 repetitions,
 * at streaming sizes, runs at the first places only). The find kernels
 * save registers on the stack, and on the Zen 5 VM their calls ran some
 * per cent faster at one of those places than at the others; each row's
 * loop has a stack frame of its own size, so the process's random stack
 * start (ASLR) made one row or another the lucky one, a different one in
 * every process (docs/runs/zen5-vm-2026-12-06.md, "After midnight"). Over
 * the four, a row costs what it costs a caller on average over the places. */
#define STACK_PLACES 4
static __attribute__((noinline)) void run_at(size_t place, const timed *t, int op, unsigned char *d,
                                             const unsigned char *s, size_t n, long reps)
{
  volatile unsigned char *pad = __builtin_alloca(16 * place + 1);   /* 16 bytes more for each place */
  pad[0] = 0;
  run(t, op, d, s, n, reps);
  pad[16 * place] = 0;   /* keeps the space allocated across the call */
}

/* reps (at least 1) repetitions of a row, spread over the stack places. */
static void run_everywhere(const timed *t, int op, unsigned char *d, const unsigned char *s, size_t n, long reps)
{
  for (int place = 0; place < STACK_PLACES; place++)
    run_at((size_t)place, t, op, d, s, n, reps / STACK_PLACES + (place < reps % STACK_PLACES));
}

#define MAX_TIMED 20
#define MAX_ROUNDS 15

typedef struct cell {
  int op;
  size_t n;
  int doff, soff;   /* within 64 bytes */
  long dist;        /* dst - src modulo 4096, or -1 */
  double gbs[MAX_TIMED], ratio[MAX_TIMED];
  double secs[MAX_TIMED][MAX_ROUNDS];   /* a call's time, each round's */
} cell;

static timed rows[MAX_TIMED];
static int nrows, rounds, libc_row, sse2_row = -1;
static double min_time;

/* The state of a xorshift64 generator for seed (--seed; 0 is the sweep's
 * orders and placements before the option existed): base mixed with the
 * seed through splitmix64's finalizer, so that seeds 1, 2, ... give states
 * of their own, never 0, where xorshift stays. */
static uint64_t seeded(uint64_t base, uint64_t seed)
{
  if (seed == 0) return base;
  uint64_t z = seed + 0x9E3779B97F4A7C15u;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
  z ^= z >> 31;
  return base ^ z ? base ^ z : base;
}

static uint64_t seed;

/* 0..n-1 in a random order (Fisher-Yates; from --seed, so that a run can be
 * repeated). The runs make check-default judges each have a seed of their
 * own: with one seed for all, a cell's rows ran in the same orders in every
 * run, and a row that followed rows which slow the next one down (after a
 * 256-bit fill, a 64 KiB fill's next ones ran at about 175 GB/s where they
 * reached 210-235 after others, docs/runs/zen5-vm-2026-12-06.md) was slow in
 * the runs its pick was made on and in those it was judged on alike. */
static void shuffle(int *order, int n)
{
  static uint64_t x;
  if (!x) x = seeded(0x9E3779B97F4A7C15u, seed);
  for (int i = 0; i < n; i++) order[i] = i;
  for (int i = n - 1; i > 0; i--) {
    x ^= x << 13; x ^= x >> 7; x ^= x << 17;   /* xorshift64 */
    int j = (int)(x % (uint64_t)(i + 1));
    int t = order[i]; order[i] = order[j]; order[j] = t;
  }
}

/* Where a round places the cell's buffers: both moved on by the same
 * multiple of 64 below 4096, so offsets and dst - src stay the cell's. Every
 * row calls through a pointer it loads (the plan's field, a volatile one),
 * and a load waits on a store still in flight whose address bits 11:0
 * match (4K aliasing, Intel's optimization manual): with the buffers
 * fixed, the row whose pointer lay within the page offsets the cell's
 * stores cover lost in every round, the default at one placement and a
 * kernel's row at another (docs/benchmarks.md). Placed anew each round,
 * every row meets the same placements. (Its own xorshift: shuffle's order
 * stays that of its own seed.) */
static size_t placement(void)
{
  static uint64_t x;
  if (!x) x = seeded(0xD1B54A32D192ED03u, seed);
  x ^= x << 13; x ^= x >> 7; x ^= x << 17;
  return (size_t)(x % 64) * 64;
}

/* Times one cell: every row once per round, in an order of the round's own,
 * with the buffers where the round places them (find reads a haystack
 * written once: it has no stores to alias). */
static void measure(cell *c, unsigned char *d, const unsigned char *s)
{
  double (*secs)[MAX_ROUNDS] = c->secs;
  long reps[MAX_TIMED];
  /* Each row calibrated on itself: enough repetitions for min_time. With
   * every row given the C library's count, a streaming row at a size it
   * runs 50x slower at held the round for milliseconds of stores to
   * memory, and every row of the cell, the C library's least, then ran
   * slower (zero and fill of 512 B-1 KiB, docs/runs/zen3-vm-2026-12-02.md). */
  for (int i = 0; i < nrows; i++) {
    for (reps[i] = 1;; reps[i] *= 2) {
      double t0 = avxbuf_now();
      run(&rows[i], c->op, d, s, c->n, reps[i]);
      if (avxbuf_now() - t0 >= min_time || reps[i] > (1L << 30)) break;
    }
  }
  for (int round = 0; round < rounds; round++) {
    /* Each round in an order of its own: in one fixed order every row
     * ran right after the same row in every round, so whatever that row
     * left behind (the cache's contents, the predictors' state) weighed on
     * it alike each time, a bias the median keeps; shuffled, it varies
     * from round to round, and the median sees noise. */
    int order[MAX_TIMED];
    shuffle(order, nrows);
    size_t at = c->op == OP_FIND ? 0 : placement();
    unsigned char *rd = c->op == OP_FIND ? d : d + at;
    const unsigned char *rs = s + at;
    for (int k = 0; k < nrows; k++) {
      int i = order[k];
      /* One untimed call first: a streaming row before this one has pushed
       * the destination out of the cache, which would be charged to this
       * row otherwise. */
      run(&rows[i], c->op, rd, rs, c->n, 1);
      double t0 = avxbuf_now();
      run_everywhere(&rows[i], c->op, rd, rs, c->n, reps[i]);
      secs[i][round] = (avxbuf_now() - t0) / (double)reps[i];
    }
  }
  for (int i = 0; i < nrows; i++) {
    double v[MAX_ROUNDS], ratios[MAX_ROUNDS];
    for (int r = 0; r < rounds; r++) {
      v[r] = secs[i][r];
      ratios[r] = secs[libc_row][r] / secs[i][r];
    }
    c->gbs[i] = (double)c->n / median(v, rounds) / 1e9;
    c->ratio[i] = median(ratios, rounds);
  }
}

/* The row that calls the function of the kernel the default runs in a cell
 * (kernel_for: the plan's pick functions, those avxbuf.kernel() reports)
 * from a loop of its own (-1: none does), so that plancheck can
 * tell what the dispatch costs over its kernel: on the Zen 5 VM the default
 * ran 4 KiB copies at 0.81-0.85x the row of the very function it called
 * (issue 46, docs/runs/zen5-vm-2026-12-05.md "The default's 4 KiB"). Up to
 * 16 bytes a vector kernel's moves run inline in the dispatch (dispatch.h):
 * no row calls that code. The C library's row calls memmove itself, not the libc
 * kernel's wrapper, so it stands for no kernel either. */
static int default_kernel_row(const cell *c)
{
  const avxbuf_kernel *k = kernel_for(c->op, c->n);
  if (c->op != OP_FIND && c->n <= 16 && k->vector_bits > 0) return -1;
  for (int i = 0; i < nrows; i++) {
    const avxbuf_kernel *rk = (c->op == OP_ZERO || c->op == OP_FILL) && rows[i].fill_k ? rows[i].fill_k : rows[i].k;
    if (rk == k) return i;
  }
  return -1;
}

static void warn_stderr(void *ud, const char *message)
{
  (void)ud;
  fprintf(stderr, "%s\n", message);
}

static void *aligned_alloc_or_die(size_t n)
{
  void *p = NULL;
  if (posix_memalign(&p, 4096, n) != 0) { fprintf(stderr, "csweep: out of memory\n"); exit(1); }
  memset(p, 1, n);
  return p;
}

static void cell_label(const cell *c, char *out, size_t len)
{
  if (c->dist >= 0)
    snprintf(out, len, "%s %zu B, dst-src = %ld mod 4096", avxbuf_op_names[c->op], c->n, c->dist);
  else
    snprintf(out, len, "%s %zu B, dst+%d src+%d", avxbuf_op_names[c->op], c->n, c->doff, c->soff);
}

int main(int argc, char **argv)
{
  int quick = 0;
  const char *json = NULL;
  size_t lo = 0, hi = SIZE_MAX;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--quick")) quick = 1;
    else if (!strcmp(argv[i], "--json") && i + 1 < argc) json = argv[++i];
    else if (!strcmp(argv[i], "--sizes") && i + 1 < argc && sscanf(argv[++i], "%zu:%zu", &lo, &hi) == 2) continue;
    else if (!strcmp(argv[i], "--seed") && i + 1 < argc && sscanf(argv[++i], "%" SCNu64, &seed) == 1) continue;
    else { fprintf(stderr, "usage: csweep [--quick] [--sizes LO:HI] [--seed N] [--json FILE]\n"); return 2; }
  }
  rounds = quick ? 5 : 11;
  min_time = quick ? 20e-6 : 50e-6;
  avxbuf_state_init(&state, getenv("AVXBUF_OPTIONS"), warn_stderr, NULL);

  twin = state;
  rows[nrows++] = (timed){ "default", NULL, NULL };
  rows[nrows++] = (timed){ default_twin.name, &default_twin, NULL };
  rows[nrows++] = (timed){ kernel_nop.name, &kernel_nop, NULL };
  for (int i = 0; avxbuf_kernel_list[i]; i++) {
    const avxbuf_kernel *k = avxbuf_kernel_list[i];
    if (k->vector_bits > 0 && avxbuf_kernel_available(k)) {
      if (nrows == MAX_TIMED - 2) {   /* rep and libc follow */
        fprintf(stderr, "csweep: more rows than MAX_TIMED (%d): raise it\n", MAX_TIMED);
        return 2;
      }
      if (k->level == 0 && k->role == KR_TEMPORAL) sse2_row = nrows;
      rows[nrows++] = (timed){ k->name, k, NULL };
    }
  }
  /* The string instructions: rep movsb for copies, rep stosb for zero and
   * fill (their find is the C library's). */
  const avxbuf_kernel *movsb = NULL, *stosb = NULL;
  for (int i = 0; avxbuf_kernel_list[i]; i++) {
    const avxbuf_kernel *k = avxbuf_kernel_list[i];
    if (!avxbuf_kernel_available(k)) continue;
    if (k->role == KR_STRING_COPY && !movsb) movsb = k;
    if (k->role == KR_STRING_FILL && !stosb) stosb = k;
  }
  if (movsb && stosb)
    rows[nrows++] = (timed){ "rep", movsb, stosb };
  libc_row = nrows;
  rows[nrows++] = (timed){ "libc", &libc_direct, NULL };

  static cell cells[4096];
  int ncells = 0;
  size_t max = quick ? (16u << 20) : (64u << 20);
  for (int op = OP_COPY; op <= OP_FIND; op++) {
    for (size_t n = op == OP_FIND ? 64 : 16; n <= max; n *= quick ? 4 : 2)
      cells[ncells++] = (cell){ .op = op, .n = n, .dist = -1 };
    static const size_t odd[] = { 100, 1000, 3000, 100000 };
    for (size_t k = 0; k < sizeof odd / sizeof odd[0]; k++)
      cells[ncells++] = (cell){ .op = op, .n = odd[k], .dist = -1 };
  }
  static const int offs[] = { 0, 1, 31, 63 };
  static const long dists[] = { 0, 1, 2, 16, 32, 48, 63, 64, 2048 };
  size_t grid_sizes[] = { 256, 1024, 4096, 16384, 65536, 262144, 1 << 20 };
  int ngrid = quick ? 4 : 7;
  if (quick) { grid_sizes[1] = 4096; grid_sizes[2] = 65536; grid_sizes[3] = 1 << 20; }
  for (int g = 0; g < ngrid; g++) {
    for (int a = 0; a < 4; a++)
      for (int b = 0; b < 4; b++)
        if (a || b)
          cells[ncells++] = (cell){ .op = OP_COPY, .n = grid_sizes[g], .doff = offs[a], .soff = offs[b], .dist = -1 };
    for (size_t k = 0; k < sizeof dists / sizeof dists[0]; k++)
      if (grid_sizes[g] >= 1024)
        cells[ncells++] = (cell){ .op = OP_COPY, .n = grid_sizes[g], .dist = dists[k] };
  }

  int kept = 0;
  for (int i = 0; i < ncells; i++)
    if (cells[i].n >= lo && cells[i].n <= hi) cells[kept++] = cells[i];
  ncells = kept;

  /* Two buffers in one page-aligned arena, span apart (a multiple of 4096);
   * cells that are not about page aliasing keep dst - src at 2048 modulo
   * 4096 (plus their offsets), far from where aliasing strikes. A round
   * moves both on by up to 4032 bytes (placement): the slack of 3 pages. */
  size_t span = max + 3 * 4096;
  unsigned char *arena = aligned_alloc_or_die(2 * span);
  const avxbuf_machine *m = avxbuf_machine_get();
  printf("# build/bench/csweep%s --seed %" PRIu64 ": %s; GB/s, median of %d interleaved rounds; "
         "x = median of per-round ratios to libc (above 1: faster than libc)\n",
         quick ? " --quick" : "", seed, avxbuf_machine_defaults(m)->reason, rounds);

  for (int i = 0; i < ncells; i++) {
    cell *c = &cells[i];
    if (c->op == OP_FIND) {   /* a haystack of 1s ending in the needle */
      unsigned char *hay = arena + 64;
      memset(hay, 1, c->n);
      for (int k = 0; k < NEEDLE; k++) hay[c->n - NEEDLE + k] = (unsigned char)(2 + k);
      measure(c, NULL, hay);
      memset(hay, 1, c->n);
      continue;
    }
    unsigned char *src = arena + 64 + (size_t)c->soff;
    unsigned char *dst = arena + span + 2048 + 64 + (size_t)c->doff;
    if (c->dist >= 0) {   /* dst - src = c->dist (mod 4096), both far apart */
      src = arena + 4096;
      dst = arena + span + 4096 + (size_t)c->dist;
    }
    measure(c, dst, src);
  }

  /* The plain sweep: aligned cells by size. */
  for (int op = OP_COPY; op <= OP_FIND; op++) {
    printf("\n%-5s %9s", avxbuf_op_names[op], "size");
    for (int r = 0; r < nrows; r++) printf(" %14s", rows[r].name);
    printf("\n");
    for (int i = 0; i < ncells; i++) {
      const cell *c = &cells[i];
      if (c->op != op || c->doff || c->soff || c->dist >= 0) continue;
      printf("%-5s %9zu", "", c->n);
      for (int r = 0; r < nrows; r++) printf(" %8.2f %4.2fx", c->gbs[r], c->ratio[r]);
      printf("\n");
    }
  }

  /* Worst and best cell of each row against libc, from 256 B up, and the
   * cells where the default trails plain SSE2. */
  printf("\n# every cell from 256 B up (%d cells): worst and best ratio to libc\n", ncells);
  for (int r = 0; r < nrows; r++) {
    if (r == libc_row) continue;
    int worst = -1, best = -1;
    for (int i = 0; i < ncells; i++) {
      if (cells[i].n < 256) continue;
      if (worst < 0 || cells[i].ratio[r] < cells[worst].ratio[r]) worst = i;
      if (best < 0 || cells[i].ratio[r] > cells[best].ratio[r]) best = i;
    }
    if (worst < 0) break;   /* no cell from 256 B (--sizes) */
    char wl[96], bl[96];
    cell_label(&cells[worst], wl, sizeof wl);
    cell_label(&cells[best], bl, sizeof bl);
    printf("%-14s worst %5.2fx (%s)   best %5.2fx (%s)\n", rows[r].name, cells[worst].ratio[r], wl,
           cells[best].ratio[r], bl);
  }
  int below_libc = 0, below_sse2 = 0;
  for (int i = 0; i < ncells; i++) {
    const cell *c = &cells[i];
    if (c->n < 256) continue;
    char label[96];
    cell_label(c, label, sizeof label);
    if (c->ratio[0] < 1.0) {
      printf("default below libc: %s: %.2fx\n", label, c->ratio[0]);
      below_libc++;
    }
    if (sse2_row > 0 && c->ratio[0] < c->ratio[sse2_row]) {
      printf("default below sse2: %s: %.2fx against %.2fx\n", label, c->ratio[0], c->ratio[sse2_row]);
      below_sse2++;
    }
  }
  printf("# default: %d cells below libc, %d below sse2 (ratios are medians; differences of a few "
         "percent are within this machine's noise)\n", below_libc, below_sse2);

  if (json) {
    FILE *f = fopen(json, "w");
    if (!f) { perror(json); return 1; }
    fprintf(f, "{\"reason\": \"%s\", \"rounds\": %d, \"seed\": %" PRIu64 ", \"cells\": [",
            avxbuf_machine_defaults(m)->reason, rounds, seed);
    for (int i = 0; i < ncells; i++) {
      const cell *c = &cells[i];
      int kr = default_kernel_row(c);
      fprintf(f, "%s\n{\"op\": \"%s\", \"size\": %zu, \"dst_offset\": %d, \"src_offset\": %d, "
              "\"distance_mod_4096\": %ld, \"default_kernel\": \"%s\", \"default_row\": %s%s%s, \"rows\": {",
              i ? "," : "", avxbuf_op_names[c->op], c->n, c->doff, c->soff, c->dist, kernel_for(c->op, c->n)->name,
              kr < 0 ? "" : "\"", kr < 0 ? "null" : rows[kr].name, kr < 0 ? "" : "\"");
      for (int r = 0; r < nrows; r++) {
        fprintf(f, "%s\"%s\": {\"gbs\": %.4f, \"ratio_to_libc\": %.4f, \"ns\": [", r ? ", " : "", rows[r].name,
                c->gbs[r], c->ratio[r]);
        for (int k = 0; k < rounds; k++) fprintf(f, "%s%.5g", k ? ", " : "", c->secs[r][k] * 1e9);
        fprintf(f, "]}");
      }
      fprintf(f, "}}");
    }
    fprintf(f, "\n]}\n");
    fclose(f);
  }
  free(arena);
  return 0;
}
