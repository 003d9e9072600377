/* AVX-512 (F+BW+VL): the 32-byte EVEX family (avx512_256, what glibc's
 * *-evex variants and HotSpot's MaxVectorSize=32 use) and the 64-byte zmm
 * family (avx512).
 *
 * With AVXBUF_EMULATE_AVX512 this same source is compiled against SIMDe
 * instead of <immintrin.h> and without target attributes, so that the
 * AVX-512 logic (widths, thresholds, tails, overlap) runs, portably, on
 * machines without AVX-512. Emulated figures say nothing about hardware. */
#include "core/arch.h"
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
#include "kernels/ymm.h"
#include "kernels/vec_template.h"

/* The 32-byte loops the 64-byte family hands skew-32 copies to (below),
 * without this family's entry, whose size checks that family has made. Out
 * of line, with this family's target: inlined into the 64-byte copy they
 * took its target, and clang 14 merged their ymm moves into zmm ones (the
 * tuning above). make audit checks this function as avx512_256's copy. */
AVX512_TARGET_256 AVXBUF_KERNEL_ALIGN __attribute__((noinline)) static void avx512_256_copy_skew32(unsigned char *d, const unsigned char *s, size_t n)
{
  avx512_256_copy_gt8v(d, s, n);
}

#if !defined(AVXBUF_EMULATE_AVX512) && defined(__x86_64__)   /* 32-bit code has no zmm16-31 */
/* The 512-bit family's temporal moves from 33 B up (all but the backward
 * loop's), in zmm16-31 (ymm16-17 up to 64 B), as glibc's evex and avx512
 * variants move them: vzeroupper
 * does not touch registers 16-31 and SSE code cannot name them, so these
 * paths need no vzeroupper (Intel SDM, VZEROUPPER), which at these sizes
 * is a large part of a call. Only this family: the policy runs 512-bit code
 * by default only where it costs no licence (docs/policy.md), so a dirty
 * zmm16-31 costs nothing there; the 32-byte family keeps VEX registers and
 * its vzeroupper for the CPUs with licences. Written as asm because no
 * compiler can be asked to allocate registers 16-31; the emulated build
 * runs the C of vec_template.h for the same sizes. */
#define EVEX_LD(v, off, base) "vmovdqu64 " off "(%[" base "]), %%" v "\n\t"
#define EVEX_LDN(v, off, base) "vmovdqu64 " off "(%[" base "],%[n]), %%" v "\n\t"
#define EVEX_ST(v, off) "vmovdqu64 %%" v ", " off "(%[d])\n\t"
#define EVEX_STN(v, off) "vmovdqu64 %%" v ", " off "(%[d],%[n])\n\t"
/* Register v = the byte of operand c in every lane: a register variable
 * would not do, as GCC -O0 builds such a value in zmm0 first (make audit). */
#define EVEX_BCAST(v) "vpbroadcastb %k[c], %%" v "\n\t"
#define EVEX_OPS [d] "r"(d), [s] "r"(s), [n] "r"(n)

/* n in [32, 512], the largest class first: the compares on the way to
 * each are not taken, and the larger sizes, where a call's cost is more
 * than its moves', take the fewest. */
AVX512_TARGET AVXBUF_INLINE void avx512_evex_copy(unsigned char *d, const unsigned char *s, size_t n)
{
  if (n > 256)   /* every load before the first store: any overlap is safe */
    __asm__ volatile(EVEX_LD("zmm16", "", "s") EVEX_LD("zmm17", "64", "s")
                     EVEX_LD("zmm18", "128", "s") EVEX_LD("zmm19", "192", "s")
                     EVEX_LDN("zmm20", "-256", "s") EVEX_LDN("zmm21", "-192", "s")
                     EVEX_LDN("zmm22", "-128", "s") EVEX_LDN("zmm23", "-64", "s")
                     EVEX_ST("zmm16", "") EVEX_ST("zmm17", "64") EVEX_ST("zmm18", "128") EVEX_ST("zmm19", "192")
                     EVEX_STN("zmm20", "-256") EVEX_STN("zmm21", "-192")
                     EVEX_STN("zmm22", "-128") EVEX_STN("zmm23", "-64")
                     : : EVEX_OPS : "memory", "xmm16", "xmm17", "xmm18", "xmm19", "xmm20", "xmm21", "xmm22",
                       "xmm23");
  else if (n > 128)
    __asm__ volatile(EVEX_LD("zmm16", "", "s") EVEX_LD("zmm17", "64", "s")
                     EVEX_LDN("zmm18", "-128", "s") EVEX_LDN("zmm19", "-64", "s")
                     EVEX_ST("zmm16", "") EVEX_ST("zmm17", "64")
                     EVEX_STN("zmm18", "-128") EVEX_STN("zmm19", "-64")
                     : : EVEX_OPS : "memory", "xmm16", "xmm17", "xmm18", "xmm19");
  else if (n > 64)
    __asm__ volatile(EVEX_LD("zmm16", "", "s") EVEX_LDN("zmm17", "-64", "s")
                     EVEX_ST("zmm16", "") EVEX_STN("zmm17", "-64")
                     : : EVEX_OPS : "memory", "xmm16", "xmm17");
  else
    __asm__ volatile(EVEX_LD("ymm16", "", "s") EVEX_LDN("ymm17", "-32", "s")
                     EVEX_ST("ymm16", "") EVEX_STN("ymm17", "-32")
                     : : EVEX_OPS : "memory", "xmm16", "xmm17");
}

