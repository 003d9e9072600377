/* The 32-byte vector operations, shared by the AVX, AVX2 and AVX-512VL (EVEX
 * ymm) families; they differ only in the target attribute, i.e. in which
 * encodings the compiler may use. Include <immintrin.h> (or SIMDe) first. */
#define VEC_SIZE 32
#define vec_t __m256i
#define V_LOADU(p) _mm256_loadu_si256((const __m256i *)(const void *)(p))
#define V_STOREU(p, v) _mm256_storeu_si256((__m256i *)(void *)(p), v)
#define V_STOREA(p, v) _mm256_store_si256((__m256i *)(void *)(p), v)
#define V_STREAM(p, v) _mm256_stream_si256((__m256i *)(void *)(p), v)
#define V_SET1(c) _mm256_set1_epi8((char)(c))
#ifndef V_EQMASK   /* AVX2 and later; avx.c has no 256-bit integer compare, and/or: its own V_EQMASK */
#define V_EQ _mm256_cmpeq_epi8
#define V_AND _mm256_and_si256
#define V_OR _mm256_or_si256
#define V_MASK(v) ((uint64_t)(unsigned)_mm256_movemask_epi8(v))
#endif
#define COPY_LE_VEC copy_le32
#define FILL_LE_VEC fill_le32
