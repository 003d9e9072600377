/* One kernel of a family, included twice by vec_template.h: the temporal
 * one (KSTREAM 0: KNAME_copy, KNAME_fill) and the streaming one (KSTREAM 1:
 * KNAME_nt_copy, KNAME_nt_fill). Only the loops over whole aligned blocks
 * differ; the streaming copy takes its loop only for disjoint ranges. */

#if KSTREAM
#define KV(suffix) KFN(KCAT(_nt, suffix))
#define KV_STORE V_STREAM
/* Streams are weakly ordered: fence them before any later store. */
#define KV_FENCE() _mm_sfence()
#else
#define KV(suffix) KFN(suffix)
#define KV_STORE V_STOREA
#define KV_FENCE() ((void)0)
#endif

/* n > 8V, dst not inside (src, src + n). */
KTARGET AVXBUF_INLINE void KV(_copy_forward)(unsigned char *d, const unsigned char *s, size_t n)
{
  vec_t head = V_LOADU(s), t0, t1, t2, t3, a, b, c, e;
  V4_LOAD(s + n - 4 * VEC_SIZE, t0, t1, t2, t3);
  unsigned char *end = d + n;
  size_t skew = VEC_SIZE - ((uintptr_t)d & (VEC_SIZE - 1));
  unsigned char *p = d + skew;
  const unsigned char *q = s + skew;
  for (; p < end - 4 * VEC_SIZE; p += 4 * VEC_SIZE, q += 4 * VEC_SIZE) {
    KCHECK_ALIGNED(p);
#if KSTREAM && defined(KSTREAM_COPY_PAIRS)
    a = V_LOADU(q); b = V_LOADU(q + VEC_SIZE);
    KV_STORE(p, a); KV_STORE(p + VEC_SIZE, b);
    c = V_LOADU(q + 2 * VEC_SIZE); e = V_LOADU(q + 3 * VEC_SIZE);
    KV_STORE(p + 2 * VEC_SIZE, c); KV_STORE(p + 3 * VEC_SIZE, e);
#else
    V4_LOAD(q, a, b, c, e);
    V4_STORE(KV_STORE, p, a, b, c, e);
#endif
  }
  KV_FENCE();
  V4_STORE(V_STOREU, end - 4 * VEC_SIZE, t0, t1, t2, t3);
  V_STOREU(d, head);
}

#if !KSTREAM && defined(KCOPY_SKEW32)
/* A copy past 8 vectors, forward or backward, that the family hands to
 * KCOPY_SKEW32 (avx512.c says why). */
#define KV_SKEWED(d, s, n) ((n) <= KSKEW32_UPTO && (((uintptr_t)(d) - (uintptr_t)(s)) & 63) == 32)
#endif
/* A copy past 8 vectors that the clean forward loop may take. */
#define KV_FORWARD(d, s, n) (forward_safe(d, s, n) && !aliasing_4k(d, s, n))

/* n > 8V: the copy's loops. A family that hands copies to this one
 * (KCOPY_SKEW32) runs them without this one's entry, whose checks for small
 * sizes it has already made. */
KTARGET AVXBUF_INLINE void KV(_copy_gt8v)(unsigned char *d, const unsigned char *s, size_t n)
{
#if !KSTREAM && defined(KCOPY_FORWARD_CLEAN)
  /* Those it takes with the loads aligned first: they do not split the
   * loads that KCOPY_SKEW32 is there to spare. */
  if (KLOADS_ALIGNED(d, n) && KV_FORWARD(d, s, n)) { KCOPY_FORWARD_CLEAN(d, s, n); return; }
#endif
#ifdef KV_SKEWED
  if (KV_SKEWED(d, s, n)) { KCOPY_SKEW32(d, s, n); return; }
#endif
#if !KSTREAM && defined(KCOPY_FORWARD_CLEAN)
  if (KV_FORWARD(d, s, n)) { KCOPY_FORWARD_CLEAN(d, s, n); return; }
#endif
#if !KSTREAM
  if (n <= 16 * VEC_SIZE && disjoint(d, s, n) && !aliasing_4k(d, s, n)) {
    KFN(_copy_le8v)(d, s, 8 * VEC_SIZE);
    KFN(_copy_le8v)(d + n - 8 * VEC_SIZE, s + n - 8 * VEC_SIZE, 8 * VEC_SIZE);
  } else
#endif
  if (!forward_safe(d, s, n) || (!KSTREAM && aliasing_4k(d, s, n))) KFN(_copy_backward)(d, s, n);
#if KSTREAM
  else if (disjoint(d, s, n)) KV(_copy_forward)(d, s, n);
  else KFN(_copy_forward)(d, s, n);   /* overlapping: the temporal loop */
#else
  else KV(_copy_forward)(d, s, n);
#endif
  KZEROUPPER();
}

