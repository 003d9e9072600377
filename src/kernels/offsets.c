/* The offsets of one byte value, for split's batches on the FFI path
 * (src/luajit/lluajit.c): one call returns many separators, so a search that
 * costs a call per separator (memchr: a call and its set-up for what is
 * often a few dozen bytes) would be most of a piece's time. 16 bytes at a
 * time with SSE2, the x86-64 baseline (no target attribute), a byte loop
 * elsewhere; from 64 bytes without a hit, memchr (vectorised and unrolled
 * in glibc) takes the long gaps. */
#include <string.h>
#include "kernels/kernels.h"
#ifdef AVXBUF_X86
#include <emmintrin.h>
#endif

/* Scanned before a gap is left to memchr. */
#define NEAR 64

size_t avxbuf_byte_offsets(const unsigned char *p, size_t n, unsigned char c, size_t *out, size_t k)
{
  size_t found = 0, i = 0;
#ifdef AVXBUF_X86
  size_t last = 0;   /* where the latest hit was, for the gap */
  const __m128i needle = _mm_set1_epi8((char)c);
  while (found < k && n - i >= 16) {
    if (i - last >= NEAR) {   /* a long gap: memchr to the next hit */
      const unsigned char *q = memchr(p + i, c, n - i);
      if (q == NULL) return found;
      i = (size_t)(q - p);
      if (n - i < 16) break;   /* the byte loop reads the rest: no load past the end */
    }
    unsigned mask = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(const void *)(p + i)),
                                                               needle));
    for (; mask != 0; mask &= mask - 1) {
      last = i + (size_t)__builtin_ctz(mask);
      out[found++] = last;
      if (found == k) return found;
    }
    i += 16;
  }
#endif
  for (; found < k && i < n; i++)
    if (p[i] == c) out[found++] = i;
  return found;
}
