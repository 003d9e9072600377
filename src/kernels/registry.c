/* The registry: every kernel this binary holds, each named once. A kernel's
 * facts (features, level, width, role) are in its descriptor, next to the
 * code they describe; dispatch, avxbuf.kernels(), the specs, the audit and
 * tune find kernels here by those facts, never by name. Adding a kernel:
 * its file, one line here, the source list (docs/adding-a-kernel.md). */
#include "kernels/kernels.h"

#ifdef AVXBUF_X86
#define X86_KERNELS(X) \
  X(sse2) X(sse2_nt) X(avx) X(avx_nt) X(avx2) X(avx2_nt) \
  X(avx512_256) X(avx512_256_nt) X(avx512) X(avx512_nt) \
  X(rep_movsb) X(rep_stosb)
#else
#define X86_KERNELS(X)
#endif
#define KERNELS(X) X86_KERNELS(X) X(libc)

#define DECLARE(name) extern const avxbuf_kernel avxbuf_k_##name;
KERNELS(DECLARE)

#define ENTRY(name) &avxbuf_k_##name,
const avxbuf_kernel *const avxbuf_kernel_list[] = { KERNELS(ENTRY) NULL };
