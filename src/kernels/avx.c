/* AVX (AVX1 only): 32-byte moves; Sandy/Ivy Bridge and early AMD have AVX
 * without AVX2. */
#include "core/arch.h"
#ifdef AVXBUF_X86
#include <immintrin.h>

#include "kernels/small.h"

#define KNAME avx
#define KTARGET __attribute__((target("avx")))
#define KNEEDS AVXBUF_FEATURE(F_AVX)
#define KLEVEL 1

/* AVX has no 256-bit byte compare: two 128-bit ones (VEX-encoded, so no
 * SSE/AVX transition). */
KTARGET AVXBUF_INLINE uint64_t avx_eqmask(__m256i a, __m256i b)
{
  __m128i lo = _mm_cmpeq_epi8(_mm256_castsi256_si128(a), _mm256_castsi256_si128(b));
  __m128i hi = _mm_cmpeq_epi8(_mm256_extractf128_si256(a, 1), _mm256_extractf128_si256(b, 1));
  return (uint64_t)(unsigned)_mm_movemask_epi8(lo) | (uint64_t)(unsigned)_mm_movemask_epi8(hi) << 16;
}
#define V_EQMASK avx_eqmask
#include "kernels/ymm.h"
#include "kernels/vec_template.h"
#endif /* AVXBUF_X86 */
