/* The size strategy, written once and instantiated per vector width and ISA
 * (as glibc does with memmove-vec-unaligned-erms.S). The including file
 * defines, for one family:
 *   KNAME                 identifier: kernels avxbuf_k_KNAME and avxbuf_k_KNAME_nt
 *   KTARGET               function attribute enabling the ISA (or nothing)
 *   KNEEDS                the CPUID features that ISA needs (AVXBUF_FEATURE bits)
 *   KLEVEL                the use_avx level whose family this is
 *   VEC_SIZE, vec_t       vector width in bytes and its type
 *   V_LOADU, V_STOREU, V_STOREA, V_STREAM, V_SET1
 *   V_EQ, V_AND, V_OR, V_MASK   byte compare, and, or of whole vectors and
 *                         their movemask, where the ISA has them; else
 *   V_EQMASK(a, b)        one bit per equal byte of a and b, in a uint64_t
 *                         (either set is needed only by a family's own searches)
 *   KFIND_TARGET          optional: the searches' own target attribute
 *   KFIND, KRFIND         optional: another family's searches, used instead
 *   COPY_LE_VEC, FILL_LE_VEC   handlers for n <= VEC_SIZE (the narrower family)
 *   KCOPY_LE8V_CLEAN, KFILL_LE8V_CLEAN   optional: handlers for KCLEAN_MAX < n <= 8V
 *                         that leave the upper state clean (no vzeroupper after them)
 *   KLE8V_CLEAN_FROM      optional: the smallest n those handlers take instead
 *                         (at most KCLEAN_MAX + 1)
 *   KCOPY_FORWARD_CLEAN, KFILL_LOOP_CLEAN   optional, the same for the temporal
 *                         kernel's forward copy and fill loops (n > 8V)
 *   KLOADS_ALIGNED_UPTO, KLOADS_ALIGNED(d, n)   optional, with KCOPY_FORWARD_CLEAN:
 *                         the copies up to that size that its loop takes with the
 *                         loads aligned (they are not handed to KCOPY_SKEW32)
 *   KCOPY_LE16V_CLEAN     optional, with KCOPY_LE8V_CLEAN and KCOPY_FORWARD_CLEAN:
 *                         the temporal copies of 8V < n <= 16V that the forward
 *                         loop may not take (dst inside (src, src + n), or a few
 *                         bytes past src modulo a page: small.h) but those
 *                         KCOPY_SKEW32 takes, every byte loaded before the
 *                         first store, upper state clean
 *   KCOPY_SKEW32, KSKEW32_KERNEL, KSKEW32_UPTO   optional: the temporal copies
 *                         past 8V up to KSKEW32_UPTO with dst - src = 32 mod 64 run
 *                         KCOPY_SKEW32, another family's loops (KSKEW32_KERNEL's
 *                         KNAME_copy_gt8v, without its entry)
 *   KSTREAM_COPY_PAIRS    optional: the streaming copy's loop loads and streams
 *                         two vectors at a time, not four loads then four streams
 * Strategy, by size n (V = VEC_SIZE):
 *   n <= 2V   two overlapping vectors (or the narrower family's handler);
 *   n <= 4V   four, n <= 8V eight (copies load them all before any store,
 *             so overlap needs no special case);
 *   n <= 16V  disjoint copies that do not alias a page: two overlapping
 *             eight-vector moves (the loop's head, tail and exit cost more
 *             there: docs/kernels.md); with KCOPY_LE16V_CLEAN, those the
 *             forward loop may not take, but skew 32, load all 16 vectors first;
 *   larger    a 4V-unrolled loop with aligned stores, forward, or backward
 *             when dst lies inside (src, src + n); head and tail vectors are
 *             loaded first and stored last, unaligned (avx512.c's own
 *             forward loop aligns the loads of short copies instead).
 *   _nt       the forward loop with streaming stores and an sfence, taken
 *             only when the ranges are disjoint (a stream bypasses the cache,
 *             which pays only past the last-level cache: dispatch decides).
 * The temporal and the streaming kernel are two instantiations of
 * vec_variant.h, not one function with a flag: clang 14 merged an
 * `if (nt) stream else store` pair into plain stores (make audit found it). */

