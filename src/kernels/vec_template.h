/* The size strategy, written once and instantiated per vector width and ISA
 * (as glibc does with memmove-vec-unaligned-erms.S). The including file
 * defines, for one family:
 *   KNAME                 identifier: kernels avxbuf_k_KNAME and avxbuf_k_KNAME_nt
 *   KTARGET               function attribute enabling the ISA (or nothing)
 *   KISA                  the CPUID features that ISA needs (avxbuf_kernel.isa)
 *   VEC_SIZE, vec_t       vector width in bytes and its type
 *   V_LOADU, V_STOREU, V_STOREA, V_STREAM, V_SET1
 *   COPY_LE_VEC, FILL_LE_VEC   handlers for n <= VEC_SIZE (the narrower family)
 * Strategy, by size n (V = VEC_SIZE):
 *   n <= 2V   two overlapping vectors (or the narrower family's handler);
 *   n <= 4V   four, n <= 8V eight: all loaded before any store, so overlap
 *             needs no special case;
 *   larger    a 4V-unrolled loop with aligned stores, forward, or backward
 *             when dst lies inside (src, src + n); head and tail vectors are
 *             loaded first and stored last, unaligned.
 *   _nt       the forward loop with streaming stores and an sfence, taken
 *             only when the ranges are disjoint (a stream bypasses the cache,
 *             which pays only past the last-level cache: dispatch decides). */

#include <stdint.h>
#include <stdlib.h>
#include "kernels.h"
#include "small.h"

#define KCAT_(a, b) a##b
#define KCAT(a, b) KCAT_(a, b)
#define KSTR_(a) #a
#define KSTR(a) KSTR_(a)
#define KFN(suffix) KCAT(KNAME, suffix)

/* Emulated builds have no hardware to fault on a misaligned aligned store,
 * so they check it themselves. */
#ifdef AVXBUF_CHECK_ALIGNMENT
#define KCHECK_ALIGNED(p) do { if ((uintptr_t)(p) & (VEC_SIZE - 1)) abort(); } while (0)
#else
#define KCHECK_ALIGNED(p) ((void)0)
#endif

#define V4_LOAD(q, a, b, c, e) do { \
    a = V_LOADU(q); b = V_LOADU((q) + VEC_SIZE); \
    c = V_LOADU((q) + 2 * VEC_SIZE); e = V_LOADU((q) + 3 * VEC_SIZE); } while (0)
#define V4_STORE(STORE, p, a, b, c, e) do { \
    STORE(p, a); STORE((p) + VEC_SIZE, b); \
    STORE((p) + 2 * VEC_SIZE, c); STORE((p) + 3 * VEC_SIZE, e); } while (0)

KTARGET AVXBUF_INLINE void KFN(_copy_le2v)(unsigned char *d, const unsigned char *s, size_t n)
{
  if (n <= VEC_SIZE) { COPY_LE_VEC(d, s, n); return; }
  vec_t a = V_LOADU(s), b = V_LOADU(s + n - VEC_SIZE);
  V_STOREU(d, a);
  V_STOREU(d + n - VEC_SIZE, b);
}

KTARGET AVXBUF_INLINE void KFN(_fill_le2v)(unsigned char *d, int c, size_t n)
{
  if (n <= VEC_SIZE) { FILL_LE_VEC(d, c, n); return; }
  vec_t v = V_SET1(c);
  V_STOREU(d, v);
  V_STOREU(d + n - VEC_SIZE, v);
}

/* n > 8V. nt is a constant at each call site, so each caller gets its own
 * loop. */
KTARGET AVXBUF_INLINE void KFN(_copy_forward)(unsigned char *d, const unsigned char *s,
                                              size_t n, int nt)
{
  vec_t head = V_LOADU(s), t0, t1, t2, t3, a, b, c, e;
  V4_LOAD(s + n - 4 * VEC_SIZE, t0, t1, t2, t3);
  unsigned char *end = d + n;
  size_t skew = VEC_SIZE - ((uintptr_t)d & (VEC_SIZE - 1));
  unsigned char *p = d + skew;
  const unsigned char *q = s + skew;
  for (; p < end - 4 * VEC_SIZE; p += 4 * VEC_SIZE, q += 4 * VEC_SIZE) {
    KCHECK_ALIGNED(p);
    V4_LOAD(q, a, b, c, e);
    if (nt) V4_STORE(V_STREAM, p, a, b, c, e);
    else V4_STORE(V_STOREA, p, a, b, c, e);
  }
  if (nt) _mm_sfence();  /* order the weakly-ordered streams before later stores */
  V4_STORE(V_STOREU, end - 4 * VEC_SIZE, t0, t1, t2, t3);
  V_STOREU(d, head);
}