AVX512_TARGET AVXBUF_INLINE void avx512_evex_fill(unsigned char *d, int c, size_t n)
{
  if (n > 256)
    __asm__ volatile(EVEX_BCAST("zmm16") EVEX_ST("zmm16", "") EVEX_ST("zmm16", "64") EVEX_ST("zmm16", "128")
                     EVEX_ST("zmm16", "192") EVEX_STN("zmm16", "-256") EVEX_STN("zmm16", "-192")
                     EVEX_STN("zmm16", "-128") EVEX_STN("zmm16", "-64")
                     : : [d] "r"(d), [n] "r"(n), [c] "r"(c) : "memory", "xmm16");
  else if (n > 128)
    __asm__ volatile(EVEX_BCAST("zmm16") EVEX_ST("zmm16", "") EVEX_ST("zmm16", "64")
                     EVEX_STN("zmm16", "-128") EVEX_STN("zmm16", "-64")
                     : : [d] "r"(d), [n] "r"(n), [c] "r"(c) : "memory", "xmm16");
  else if (n > 64)
    __asm__ volatile(EVEX_BCAST("zmm16") EVEX_ST("zmm16", "") EVEX_STN("zmm16", "-64")
                     : : [d] "r"(d), [n] "r"(n), [c] "r"(c) : "memory", "xmm16");
  else
    __asm__ volatile(EVEX_BCAST("ymm16") EVEX_ST("ymm16", "") EVEX_STN("ymm16", "-32")
                     : : [d] "r"(d), [n] "r"(n), [c] "r"(c) : "memory", "xmm16");
}
/* n in (512, 1024] where the forward loop may not go: dst inside (src,
 * src + n), or a few bytes past src modulo a page, whose ascending loads
 * would wait on the stores just made (4K aliasing: small.h). The loops copy
 * those backward; here sixteen loads, of the first and the last 512 bytes,
 * come before the first store, in zmm16-31, as avx512_evex_copy does below
 * 512, so no load waits on a store of the copy and any overlap is safe.
 * Not the skew-32 ones, which still go to the 32-byte loops: loaded first,
 * their loads or their stores split, and at a distance of 32 mod 4096 some
 * processes ran them at half the speed (docs/kernels.md, "Eight to sixteen
 * vectors, loaded first"). */
AVX512_TARGET AVXBUF_INLINE void avx512_evex_copy_le16v(unsigned char *d, const unsigned char *s, size_t n)
{
  __asm__ volatile(EVEX_LD("zmm16", "", "s") EVEX_LD("zmm17", "64", "s")
                   EVEX_LD("zmm18", "128", "s") EVEX_LD("zmm19", "192", "s")
                   EVEX_LD("zmm20", "256", "s") EVEX_LD("zmm21", "320", "s")
                   EVEX_LD("zmm22", "384", "s") EVEX_LD("zmm23", "448", "s")
                   EVEX_LDN("zmm24", "-512", "s") EVEX_LDN("zmm25", "-448", "s")
                   EVEX_LDN("zmm26", "-384", "s") EVEX_LDN("zmm27", "-320", "s")
                   EVEX_LDN("zmm28", "-256", "s") EVEX_LDN("zmm29", "-192", "s")
                   EVEX_LDN("zmm30", "-128", "s") EVEX_LDN("zmm31", "-64", "s")
                   EVEX_ST("zmm16", "") EVEX_ST("zmm17", "64") EVEX_ST("zmm18", "128") EVEX_ST("zmm19", "192")
                   EVEX_ST("zmm20", "256") EVEX_ST("zmm21", "320") EVEX_ST("zmm22", "384") EVEX_ST("zmm23", "448")
                   EVEX_STN("zmm24", "-512") EVEX_STN("zmm25", "-448")
                   EVEX_STN("zmm26", "-384") EVEX_STN("zmm27", "-320")
                   EVEX_STN("zmm28", "-256") EVEX_STN("zmm29", "-192")
                   EVEX_STN("zmm30", "-128") EVEX_STN("zmm31", "-64")
                   : : EVEX_OPS : "memory", "xmm16", "xmm17", "xmm18", "xmm19", "xmm20", "xmm21", "xmm22",
                     "xmm23", "xmm24", "xmm25", "xmm26", "xmm27", "xmm28", "xmm29", "xmm30", "xmm31");
}

