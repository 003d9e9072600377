/* AVX2: 32-byte moves; the broadcast for fill can use vpbroadcastb. */
#include <immintrin.h>

#define KNAME avx2
#define KTARGET __attribute__((target("avx2")))
#include "ymm.h"
#include "vec_template.h"
