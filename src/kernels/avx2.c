/* AVX2: 32-byte moves; the broadcast for fill can use vpbroadcastb. */
#include "core/arch.h"
#ifdef AVXBUF_X86
#include <immintrin.h>

#define KNAME avx2
#define KTARGET __attribute__((target("avx2")))
#define KNEEDS (AVXBUF_FEATURE(F_AVX) | AVXBUF_FEATURE(F_AVX2))
#define KLEVEL 2
#include "kernels/ymm.h"
#include "kernels/vec_template.h"
#endif /* AVXBUF_X86 */
