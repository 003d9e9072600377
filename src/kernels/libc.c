/* The C library's memmove/memset/memmem: the baseline every benchmark
 * measures against, and the kernel of `kernel = "libc"`. */
#define _GNU_SOURCE   /* memmem */
#include <string.h>
#include "kernels.h"

void avxbuf_libc_copy(void *d, const void *s, size_t n) { memmove(d, s, n); }
void avxbuf_libc_fill(void *d, int c, size_t n) { memset(d, c, n); }

const unsigned char *avxbuf_libc_find(const unsigned char *hay, size_t n, const unsigned char *needle, size_t m)
{
  return memmem(hay, n, needle, m);
}

const avxbuf_kernel avxbuf_k_libc = {
  "libc", avxbuf_libc_copy, avxbuf_libc_fill, avxbuf_libc_find, (const char *const[]){ NULL }, -1, 0 };
