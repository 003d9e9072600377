/* libFuzzer: the dispatching entry points every caller uses, avxbuf_copy and
 * avxbuf_fill (dispatch.h), and the searches avxbuf_find_of gives
 * buf:find and buf:rfind, against a byte-wise reference: their inline
 * moves up to 16 bytes, the small kernel called through the plan, and the
 * picks above it (fuzz_kernels.c calls the picked kernel itself, past the
 * inline path). Sizes cluster below SMALL_MAX; each threshold is
 * a byte of the input (small, large or the machine's default), so that
 * every boundary of the plan falls among them. The destination keeps
 * GUARD bytes of the arena on each side, and nothing in the arena but the
 * destination may change; a source may be a heap block of exactly n bytes,
 * so that ASan sees a read past either end. Built native and emulated. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "core/dispatch.h"

#define MAX_N (32 * 1024 + 256)   /* past the largest threshold below, 128 x 256 - 1 */
#define GUARD 64
#define ARENA (2 * MAX_N + 2 * GUARD)

/* fresh: the arena's contents before each input (filled once: a byte loop
 * over it per input cost 7 in 8 of the time under ASan) */
static unsigned char arena[ARENA], expect[ARENA], fresh[ARENA];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
  (void)argc; (void)argv;
  for (size_t i = 0; i < ARENA; i++) fresh[i] = (unsigned char)(i * 167 + (i >> 8) + 3);
  return 0;
}

/* The input's first HEADER bytes (zeros past its end), then the data. */
enum { H_OP, H_KNOBS, H_AVX3, H_MOVSB, H_MOVSB_STOP, H_STOSB, H_NT, H_N, H_N2, H_D, H_D2, H_S, H_S2, H_BYTE,
       H_STOSB_STOP, H_WHERE, H_WHERE2, HEADER };
/* The bits of h[H_OP] (F_: the fuzzer's own flags, not src/core/op.h's operations). */
#define F_COPY 1
#define F_HEAP_SOURCE 2   /* a copy's source is a block of its own */
#define F_SMALL 4         /* n up to SMALL_MAX + 16 */
/* The inline moves' 16 bytes and the small kernel's size classes up to 64 lie below. */
#define SMALL_MAX 64
#define F_NEAR 8          /* the source within 128 bytes of the destination */
#define F_FILL_BYTE 16    /* a fill of H_BYTE, not zero */
#define F_FIND 32         /* a search of the bytes at d for the 1 + H_BYTE % 64 at s: no copy or fill */
#define F_REVERSE 64      /* the search from the end (rfind) */

/* 0x7F: the default; else 0..126 (the inline moves' and the small kernel's
 * sizes), or with the top bit, in size class b & 127 (dispatch.h, every
 * class of the tables) a size where a table could err, chosen by the two
 * bits of where: the class's first, its last, the one after its first, or
 * its middle (with multiples of 128 alone, a class end off by one went
 * unseen). */
static long long threshold(uint8_t b, unsigned where)
{
  const long long size = 1 << AVXBUF_CLASS_SHIFT, k = (long long)(b & 0x7F) * size;
  if (b == 0x7F) return AVXBUF_UNSET;
  if (b < 0x80) return b;
  return k + (long long[]){ 0, size - 1, 1, size / 2 }[where & 3];
}

/* The plan's search for the m bytes at needle (at most room of them) in
 * hay[0..n), each in a block of its own, so that ASan sees a read past
 * either, against the first (last) match a byte loop finds. */
static void search(const avxbuf_plan *p, int reverse, const unsigned char *hay, size_t n,
                   const unsigned char *needle, size_t room, size_t m)
{
  if (m > room) m = room;   /* 0 where the needle would start at the arena's end */
  if (m == 0 || m > n) return;   /* the kernels' contract: 1 <= m <= n */
  unsigned char *h = malloc(n), *nd = malloc(m);
  memcpy(h, hay, n);
  memcpy(nd, needle, m);
  const unsigned char *want = NULL;
  for (size_t i = 0; i + m <= n; i++) {
    if (memcmp(h + i, nd, m) == 0) {
      want = h + i;
      if (!reverse) break;
    }
  }
  const unsigned char *got = avxbuf_find_of(p, n, reverse)(h, n, nd, m);
  free(h);
  free(nd);
  if (got != want) abort();
}

/* Whether a copy of some size in lo..hi takes another kernel than one of
 * lo, or one overlap another kernel than the others. */