KTARGET AVXBUF_KERNEL_ALIGN static void KV(_copy)(void *dst, const void *src, size_t n)
{
  unsigned char *d = dst;
  const unsigned char *s = src;
#ifdef KCOPY_LE8V_CLEAN   /* one unsigned compare for [KLE8V_CLEAN_FROM, 8V] */
  if (__builtin_expect(n - KLE8V_CLEAN_FROM <= 8 * VEC_SIZE - KLE8V_CLEAN_FROM, 1)) { KCOPY_LE8V_CLEAN(d, s, n); return; }
#endif
  if (n <= KCLEAN_MAX) { KCOPY_CLEAN(d, s, n); return; }
#if !KSTREAM && defined(KCOPY_LE16V_CLEAN)   /* past 8V: those the forward loop may not take */
  if (n <= 16 * VEC_SIZE && !KV_FORWARD(d, s, n)) {
#ifdef KV_SKEWED   /* (handed off from here: _copy_gt8v would test these again) */
    if (KV_SKEWED(d, s, n)) { KCOPY_SKEW32(d, s, n); return; }
#endif
    KCOPY_LE16V_CLEAN(d, s, n);
    return;
  }
#endif
  if (n > 8 * VEC_SIZE) { KV(_copy_gt8v)(d, s, n); return; }
  KFN(_copy_le8v)(d, s, n);
  KZEROUPPER();
}

/* kernels.h's copy_large: past the size tests, which the one compare here
 * answers for the compiler too (its loops' own tests of n against 16
 * vectors and KLOADS_ALIGNED_UPTO go). */
_Static_assert(AVXBUF_LARGE_COPY >= 16 * VEC_SIZE, "copy_large: the loops' size tests would stay");
#ifdef KLOADS_ALIGNED_UPTO
_Static_assert(AVXBUF_LARGE_COPY >= KLOADS_ALIGNED_UPTO, "copy_large: the loads-aligned test would stay");
#endif
KTARGET AVXBUF_KERNEL_ALIGN static void KV(_copy_large)(void *dst, const void *src, size_t n)
{
  if (n <= AVXBUF_LARGE_COPY) { KV(_copy)(dst, src, n); return; }
  KV(_copy_gt8v)(dst, src, n);
}

KTARGET AVXBUF_KERNEL_ALIGN static void KV(_fill)(void *dst, int byte, size_t n)
{
  unsigned char *d = dst;
#ifdef KFILL_LE8V_CLEAN
  if (__builtin_expect(n - KLE8V_CLEAN_FROM <= 8 * VEC_SIZE - KLE8V_CLEAN_FROM, 1)) { KFILL_LE8V_CLEAN(d, byte, n); return; }
#endif
  if (n <= KCLEAN_MAX) { KFILL_CLEAN(d, byte, n); return; }
#if !KSTREAM && defined(KFILL_LOOP_CLEAN)
  if (n > 8 * VEC_SIZE) { KFILL_LOOP_CLEAN(d, byte, n); return; }
#endif
  if (n <= 2 * VEC_SIZE) {
    KFN(_fill_le2v)(d, byte, n);
  } else {
    vec_t v = V_SET1(byte);
    unsigned char *end = d + n;
    /* glibc's memset-vec-unaligned-erms.S shape: four unaligned head
     * stores, an aligned loop of four, four unaligned tail stores; the
     * larger class first, so that the way to it takes no branch. */
    if (__builtin_expect(n > 4 * VEC_SIZE, 1)) {
      V4_STORE(V_STOREU, d, v, v, v, v);
      if (__builtin_expect(n <= 8 * VEC_SIZE, 1)) {
        V4_STORE(V_STOREU, end - 4 * VEC_SIZE, v, v, v, v);
        KZEROUPPER();
        return;
      }
      unsigned char *p = (unsigned char *)((uintptr_t)(d + 4 * VEC_SIZE) & ~(uintptr_t)(VEC_SIZE - 1));
      for (; p < end - 4 * VEC_SIZE; p += 4 * VEC_SIZE) {
        KCHECK_ALIGNED(p);
        V4_STORE(KV_STORE, p, v, v, v, v);
      }
      KV_FENCE();
      V4_STORE(V_STOREU, end - 4 * VEC_SIZE, v, v, v, v);
    } else {
      V_STOREU(d, v); V_STOREU(d + VEC_SIZE, v);
      V_STOREU(end - 2 * VEC_SIZE, v); V_STOREU(end - VEC_SIZE, v);
    }
  }
  KZEROUPPER();
}

#undef KV
#undef KV_SKEWED
#undef KV_FORWARD
#undef KV_STORE
#undef KV_FENCE
#undef KSTREAM
