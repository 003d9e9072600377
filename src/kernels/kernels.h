/* Kernel interface: every kernel is a memmove (copy), a memset (fill) and
 * a search each way (find, rfind). No Lua here; dispatch.c chooses among
 * these by the fields below, never by name. */
#ifndef AVXBUF_KERNELS_H
#define AVXBUF_KERNELS_H

#include <stddef.h>
#include <stdint.h>
#include "core/arch.h"
#include "core/cpu.h"

typedef void (*avxbuf_copy_fn)(void *dst, const void *src, size_t n);
typedef void (*avxbuf_fill_fn)(void *dst, int byte, size_t n);
/* The first occurrence of needle[0..m) in hay[0..n), 1 <= m <= n, or NULL. */
typedef const unsigned char *(*avxbuf_find_fn)(const unsigned char *hay, size_t n,
                                               const unsigned char *needle, size_t m);
/* The last occurrence: the last p with p + m <= hay + n, or NULL. */
typedef avxbuf_find_fn avxbuf_rfind_fn;

/* What a kernel is for, which decides where dispatch may use it. */
typedef enum avxbuf_kernel_role {
  KR_TEMPORAL,      /* a vector family: every size, any overlap */
  KR_STREAMING,     /* its twin that streams disjoint ranges (non-temporal stores, then sfence) */
  KR_STRING_COPY,   /* a string instruction (ERMS) for copies; its other operations are libc's */
  KR_STRING_FILL,   /* the same for zero and fill */
  KR_LIBC           /* the C library: every build has it, the fallback of every rule */
} avxbuf_kernel_role;

/* Every kernel function starts on a 64-byte boundary, as glibc's string
 * functions do: code that is the same byte for byte then sits the same way
 * in cache lines and the decoded-uop cache, so that two builds of one
 * kernel, or one kernel moved by an edit elsewhere, run alike. `make audit`
 * checks the addresses in the compiled module. */
#define AVXBUF_KERNEL_ALIGN __attribute__((aligned(64)))

/* One bit per avxbuf_feature (cpu.h). */
#define AVXBUF_FEATURE(f) ((uint32_t)1 << (f))

/* A kernel called NAME is the object avxbuf_k_NAME, defined in its own file
 * and listed once in registry.c; its code is in functions NAME_copy,
 * NAME_fill, NAME_find and NAME_rfind (each may be another kernel's: a
 * string-instruction kernel leaves its other operations to the C library's,
 * and a streaming kernel's searches are its temporal twin's). `make audit` finds them by these names and checks their
 * instructions against needs, vector_bits and role, which avxbuf.kernels()
 * reports. */
typedef struct avxbuf_kernel {
  const char *name;     /* as reported by avxbuf.kernel() */
  avxbuf_copy_fn copy;  /* memmove semantics: any overlap is safe */
  avxbuf_fill_fn fill;
  avxbuf_find_fn find;
  avxbuf_rfind_fn rfind;
  uint32_t needs;       /* AVXBUF_FEATURE bits: CPUID features beyond x86-64's baseline */
  int level;            /* the use_avx level of its vector family (0-3), or -1 */
  int vector_bits;      /* widest register its own code touches: 0, 128, 256, 512;
                           -1 when the C library decides */
  avxbuf_kernel_role role;
  /* Copies of more than 8 vectors up to skew32_upto bytes whose dst - src
   * is 32 mod 64 run this other kernel's loops, past its entry (avx512.c
   * says why), but for those of loads_aligned_upto; NULL: none. */
  const struct avxbuf_kernel *skew32;
  size_t skew32_upto;
  /* Copies of more than 8 vectors up to this size whose dst is off a 64-byte
   * line, dst not inside (src, src + n) and not a few bytes past src modulo
   * a page (small.h's forward_safe and aliasing_4k), align the loop's loads,
   * not its stores, and are not handed to skew32 (avx512.c says why); 0: none. */
  size_t loads_aligned_upto;
  /* copy for copies of more than AVXBUF_LARGE_COPY bytes: its loops without
   * the entry's tests for smaller sizes, which dispatch's way for them has
   * made (dispatch.c); copy itself where NULL. */
  avxbuf_copy_fn copy_large;
} avxbuf_kernel;

/* Above every size class a vector family's copy tests for (8 and 16
 * vectors of up to 64 bytes; the 512-bit family's loads-aligned bound,
 * avx512.c), so that copy_large runs the loops alone (vec_variant.h checks). */
#define AVXBUF_LARGE_COPY 2048

/* k's function for every copy of n bytes or more. */
static inline avxbuf_copy_fn avxbuf_copy_from(const avxbuf_kernel *k, size_t n)
{
  return n > AVXBUF_LARGE_COPY && k->copy_large != NULL ? k->copy_large : k->copy;
}

/* The registry (registry.c): every kernel in this binary, NULL-terminated,
 * in the order avxbuf.kernels() lists them. */
extern const avxbuf_kernel *const avxbuf_kernel_list[];

/* The C library's functions, which other kernels use for what they leave
 * to it. */
void avxbuf_libc_copy(void *dst, const void *src, size_t n);
void avxbuf_libc_fill(void *dst, int byte, size_t n);
const unsigned char *avxbuf_libc_find(const unsigned char *hay, size_t n, const unsigned char *needle, size_t m);
const unsigned char *avxbuf_libc_rfind(const unsigned char *hay, size_t n, const unsigned char *needle, size_t m);
/* Its linear fallback (twoway.c): the last occurrence, 1 <= m <= n, or NULL. */
const unsigned char *avxbuf_twoway_rfind(const unsigned char *hay, size_t n, const unsigned char *needle, size_t m);
/* The offsets of the first k (or fewer) bytes c in p[0..n) into out, in
 * order (offsets.c); how many. */
size_t avxbuf_byte_offsets(const unsigned char *p, size_t n, unsigned char c, size_t *out, size_t k);

#endif