KTARGET AVXBUF_INLINE void KFN(_copy_backward)(unsigned char *d, const unsigned char *s, size_t n)
{
  vec_t tail = V_LOADU(s + n - VEC_SIZE), h0, h1, h2, h3, a, b, c, e;
  V4_LOAD(s, h0, h1, h2, h3);
  unsigned char *end = d + n;
  size_t skew = (uintptr_t)end & (VEC_SIZE - 1);
  unsigned char *p = end - skew;
  const unsigned char *q = s + n - skew;
  while ((size_t)(p - d) > 4 * VEC_SIZE) {
    p -= 4 * VEC_SIZE; q -= 4 * VEC_SIZE;
    KCHECK_ALIGNED(p);
    V4_LOAD(q, a, b, c, e);
    V4_STORE(V_STOREA, p, a, b, c, e);
  }
  V4_STORE(V_STOREU, d, h0, h1, h2, h3);
  V_STOREU(end - VEC_SIZE, tail);
}

KTARGET AVXBUF_INLINE void KFN(_copy_impl)(void *dst, const void *src, size_t n, int nt)
{
  unsigned char *d = dst;
  const unsigned char *s = src;
  vec_t a, b, c, e, f, g, h, i;
  if (n <= 2 * VEC_SIZE) {
    KFN(_copy_le2v)(d, s, n);
  } else if (n <= 4 * VEC_SIZE) {
    a = V_LOADU(s); b = V_LOADU(s + VEC_SIZE);
    c = V_LOADU(s + n - 2 * VEC_SIZE); e = V_LOADU(s + n - VEC_SIZE);
    V_STOREU(d, a); V_STOREU(d + VEC_SIZE, b);
    V_STOREU(d + n - 2 * VEC_SIZE, c); V_STOREU(d + n - VEC_SIZE, e);
  } else if (n <= 8 * VEC_SIZE) {
    V4_LOAD(s, a, b, c, e);
    V4_LOAD(s + n - 4 * VEC_SIZE, f, g, h, i);
    V4_STORE(V_STOREU, d, a, b, c, e);
    V4_STORE(V_STOREU, d + n - 4 * VEC_SIZE, f, g, h, i);
  } else if (!forward_safe(d, s, n)) {
    KFN(_copy_backward)(d, s, n);
  } else if (nt && disjoint(d, s, n)) {
    KFN(_copy_forward)(d, s, n, 1);
  } else {
    KFN(_copy_forward)(d, s, n, 0);
  }
}

KTARGET AVXBUF_INLINE void KFN(_fill_impl)(void *dst, int byte, size_t n, int nt)
{
  unsigned char *d = dst;
  if (n <= 2 * VEC_SIZE) { KFN(_fill_le2v)(d, byte, n); return; }
  vec_t v = V_SET1(byte);
  unsigned char *end = d + n;
  if (n <= 4 * VEC_SIZE) {
    V_STOREU(d, v); V_STOREU(d + VEC_SIZE, v);
    V_STOREU(end - 2 * VEC_SIZE, v); V_STOREU(end - VEC_SIZE, v);
    return;
  }
  V_STOREU(d, v);
  unsigned char *p = d + VEC_SIZE - ((uintptr_t)d & (VEC_SIZE - 1));
  for (; p < end - 4 * VEC_SIZE; p += 4 * VEC_SIZE) {
    KCHECK_ALIGNED(p);
    if (nt) V4_STORE(V_STREAM, p, v, v, v, v);
    else V4_STORE(V_STOREA, p, v, v, v, v);
  }
  if (nt) _mm_sfence();
  V4_STORE(V_STOREU, end - 4 * VEC_SIZE, v, v, v, v);
}

KTARGET static void KFN(_copy)(void *d, const void *s, size_t n) { KFN(_copy_impl)(d, s, n, 0); }
KTARGET static void KFN(_nt_copy)(void *d, const void *s, size_t n) { KFN(_copy_impl)(d, s, n, 1); }
KTARGET static void KFN(_fill)(void *d, int c, size_t n) { KFN(_fill_impl)(d, c, n, 0); }
KTARGET static void KFN(_nt_fill)(void *d, int c, size_t n) { KFN(_fill_impl)(d, c, n, 1); }

const avxbuf_kernel KCAT(avxbuf_k_, KNAME) = {
  KSTR(KNAME), KFN(_copy), KFN(_fill), KISA, 8 * VEC_SIZE, 0 };
const avxbuf_kernel KCAT(avxbuf_k_, KFN(_nt)) = {
  KSTR(KNAME) "_nt", KFN(_nt_copy), KFN(_nt_fill), KISA, 8 * VEC_SIZE, 1 };

#undef KNAME
#undef KTARGET
#undef KISA
#undef VEC_SIZE
#undef vec_t
#undef V_LOADU
#undef V_STOREU
#undef V_STOREA
#undef V_STREAM
#undef V_SET1
#undef COPY_LE_VEC
#undef FILL_LE_VEC
#undef KCHECK_ALIGNED
