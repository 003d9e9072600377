/* Copies and fills of at most 32 bytes, shared by every vector kernel.
 * Every load happens before the first store, so overlap is safe: this is the
 * head/tail trick of glibc's memmove-vec-unaligned-erms, scaled down.
 * Only scalar and SSE2 code (the x86-64 baseline), so these inline into any
 * function whatever its target attribute; the ones up to 16 bytes on any
 * architecture (scalar there; on x86, 16 bytes take one SSE2 move). */
#ifndef AVXBUF_SMALL_H
#define AVXBUF_SMALL_H

#include <stdint.h>
#include <string.h>
#include "core/arch.h"
#ifdef AVXBUF_X86
#include <emmintrin.h>
#endif

#define AVXBUF_INLINE static inline __attribute__((always_inline))

/* Fixed-size memcpy compiles to one unaligned move of that width. */
#define SCALAR_MOVES(T, bits) \
  AVXBUF_INLINE T ld##bits(const void *p) { T v; memcpy(&v, p, sizeof v); return v; } \
  AVXBUF_INLINE void st##bits(void *p, T v) { memcpy(p, &v, sizeof v); }
SCALAR_MOVES(uint16_t, 16)
SCALAR_MOVES(uint32_t, 32)
SCALAR_MOVES(uint64_t, 64)
#undef SCALAR_MOVES

/* Exactly 16 bytes move as one 16-byte store on x86 (SSE2, which every
 * vector kernel has), as the C library's memmove and memset store them,
 * not as two 8-byte halves: a load may take its bytes from a store still
 * in flight only when that one store holds them all (store-to-load
 * forwarding), and the C library's readers of 16 bytes (memcpy, memcmp,
 * LuaJIT's string interning after a read is staged) load them at once, so
 * that a read of a 16-byte copy or fill waited for both halves to reach
 * the cache (docs/runs/zen5-vm-2026-12-05.md, "Small copies and the reads
 * after them"). */
AVXBUF_INLINE void copy_le16(unsigned char *d, const unsigned char *s, size_t n)
{
  if (n >= 8) {
#ifdef AVXBUF_X86
    if (n == 16) { _mm_storeu_si128((__m128i *)(void *)d, _mm_loadu_si128((const __m128i *)(const void *)s)); return; }
#endif
    uint64_t a = ld64(s), b = ld64(s + n - 8);
    st64(d, a); st64(d + n - 8, b);
  } else if (n >= 4) {
    uint32_t a = ld32(s), b = ld32(s + n - 4);
    st32(d, a); st32(d + n - 4, b);
  } else if (n >= 2) {
    uint16_t a = ld16(s), b = ld16(s + n - 2);
    st16(d, a); st16(d + n - 2, b);
  } else if (n == 1) {
    *d = *s;
  }
}

AVXBUF_INLINE void fill_le16(unsigned char *d, int c, size_t n)
{
  uint64_t v = 0x0101010101010101ull * (unsigned char)c;
  if (n >= 8) {
#ifdef AVXBUF_X86
    if (n == 16) { _mm_storeu_si128((__m128i *)(void *)d, _mm_set1_epi64x((long long)v)); return; }
#endif
    st64(d, v); st64(d + n - 8, v);
  } else if (n >= 4) {
    st32(d, (uint32_t)v); st32(d + n - 4, (uint32_t)v);
  } else if (n >= 2) {
    st16(d, (uint16_t)v); st16(d + n - 2, (uint16_t)v);
  } else if (n == 1) {
    *d = (unsigned char)c;
  }
}

#ifdef AVXBUF_X86
AVXBUF_INLINE void copy_le32(unsigned char *d, const unsigned char *s, size_t n)
{
  if (n <= 16) { copy_le16(d, s, n); return; }
  __m128i a = _mm_loadu_si128((const __m128i *)s);
  __m128i b = _mm_loadu_si128((const __m128i *)(s + n - 16));
  _mm_storeu_si128((__m128i *)d, a);
  _mm_storeu_si128((__m128i *)(d + n - 16), b);
}

AVXBUF_INLINE void fill_le32(unsigned char *d, int c, size_t n)
{
  if (n <= 16) { fill_le16(d, c, n); return; }
  __m128i v = _mm_set1_epi8((char)c);
  _mm_storeu_si128((__m128i *)d, v);
  _mm_storeu_si128((__m128i *)(d + n - 16), v);
}

#endif /* AVXBUF_X86 */

/* True when a forward (ascending) copy cannot overwrite source bytes it has
 * yet to read: dst is not inside (src, src + n). */
AVXBUF_INLINE int forward_safe(const void *d, const void *s, size_t n)
{
  return (uintptr_t)d - (uintptr_t)s >= n;
}

AVXBUF_INLINE int disjoint(const void *d, const void *s, size_t n)
{
  return forward_safe(d, s, n) && forward_safe(s, d, n);
}

/* Disjoint ranges whose dst lies less than 256 bytes past src modulo a page:
 * an ascending loop's loads then look, to the store-forwarding logic, like
 * the stores just made (4K aliasing), so glibc copies those descending
 * (memmove-vec-unaligned-erms.S, more_8x_vec: (dst - src) & (PAGE_SIZE -
 * 256) == 0); a descending copy is safe for disjoint ranges. */
AVXBUF_INLINE int aliasing_4k(const void *d, const void *s, size_t n)
{
  return (((uintptr_t)d - (uintptr_t)s) & (4096 - 256)) == 0 && disjoint(d, s, n);
}

#endif