#include <stdint.h>
#include <stdlib.h>
#include "kernels/kernels.h"
#include "kernels/small.h"

#define KCAT_(a, b) a##b
#define KCAT(a, b) KCAT_(a, b)
#define KSTR_(a) #a
#define KSTR(a) KSTR_(a)
#define KFN(suffix) KCAT(KNAME, suffix)

/* A family whose forward loop aligns its stores at every size. */
#ifndef KLOADS_ALIGNED_UPTO
#define KLOADS_ALIGNED_UPTO 0
#define KLOADS_ALIGNED(d, n) 0
#elif !defined(KCOPY_FORWARD_CLEAN)
#error "KLOADS_ALIGNED_UPTO describes KCOPY_FORWARD_CLEAN's loop: define both or neither"
#endif
#if defined(KCOPY_LE16V_CLEAN) && !(defined(KCOPY_LE8V_CLEAN) && defined(KCOPY_FORWARD_CLEAN))
#error "KCOPY_LE16V_CLEAN takes what the clean handlers below and above it leave"
#endif

/* Emulated builds have no hardware to fault on a misaligned aligned store,
 * so they check it themselves. */
#ifdef AVXBUF_CHECK_ALIGNMENT
#define KCHECK_ALIGNED(p) do { if ((uintptr_t)(p) & (VEC_SIZE - 1)) abort(); } while (0)
#else
#define KCHECK_ALIGNED(p) ((void)0)
#endif

/* Sizes up to KCLEAN_MAX are moved without any register wider than 128
 * bits, so they return without vzeroupper; every other path of a 256- or
 * 512-bit kernel ends in one. The compilers insert it themselves only when
 * optimising (GCC 12 at -O0, -O1 and -Os did not: make audit), and a dirty
 * upper state slows the SSE code that runs next and, on Skylake-SP, can keep
 * the core from returning to licence 0. */
#if VEC_SIZE == 16
#define KCLEAN_MAX 16
#define KCOPY_CLEAN copy_le16
#define KFILL_CLEAN fill_le16
#define KZEROUPPER() ((void)0)
#else
#define KCLEAN_MAX 32
#define KCOPY_CLEAN copy_le32
#define KFILL_CLEAN fill_le32
#define KZEROUPPER() _mm256_zeroupper()
#endif
#ifndef KLE8V_CLEAN_FROM
#define KLE8V_CLEAN_FROM (KCLEAN_MAX + 1)
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

/* n <= 8V, any overlap: every load before the first store. Past 2V the
 * larger class comes first, as in glibc's memmove-vec-unaligned-erms.S, so
 * that 4V-8V, where a call's cost weighs most against its moves, takes no
 * branch on the way. */
KTARGET AVXBUF_INLINE void KFN(_copy_le8v)(unsigned char *d, const unsigned char *s, size_t n)
{
  vec_t a, b, c, e, f, g, h, i;
  if (n <= 2 * VEC_SIZE) {
    KFN(_copy_le2v)(d, s, n);
  } else if (__builtin_expect(n > 4 * VEC_SIZE, 1)) {
    V4_LOAD(s, a, b, c, e);
    V4_LOAD(s + n - 4 * VEC_SIZE, f, g, h, i);
    V4_STORE(V_STOREU, d, a, b, c, e);
    V4_STORE(V_STOREU, d + n - 4 * VEC_SIZE, f, g, h, i);
  } else {
    a = V_LOADU(s); b = V_LOADU(s + VEC_SIZE);
    c = V_LOADU(s + n - 2 * VEC_SIZE); e = V_LOADU(s + n - VEC_SIZE);
    V_STOREU(d, a); V_STOREU(d + VEC_SIZE, b);
    V_STOREU(d + n - 2 * VEC_SIZE, c); V_STOREU(d + n - VEC_SIZE, e);
  }
}

/* n > 8V with dst inside (src, src + n): descending, aligned stores. */
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

#define KSTREAM 0
#include "kernels/vec_variant.h"
#define KSTREAM 1
#include "kernels/vec_variant.h"

