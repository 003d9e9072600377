/* AVX2: 32-byte moves; the broadcast for fill can use vpbroadcastb. */
#include "../arch.h"
#ifdef AVXBUF_X86
#include <immintrin.h>

#define KNAME avx2
#define KTARGET __attribute__((target("avx2")))
#define KISA AVXBUF_ISA("avx", "avx2")
#include "ymm.h"
#include "vec_template.h"
#endif /* AVXBUF_X86 */