/* Where the aligned loops of n > 8 vectors start, as an offset from the
 * address a whose accesses they align, and how long a head is stored
 * before them: from the next 64-byte boundary after one head vector, as
 * glibc's loops start, or, when a is aligned itself, after a head of four,
 * so that a copy of 2^k bytes from there touches each of a's lines once (one
 * head vector would leave the loop one iteration that the tail does again). */
AVXBUF_INLINE size_t evex_loop_start(uintptr_t a, size_t *misaligned)
{
  *misaligned = a & 63;
  return *misaligned ? 64 - *misaligned : 256;
}
#define EVEX_HEAD_REST(a, b, c) "test %[m], %[m]\n\t" "jnz 4f\n\t" \
  EVEX_ST(a, "64") EVEX_ST(b, "128") EVEX_ST(c, "192") "4:\n\t"

/* Copies up to this size with dst off a 64-byte boundary align the loop's
 * loads; the others align its stores, as glibc's loops do. On the Zen 5
 * VM such a short copy's split loads cost more than split stores, and with
 * its stores aligned its time moved with its caller's code. The bound is
 * from the sweeps in docs/kernels.md, "Which side a short copy aligns". */
#define KLOADS_ALIGNED_UPTO 1024
#define KLOADS_ALIGNED(d, n) ((n) <= KLOADS_ALIGNED_UPTO && ((uintptr_t)(d) & 63))

/* n > 8 vectors, dst not inside (src, src + n): vec_variant.h's forward
 * loop (head and tail loaded first, four vectors an iteration, the stores
 * or the loads aligned), in zmm16-27. */
AVX512_TARGET AVXBUF_INLINE void avx512_evex_copy_forward(unsigned char *d, const unsigned char *s, size_t n)
{
  unsigned char *end = d + n, *lim;
  size_t m;
  const unsigned char *side = KLOADS_ALIGNED(d, n) ? s : d;
  size_t head = evex_loop_start((uintptr_t)side, &m);
  unsigned char *p = d + head;
  const unsigned char *q = s + head;
  __asm__ volatile(EVEX_LD("zmm16", "", "s") EVEX_LD("zmm25", "64", "s") EVEX_LD("zmm26", "128", "s")
                   EVEX_LD("zmm27", "192", "s")
                   EVEX_LDN("zmm17", "-256", "s") EVEX_LDN("zmm18", "-192", "s")
                   EVEX_LDN("zmm19", "-128", "s") EVEX_LDN("zmm20", "-64", "s")
                   "lea -256(%[e]), %[lim]\n\t"
                   "cmp %[lim], %[p]\n\t"
                   "jae 2f\n"
                   "1:\n\t"
                   EVEX_LD("zmm21", "", "q") EVEX_LD("zmm22", "64", "q")
                   EVEX_LD("zmm23", "128", "q") EVEX_LD("zmm24", "192", "q")
                   "vmovdqu64 %%zmm21, (%[p])\n\t" "vmovdqu64 %%zmm22, 64(%[p])\n\t"
                   "vmovdqu64 %%zmm23, 128(%[p])\n\t" "vmovdqu64 %%zmm24, 192(%[p])\n\t"
                   "add $256, %[p]\n\t"
                   "add $256, %[q]\n\t"
                   "cmp %[lim], %[p]\n\t"
                   "jb 1b\n"
                   "2:\n\t"
                   "vmovdqu64 %%zmm17, -256(%[e])\n\t" "vmovdqu64 %%zmm18, -192(%[e])\n\t"
                   "vmovdqu64 %%zmm19, -128(%[e])\n\t" "vmovdqu64 %%zmm20, -64(%[e])\n\t"
                   EVEX_ST("zmm16", "") EVEX_HEAD_REST("zmm25", "zmm26", "zmm27")
                   : [p] "+r"(p), [q] "+r"(q), [lim] "=&r"(lim)
                   : [d] "r"(d), [s] "r"(s), [n] "r"(n), [e] "r"(end), [m] "r"(m)
                   : "memory", "cc", "xmm16", "xmm17", "xmm18", "xmm19", "xmm20", "xmm21", "xmm22", "xmm23",
                     "xmm24", "xmm25", "xmm26", "xmm27");
}

