/* The C library's memmove/memset/memmem: the baseline every benchmark
 * measures against, and the kernel of `kernel = "libc"`. */
#define _GNU_SOURCE   /* memmem, memrchr */
#include <string.h>
#include "kernels/kernels.h"

AVXBUF_KERNEL_ALIGN void avxbuf_libc_copy(void *d, const void *s, size_t n) { memmove(d, s, n); }
AVXBUF_KERNEL_ALIGN void avxbuf_libc_fill(void *d, int c, size_t n) { memset(d, c, n); }

AVXBUF_KERNEL_ALIGN const unsigned char *avxbuf_libc_find(const unsigned char *hay, size_t n, const unsigned char *needle, size_t m)
{
  return memmem(hay, n, needle, m);
}

/* The last occurrence of needle[0..m) in hay[0..n), 1 <= m <= n. glibc has
 * no memrmem: memrchr finds candidates for the first byte, memcmp checks
 * them, and once the checks have cost n bytes (periodic text, where each
 * fails late: O(n m) otherwise) the rest goes to the two-way search. A
 * worst case costs n bytes of memrchr and of checks, then at most ~2n
 * compares of the two-way search: linear. */
AVXBUF_KERNEL_ALIGN const unsigned char *avxbuf_libc_rfind(const unsigned char *hay, size_t n, const unsigned char *needle, size_t m)
{
  if (m == 1) return memrchr(hay, needle[0], n);
  size_t end = n - m + 1, budget = n;   /* candidates start before end */
  while (end > 0) {
    const unsigned char *p = memrchr(hay, needle[0], end);
    if (p == NULL) return NULL;
    if (memcmp(p + 1, needle + 1, m - 1) == 0) return p;
    end = (size_t)(p - hay);
    if (m + 16 >= budget) return avxbuf_twoway_rfind(hay, end + m - 1, needle, m);
    budget -= m + 16;   /* a check: the compare and a call */
  }
  return NULL;
}

const avxbuf_kernel avxbuf_k_libc = {
  "libc", avxbuf_libc_copy, avxbuf_libc_fill, avxbuf_libc_find, avxbuf_libc_rfind, 0, -1, -1, KR_LIBC, NULL, 0, 0, NULL };