/* Search: a vector of candidate positions at a time, those where both the
 * first and the last byte of the needle match, each then checked byte by
 * byte. Most of a long text makes no candidate, so four vectors are tested
 * at once first, with one movemask where the ISA can AND and OR whole
 * vectors: a movemask per vector and one vector a step left the scan far
 * behind memchr's (docs/kernels.md). Text that keeps making candidates fail
 * (periodic text) would cost O(n m), so once the checks have cost n bytes
 * the rest goes to the C library's memmem, which is linear (two-way), as
 * do single bytes (memchr) and the last few positions. The vector part
 * makes no call, so that nothing runs with the upper state dirty: it
 * returns the match, or NULL and where the C library is to go on. */
#if defined(KFIND) != defined(KRFIND)
#error "a family shares both searches or neither"
#endif
#ifndef KFIND   /* the family's own searches, unless the including file shares another's */
#ifndef KFIND_TARGET
#define KFIND_TARGET KTARGET
#endif
#ifdef V_AND
#define KFIND_VEC(at) V_AND(V_EQ(first, V_LOADU(hay + (at))), V_EQ(last, V_LOADU(tail + (at))))
#define KFIND_CANDIDATES(at) V_MASK(KFIND_VEC(at))
#define KFIND_NONE4(at) (V_MASK(V_OR(V_OR(KFIND_VEC(at), KFIND_VEC((at) + VEC_SIZE)), \
                                     V_OR(KFIND_VEC((at) + 2 * VEC_SIZE), KFIND_VEC((at) + 3 * VEC_SIZE)))) == 0)
#else
#define KFIND_CANDIDATES(at) (V_EQMASK(first, V_LOADU(hay + (at))) & V_EQMASK(last, V_LOADU(tail + (at))))
#define KFIND_NONE4(at) ((KFIND_CANDIDATES(at) | KFIND_CANDIDATES((at) + VEC_SIZE) \
                          | KFIND_CANDIDATES((at) + 2 * VEC_SIZE) | KFIND_CANDIDATES((at) + 3 * VEC_SIZE)) == 0)
#endif
KFIND_TARGET static const unsigned char *KFN(_find_vec)(const unsigned char *hay, size_t n,
                                                   const unsigned char *needle, size_t m, size_t *resume)
{
  size_t limit = n - m + 1, i = 0, budget = n;   /* limit: positions a match can start at */
  vec_t first = V_SET1(needle[0]), last = V_SET1(needle[m - 1]);
  const unsigned char *tail = hay + m - 1;       /* the last byte of a match starting at hay */
  while (i + VEC_SIZE <= limit) {
    if (i + 4 * VEC_SIZE <= limit && KFIND_NONE4(i)) {
      i += 4 * VEC_SIZE;
      continue;
    }
    uint64_t mask = KFIND_CANDIDATES(i);
    while (mask) {
      size_t pos = i + (size_t)__builtin_ctzll(mask), k = 1;
      while (k < m - 1 && hay[pos + k] == needle[k]) k++;
      if (k >= m - 1) { KZEROUPPER(); return hay + pos; }
      if (k >= budget) { KZEROUPPER(); *resume = pos + 1; return NULL; }
      budget -= k;
      mask &= mask - 1;
    }
    i += VEC_SIZE;
  }
  KZEROUPPER();
  *resume = i;
  return NULL;
}

AVXBUF_KERNEL_ALIGN static const unsigned char *KFN(_find)(const unsigned char *hay, size_t n, const unsigned char *needle,
                                       size_t m)
{
  if (m == 1) return memchr(hay, needle[0], n);
  size_t at = 0;
  if (n - m + 1 >= VEC_SIZE) {
    const unsigned char *p = KFN(_find_vec)(hay, n, needle, m, &at);
    if (p != NULL) return p;
  }
  return avxbuf_libc_find(hay + at, n - at, needle, m);
}

/* The reverse search: the same candidates and budget, blocks from the end
 * and the highest candidate first. Fewer than V positions left at the
 * bottom are one more block at 0 with the positions already ruled out
 * masked off, so that the C library's part (avxbuf_libc_rfind: glibc has
 * no memrmem) runs only once the budget is spent. Returns the match, or
 * NULL and in *left how many start positions (from 0) are still to search. */