/* n > 8 vectors: vec_variant.h's fill loop (eight aligned stores an
 * iteration, then at most four, then the tail), in zmm16. */
AVX512_TARGET AVXBUF_INLINE void avx512_evex_fill_loop(unsigned char *d, int c, size_t n)
{
  unsigned char *end = d + n, *lim;
  size_t m;
  unsigned char *p = d + evex_loop_start((uintptr_t)d, &m);
  __asm__ volatile(EVEX_BCAST("zmm16")
                   EVEX_ST("zmm16", "") EVEX_HEAD_REST("zmm16", "zmm16", "zmm16")
                   "lea -512(%[e]), %[lim]\n\t"
                   "cmp %[lim], %[p]\n\t"
                   "jae 2f\n"
                   "1:\n\t"
                   "vmovdqa64 %%zmm16, (%[p])\n\t" "vmovdqa64 %%zmm16, 64(%[p])\n\t"
                   "vmovdqa64 %%zmm16, 128(%[p])\n\t" "vmovdqa64 %%zmm16, 192(%[p])\n\t"
                   "vmovdqa64 %%zmm16, 256(%[p])\n\t" "vmovdqa64 %%zmm16, 320(%[p])\n\t"
                   "vmovdqa64 %%zmm16, 384(%[p])\n\t" "vmovdqa64 %%zmm16, 448(%[p])\n\t"
                   "add $512, %[p]\n\t"
                   "cmp %[lim], %[p]\n\t"
                   "jb 1b\n"
                   "2:\n\t"
                   "add $256, %[lim]\n\t"
                   "cmp %[lim], %[p]\n\t"
                   "jae 3f\n\t"
                   "vmovdqa64 %%zmm16, (%[p])\n\t" "vmovdqa64 %%zmm16, 64(%[p])\n\t"
                   "vmovdqa64 %%zmm16, 128(%[p])\n\t" "vmovdqa64 %%zmm16, 192(%[p])\n"
                   "3:\n\t"
                   "vmovdqu64 %%zmm16, -256(%[e])\n\t" "vmovdqu64 %%zmm16, -192(%[e])\n\t"
                   "vmovdqu64 %%zmm16, -128(%[e])\n\t" "vmovdqu64 %%zmm16, -64(%[e])"
                   : [p] "+r"(p), [lim] "=&r"(lim)
                   : [d] "r"(d), [e] "r"(end), [c] "r"(c), [m] "r"(m)
                   : "memory", "cc", "xmm16");
}
#define KCOPY_LE8V_CLEAN avx512_evex_copy
#define KFILL_LE8V_CLEAN avx512_evex_fill
/* From 32 bytes, not 33: exactly 32 then move as one 32-byte store (ymm16,
 * twice), as the C library's memmove and memset store them, not as the
 * two 16-byte halves of copy_le32, which a 32-byte load (memcmp's,
 * memcpy's) cannot take from the stores in flight: it waits for both to
 * reach the cache (store-to-load forwarding; small.h says the same of 16
 * bytes). Registers 16-31 need no vzeroupper. */
#define KLE8V_CLEAN_FROM 32
#define KCOPY_FORWARD_CLEAN avx512_evex_copy_forward
#define KCOPY_LE16V_CLEAN avx512_evex_copy_le16v
#define KFILL_LOOP_CLEAN avx512_evex_fill_loop
#endif

/* dst - src = 32 mod 64: with the stores aligned to 64 bytes, every 64-byte
 * load spans two cache lines (a split load, which Intel's optimization
 * reference manual counts as two accesses) and every 32-byte one sits in
 * one, so copies of more than 8 vectors up to 8 KiB, forward or backward,
 * take the 32-byte family's loops; the bound comes from the sweeps in
 * docs/kernels.md, "Skew 32". Not those the forward loop takes with its
 * loads aligned (KLOADS_ALIGNED, forward-safe, no page aliasing): their
 * loads do not split. */
#define KCOPY_SKEW32 avx512_256_copy_skew32
#define KSKEW32_KERNEL avxbuf_k_avx512_256
#define KSKEW32_UPTO (8 << 10)

/* The streaming copy's loop loads two vectors and streams them before it
 * loads the next two: with four loads and then four 64-byte streaming
 * stores an iteration, it copied 32-64 MiB slower than the 32-byte
 * families' streaming loops on the Zen 5 VMs (docs/kernels.md, "Streaming
 * stores in pairs"). */
#define KSTREAM_COPY_PAIRS

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
#define COPY_LE_VEC avx512_256_copy_le2v
#define FILL_LE_VEC avx512_256_fill_le2v
#define KFIND avx512_256_find
#define KRFIND avx512_256_rfind
#include "kernels/vec_template.h"
#endif /* AVXBUF_X86 */
