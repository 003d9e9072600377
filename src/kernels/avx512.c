/* AVX-512 (F+BW+VL): the 32-byte EVEX family (avx512_256, what glibc's
 * *-evex variants and HotSpot's MaxVectorSize=32 use) and the 64-byte zmm
 * family (avx512).
 *
 * With AVXBUF_EMULATE_AVX512 this same source is compiled against SIMDe
 * instead of <immintrin.h> and without target attributes, so that the
 * AVX-512 logic (widths, thresholds, tails, overlap) runs, portably, on
 * machines without AVX-512. Emulated figures say nothing about hardware. */
#include "../arch.h"
#ifdef AVXBUF_X86
#ifdef AVXBUF_EMULATE_AVX512
#define SIMDE_ENABLE_NATIVE_ALIASES
#include <simde/x86/avx512.h>
/* SIMDe 0.7.4 has no _mm512_stream_si512: an aligned store stands in (it
 * keeps the alignment requirement, which vec_template.h checks). */
#define _mm512_stream_si512(p, v) simde_mm512_store_si512(p, v)
/* Nor _mm256_zeroupper: emulated registers have no upper state to clean. */
#define _mm256_zeroupper() ((void)0)
#define AVX512_TARGET
#define AVX512_TARGET_256
#define AVX2_TARGET
#else
#include <immintrin.h>
#define AVX512_TARGET __attribute__((target("avx512f,avx512bw,avx512vl")))
#define AVX512_TARGET_256 __attribute__((target("avx512f,avx512bw,avx512vl,tune=skylake-avx512")))
#define AVX2_TARGET __attribute__((target("avx2")))
#endif
#define AVX512_NEEDS (AVXBUF_FEATURE(F_AVX512F) | AVXBUF_FEATURE(F_AVX512BW) | AVXBUF_FEATURE(F_AVX512VL))

/* Tuned for Skylake-SP, which prefers 256-bit vectors: without it, clang 14
 * merges adjacent ymm moves into zmm ones in functions that may use
 * AVX-512F, and this family would run 512-bit instructions (make audit). */
#define KNAME avx512_256
#define KTARGET AVX512_TARGET_256
#define KNEEDS AVX512_NEEDS
#define KLEVEL 3
/* Search, both ways and in both families, is this 32-byte code with VEX
 * encodings only: allowed EVEX compares, clang -O1 put their operands in
 * ymm16-31, which vzeroupper does not clean (make audit), and a read-only
 * scan gains little from 512-bit vectors once past L2. */
#define KFIND_TARGET AVX2_TARGET
#include "ymm.h"
#include "vec_template.h"

#define KNAME avx512
#define KTARGET AVX512_TARGET
#define KNEEDS AVX512_NEEDS
#define KLEVEL 3
#define VEC_SIZE 64
#define vec_t __m512i
#define V_LOADU(p) _mm512_loadu_si512((const void *)(p))
#define V_STOREU(p, v) _mm512_storeu_si512((void *)(p), v)
#define V_STOREA(p, v) _mm512_store_si512((void *)(p), v)
#define V_STREAM(p, v) _mm512_stream_si512((__m512i *)(void *)(p), v)
#define V_SET1(c) _mm512_set1_epi8((char)(c))
#define V_EQMASK(a, b) ((uint64_t)_mm512_cmpeq_epi8_mask(a, b))
#define COPY_LE_VEC avx512_256_copy_le2v
#define FILL_LE_VEC avx512_256_fill_le2v
#define KFIND avx512_256_find
#define KRFIND avx512_256_rfind
#include "vec_template.h"
#endif /* AVXBUF_X86 */
