/* SSE2: 16-byte vectors, the x86-64 baseline (no target attribute needed). */
#include "core/arch.h"
#ifdef AVXBUF_X86
#include <emmintrin.h>

#define KNAME sse2
#define KTARGET
#define KNEEDS 0   /* the x86-64 baseline */
#define KLEVEL 0
#define VEC_SIZE 16
#define vec_t __m128i
#define V_LOADU(p) _mm_loadu_si128((const __m128i *)(const void *)(p))
#define V_STOREU(p, v) _mm_storeu_si128((__m128i *)(void *)(p), v)
#define V_STOREA(p, v) _mm_store_si128((__m128i *)(void *)(p), v)
#define V_STREAM(p, v) _mm_stream_si128((__m128i *)(void *)(p), v)
#define V_SET1(c) _mm_set1_epi8((char)(c))
#define V_EQ _mm_cmpeq_epi8
#define V_AND _mm_and_si128
#define V_OR _mm_or_si128
#define V_MASK(v) ((uint64_t)(unsigned)_mm_movemask_epi8(v))
#define COPY_LE_VEC copy_le16
#define FILL_LE_VEC fill_le16
#include "kernels/vec_template.h"
#endif /* AVXBUF_X86 */
