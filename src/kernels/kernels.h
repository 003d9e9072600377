/* Kernel interface: every kernel is a memmove (copy) and a memset (fill).
 * No Lua here; dispatch.c chooses among these. */
#ifndef AVXBUF_KERNELS_H
#define AVXBUF_KERNELS_H

#include <stddef.h>
#include "../arch.h"

typedef void (*avxbuf_copy_fn)(void *dst, const void *src, size_t n);
typedef void (*avxbuf_fill_fn)(void *dst, int byte, size_t n);

typedef struct avxbuf_kernel {
  const char *name;     /* as reported by avxbuf.kernel() */
  avxbuf_copy_fn copy;  /* memmove semantics: any overlap is safe */
  avxbuf_fill_fn fill;
} avxbuf_kernel;

#ifdef AVXBUF_X86
/* One family per vector ISA; each has a temporal and a non-temporal
 * variant (the _nt one streams only when the ranges do not overlap). */
extern const avxbuf_kernel avxbuf_k_sse2, avxbuf_k_sse2_nt;
extern const avxbuf_kernel avxbuf_k_avx, avxbuf_k_avx_nt;
extern const avxbuf_kernel avxbuf_k_avx2, avxbuf_k_avx2_nt;
extern const avxbuf_kernel avxbuf_k_avx512_256, avxbuf_k_avx512_256_nt;
extern const avxbuf_kernel avxbuf_k_avx512, avxbuf_k_avx512_nt;
/* String instructions (ERMS/FSRM) and the C library baseline. */
extern const avxbuf_kernel avxbuf_k_rep_movsb, avxbuf_k_rep_stosb;
#else
/* No string instructions here: their thresholds resolve to never, and the
 * dispatcher's references land on the C library. */
#define avxbuf_k_rep_movsb avxbuf_k_libc
#define avxbuf_k_rep_stosb avxbuf_k_libc
#endif
extern const avxbuf_kernel avxbuf_k_libc;
void avxbuf_libc_copy(void *dst, const void *src, size_t n);
void avxbuf_libc_fill(void *dst, int byte, size_t n);

#endif
