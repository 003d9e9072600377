/* AVX (AVX1 only): 32-byte moves; Sandy/Ivy Bridge and early AMD have AVX
 * without AVX2. */
#include "../arch.h"
#ifdef AVXBUF_X86
#include <immintrin.h>

#define KNAME avx
#define KTARGET __attribute__((target("avx")))
#define KISA AVXBUF_ISA("avx")
#include "ymm.h"
#include "vec_template.h"
#endif /* AVXBUF_X86 */