KFIND_TARGET static const unsigned char *KFN(_rfind_vec)(const unsigned char *hay, size_t n,
                                                    const unsigned char *needle, size_t m, size_t *left)
{
  size_t end = n - m + 1, budget = n;            /* positions [0, end) not yet ruled out */
  vec_t first = V_SET1(needle[0]), last = V_SET1(needle[m - 1]);
  const unsigned char *tail = hay + m - 1;
  while (end > 0) {
    if (end >= 4 * VEC_SIZE && KFIND_NONE4(end - 4 * VEC_SIZE)) {
      end -= 4 * VEC_SIZE;
      continue;
    }
    size_t at = end >= VEC_SIZE ? end - VEC_SIZE : 0;
    uint64_t mask = KFIND_CANDIDATES(at);
    if (end - at < VEC_SIZE) mask &= ((uint64_t)1 << (end - at)) - 1;
    while (mask) {
      unsigned bit = 63 - (unsigned)__builtin_clzll(mask);
      size_t pos = at + bit, k = 1;
      while (k < m - 1 && hay[pos + k] == needle[k]) k++;
      if (k >= m - 1) { KZEROUPPER(); return hay + pos; }
      if (k >= budget) { KZEROUPPER(); *left = pos; return NULL; }
      budget -= k;
      mask ^= (uint64_t)1 << bit;
    }
    end = at;
  }
  KZEROUPPER();
  *left = 0;
  return NULL;
}

AVXBUF_KERNEL_ALIGN static const unsigned char *KFN(_rfind)(const unsigned char *hay, size_t n, const unsigned char *needle,
                                        size_t m)
{
  size_t left = n - m + 1;
  if (m > 1 && left >= VEC_SIZE) {
    const unsigned char *p = KFN(_rfind_vec)(hay, n, needle, m, &left);
    if (p != NULL || left == 0) return p;
  }
  return avxbuf_libc_rfind(hay, left + m - 1, needle, m);   /* memrchr for one byte */
}
#undef KFIND_VEC
#undef KFIND_CANDIDATES
#undef KFIND_NONE4
#define KFIND KFN(_find)
#define KRFIND KFN(_rfind)
#endif

const avxbuf_kernel KCAT(avxbuf_k_, KNAME) = {
  KSTR(KNAME), KFN(_copy), KFN(_fill), KFIND, KRFIND, KNEEDS, KLEVEL, 8 * VEC_SIZE, KR_TEMPORAL,
#ifdef KCOPY_SKEW32
  &KSKEW32_KERNEL, KSKEW32_UPTO,
#else
  NULL, 0,
#endif
  KLOADS_ALIGNED_UPTO, KFN(_copy_large)
};
const avxbuf_kernel KCAT(avxbuf_k_, KFN(_nt)) = {
  KSTR(KNAME) "_nt", KFN(_nt_copy), KFN(_nt_fill), KFIND, KRFIND, KNEEDS, KLEVEL, 8 * VEC_SIZE, KR_STREAMING,
  NULL, 0, 0, KFN(_nt_copy_large) };

#undef KNAME
#undef KTARGET
#undef KNEEDS
#undef KLEVEL
#undef VEC_SIZE
#undef vec_t
#undef V_LOADU
#undef V_STOREU
#undef V_STOREA
#undef V_STREAM
#undef V_SET1
#undef V_EQMASK
#undef V_EQ
#undef V_AND
#undef V_OR
#undef V_MASK
#undef COPY_LE_VEC
#undef FILL_LE_VEC
#undef KCHECK_ALIGNED
#undef KCLEAN_MAX
#undef KCOPY_LE8V_CLEAN
#undef KFILL_LE8V_CLEAN
#undef KLE8V_CLEAN_FROM
#undef KCOPY_FORWARD_CLEAN
#undef KLOADS_ALIGNED_UPTO
#undef KCOPY_LE16V_CLEAN
#undef KLOADS_ALIGNED
#undef KSTREAM_COPY_PAIRS
#undef KCOPY_SKEW32
#undef KSKEW32_KERNEL
#undef KSKEW32_UPTO
#undef KFILL_LOOP_CLEAN
#undef KCOPY_CLEAN
#undef KFILL_CLEAN
#undef KZEROUPPER
#undef KFIND
#undef KRFIND
#undef KFIND_TARGET
