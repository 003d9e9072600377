/* The C library's memmove/memset: the baseline every benchmark measures
 * against, and the kernel of `kernel = "libc"`. */
#include <string.h>
#include "kernels.h"

void avxbuf_libc_copy(void *d, const void *s, size_t n) { memmove(d, s, n); }
void avxbuf_libc_fill(void *d, int c, size_t n) { memset(d, c, n); }

const avxbuf_kernel avxbuf_k_libc = { "libc", avxbuf_libc_copy, avxbuf_libc_fill, (const char *const[]){ NULL }, -1, 0 };
