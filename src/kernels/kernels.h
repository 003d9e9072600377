/* Kernel interface: every kernel is a memmove (copy), a memset (fill) and
 * a search each way (find, rfind). No Lua here; dispatch.c chooses among
 * these. */
#ifndef AVXBUF_KERNELS_H
#define AVXBUF_KERNELS_H

#include <stddef.h>
#include "../arch.h"

typedef void (*avxbuf_copy_fn)(void *dst, const void *src, size_t n);
typedef void (*avxbuf_fill_fn)(void *dst, int byte, size_t n);
/* The first occurrence of needle[0..m) in hay[0..n), 1 <= m <= n, or NULL. */
typedef const unsigned char *(*avxbuf_find_fn)(const unsigned char *hay, size_t n,
                                               const unsigned char *needle, size_t m);
/* The last occurrence: the last p with p + m <= hay + n, or NULL. */
typedef avxbuf_find_fn avxbuf_rfind_fn;

/* A kernel called NAME has its code in functions NAME_copy, NAME_fill,
 * NAME_find and NAME_rfind (each may be another kernel's, as rep_movsb's
 * fill is libc's and the _nt kernels' searches are their temporal twin's):
 * `make audit` finds them by these names and checks their instructions
 * against the three fields after the function pointers, which
 * avxbuf.kernels() reports. lua/avxbuf/ffi.lua mirrors name, copy and fill
 * only. */
typedef struct avxbuf_kernel {
  const char *name;     /* as reported by avxbuf.kernel() */
  avxbuf_copy_fn copy;  /* memmove semantics: any overlap is safe */
  avxbuf_fill_fn fill;
  avxbuf_find_fn find;
  avxbuf_rfind_fn rfind;
  const char *const *isa;  /* CPUID features it needs, NULL-terminated */
  int vector_bits;      /* widest register its own code touches: 0, 128, 256, 512;
                           -1 when the C library decides */
  int streaming;        /* non-temporal stores for disjoint ranges, then sfence */
} avxbuf_kernel;

/* An isa list: AVXBUF_ISA("avx", "avx2"). */
#define AVXBUF_ISA(...) ((const char *const[]){ __VA_ARGS__, NULL })

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
const unsigned char *avxbuf_libc_find(const unsigned char *hay, size_t n, const unsigned char *needle, size_t m);
const unsigned char *avxbuf_libc_rfind(const unsigned char *hay, size_t n, const unsigned char *needle, size_t m);

#endif