static int copies_differ(const avxbuf_plan *p, size_t lo, size_t hi)
{
  const avxbuf_kernel *k = avxbuf_pick_copy(p, lo, OV_NONE);
  for (size_t m = lo; m <= hi; m++)
    if (avxbuf_pick_copy(p, m, OV_NONE) != k || avxbuf_pick_copy(p, m, OV_FORWARD) != k
        || avxbuf_pick_copy(p, m, OV_BACKWARD) != k) return 1;
  return 0;
}

/* The same for fills, over the byte and a measurement's answers, where
 * no size in lo..hi takes the measurement (avxbuf_fill_more does). */
static int fills_differ(const avxbuf_plan *p, size_t lo, size_t hi)
{
  if (hi >= p->stosb_fact_from) return 1;
  const avxbuf_kernel *k = avxbuf_pick_fill_kept(p, lo, 0, 0);
  int answers = p->stosb_fact_from != SIZE_MAX ? 2 : 1;
  for (size_t m = lo; m <= hi; m++)
    for (int kept = 0; kept < answers; kept++)
      if (avxbuf_pick_fill_kept(p, m, 0, kept) != k || avxbuf_pick_fill_kept(p, m, 1, kept) != k) return 1;
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  uint8_t h[HEADER] = { 0 };
  memcpy(h, data, size < HEADER ? size : HEADER);
  const uint8_t *in = data + (size < HEADER ? size : HEADER);
  size_t left = size - (size_t)(in - data);

  avxbuf_state st;
  memset(&st, 0, sizeof st);
  long long *r = st.requested.v;
  r[K_USE_AVX] = h[H_KNOBS] & 3;
  r[K_MAX_VECTOR_SIZE] = (long long[]){ 16, 32, 64, AVXBUF_UNSET }[(h[H_KNOBS] >> 2) & 3];
  r[K_VECTOR_ZEROING] = (h[H_KNOBS] >> 4) & 1;
  r[K_KERNEL] = (h[H_KNOBS] >> 5) == 7 ? KERNEL_LIBC : KERNEL_AUTO;
  unsigned where = (unsigned)h[H_WHERE] << 8 | h[H_WHERE2];   /* two bits a threshold */
  r[K_AVX3_THRESHOLD] = threshold(h[H_AVX3], where);
  r[K_REP_MOVSB_THRESHOLD] = threshold(h[H_MOVSB], where >> 2);
  r[K_REP_MOVSB_STOP_THRESHOLD] = threshold(h[H_MOVSB_STOP], where >> 4);
  r[K_REP_STOSB_THRESHOLD] = threshold(h[H_STOSB], where >> 6);
  r[K_REP_STOSB_STOP_THRESHOLD] = threshold(h[H_STOSB_STOP], where >> 8);
  r[K_NONTEMPORAL_THRESHOLD] = threshold(h[H_NT], where >> 10);
  r[K_MEMSET_NONTEMPORAL_THRESHOLD] = AVXBUF_UNSET;   /* fills: twice H_NT's */
  r[K_ZERO_NONTEMPORAL_THRESHOLD] = AVXBUF_UNSET;     /* zero: the policy's rule */
  avxbuf_state_resolve(&st);
  /* avxbuf_copy's one-load ways and its size classes go where the picks
   * do, whatever the overlap, the byte and the answer of a measurement
   * still to come: at both ends of their sizes, at one the input chooses,
   * and at every size of one class it chooses. And a way is NULL only where
   * the picks differ within its sizes: a way missed sends its sizes on to a
   * costlier one (docs/runs/zen5-vm-2026-12-07.md, "The ways of a split plan"). */
  const avxbuf_plan *p = &st.plan;
  enum { CALL, MID, WAYS = 2 + AVXBUF_CLASSES };
  size_t whole = MID + 1 + h[H_N] % AVXBUF_CLASSES;
  for (size_t w = 0; w < WAYS; w++) {
    size_t c = w > MID ? w - MID - 1 : 0;
    avxbuf_copy_fn copy = w == CALL ? p->copy_call_fn : w == MID ? p->copy_mid_fn : p->copy_class_fn[c];
    avxbuf_fill_fn fill = w == CALL ? p->fill_call_fn : w == MID ? p->fill_mid_fn : p->fill_class_fn[c];
    size_t lo = w == CALL ? AVXBUF_CALL_MIN : w == MID ? AVXBUF_CALL_MAX + 1 : c << AVXBUF_CLASS_SHIFT;
    size_t hi = w == CALL ? AVXBUF_CALL_MAX : w == MID ? AVXBUF_MID_MAX : ((c + 1) << AVXBUF_CLASS_SHIFT) - 1;
    if (lo < AVXBUF_CALL_MIN) lo = AVXBUF_CALL_MIN;
    if (hi > AVXBUF_MID_MAX) hi = AVXBUF_MID_MAX;
    size_t ends[] = { lo, hi, lo + h[H_N] * 7u % (hi - lo + 1) };
    size_t count = w == whole ? hi - lo + 1 : sizeof ends / sizeof ends[0];
    for (size_t i = 0; i < count; i++) {
      size_t m = w == whole ? lo + i : ends[i];
      if (copy && (copy != avxbuf_copy_from(avxbuf_pick_copy(p, m, OV_BACKWARD), lo)
                   || copy != avxbuf_copy_from(avxbuf_pick_copy(p, m, OV_FORWARD), lo)
                   || copy != avxbuf_copy_from(avxbuf_pick_copy(p, m, OV_NONE), lo))) abort();
      if (fill && m >= p->stosb_fact_from) abort();   /* avxbuf_fill_more takes the measurement */
      int answers = p->stosb_fact_from != SIZE_MAX ? 2 : 1;
      for (int kept = 0; fill && kept < answers; kept++)
        if (fill != avxbuf_pick_fill_kept(p, m, 0, kept)->fill || fill != avxbuf_pick_fill_kept(p, m, 1, kept)->fill)
          abort();
    }
    if (!copy && !copies_differ(p, lo, hi)) abort();
    if (!fill && !fills_differ(p, lo, hi)) abort();
  }
  /* The search's functions are the pick's, at the size below the split and at the split too. */
  size_t found_at[] = { 1, p->wide_from - (p->wide_from > 1), p->wide_from, (size_t)h[H_N] << 8 };
  for (int reverse = 0; reverse <= 1; reverse++)
    for (size_t i = 0; i < sizeof found_at / sizeof found_at[0]; i++) {
      const avxbuf_kernel *k = avxbuf_pick_find(p, found_at[i]);
      if (avxbuf_find_of(p, found_at[i], reverse) != (reverse ? k->rfind : k->find)) abort();
    }

  uint8_t op = h[H_OP];
  size_t n = op & F_SMALL ? h[H_N] % (SMALL_MAX + 17) : (size_t)(h[H_N] << 8 | h[H_N2]) % (MAX_N + 1);
  size_t d = GUARD + (size_t)(h[H_D] << 8 | h[H_D2]) % (ARENA - 2 * GUARD - n + 1);
  size_t s = (size_t)(h[H_S] << 8 | h[H_S2]) % (ARENA - n + 1);
  if (op & F_NEAR) {
    long long near = (long long)d + (int8_t)h[H_S];
    s = near < 0 ? 0 : near > (long long)(ARENA - n) ? ARENA - n : (size_t)near;
  }

  memcpy(arena, fresh, ARENA);
  if (left) memcpy(arena + s, in, left < n ? left : n);
  memcpy(expect, arena, ARENA);

  if (op & F_FIND) {
    search(&st.plan, op & F_REVERSE, arena + d, n, arena + s, ARENA - s, 1 + (size_t)h[H_BYTE] % 64);
  } else if (op & F_COPY) {
    const unsigned char *src = arena + s, *ref = expect + s;
    unsigned char *block = NULL;
    if (op & F_HEAP_SOURCE) {
      block = malloc(n ? n : 1);
      memcpy(block, arena + s, n);
      src = ref = block;
    }
    /* memmove: descending when the destination lies above the source */
    if (!block && d > s) for (size_t i = n; i-- > 0;) expect[d + i] = ref[i];
    else for (size_t i = 0; i < n; i++) expect[d + i] = ref[i];
    avxbuf_copy(&st.plan, arena + d, src, n, avxbuf_overlap_of(arena + d, src, n));
    free(block);
  } else {
    int byte = op & F_FILL_BYTE ? h[H_BYTE] : 0;
    for (size_t i = 0; i < n; i++) expect[d + i] = (unsigned char)byte;
    avxbuf_fill(&st.plan, arena + d, byte, n);
  }
  if (memcmp(arena, expect, ARENA) != 0) abort();
  return 0;
}
