/* The last occurrence of a needle by the two-way algorithm (Crochemore and
 * Perrin), run on the reversed strings: linear in the worst case, which
 * avxbuf_libc_rfind falls back to when its memrchr candidates keep failing
 * late (glibc has a two-way memmem but no memrmem). */
#include <string.h>
#include "kernels/kernels.h"

/* The reversed strings, read in place: R_NEEDLE(0) is the needle's last byte,
 * R_HAY(j) the haystack's j-th byte from the end. */
#define R_NEEDLE(i) needle[m - 1 - (i)]
#define R_HAY(j) hay[n - 1 - (j)]

/* Crochemore and Perrin's maximal suffix of the reversed needle, by the byte
 * order (greater = 1) or its opposite; its start - 1 (SIZE_MAX for the
 * whole) and, in *period, that suffix's period. */
static size_t max_suffix(const unsigned char *needle, size_t m, int greater, size_t *period)
{
  size_t ms = (size_t)-1, j = 0, k = 1, p = 1;
  while (j + k < m) {
    unsigned a = R_NEEDLE(ms + k), b = R_NEEDLE(j + k);
    if (a == b) {
      if (k == p) { j += p; k = 1; } else k++;
    } else if (greater ? a > b : a < b) {
      j += k; k = 1; p = j - ms;
    } else {
      ms = j++; k = p = 1;
    }
  }
  *period = p;
  return ms;
}

/* The last occurrence is the first one in the reversed strings: the two-way
 * algorithm (as glibc's and musl's memmem, whose shift table on the last
 * byte compared it keeps) run forward over them. O(n + m) byte compares
 * whatever the input, in O(1) space: periodic text costs a few passes. */
const unsigned char *avxbuf_twoway_rfind(const unsigned char *hay, size_t n, const unsigned char *needle, size_t m)
{
  size_t shift[256];   /* for bytes of the needle: 1 + their last place in the reversed one */
  unsigned char in_needle[256] = { 0 };
  for (size_t i = 0; i < m; i++) { in_needle[R_NEEDLE(i)] = 1; shift[R_NEEDLE(i)] = i + 1; }
  /* The critical factorisation: the later of the two maximal suffixes. */
  size_t p, p2, ms = max_suffix(needle, m, 1, &p), ms2 = max_suffix(needle, m, 0, &p2);
  if (ms2 + 1 > ms + 1) { ms = ms2; p = p2; }
  /* A needle periodic with period p (its left part repeats p later) lets a
   * match attempt keep what it knows (mem) when it shifts by p; any other
   * shifts past half the needle at least. R_NEEDLE(i) == R_NEEDLE(i + p)
   * for i <= ms is this memcmp on the unreversed bytes. */
  size_t mem0 = 0, mem = 0;
  if (memcmp(needle + (m - 1 - ms), needle + (m - 1 - ms - p), ms + 1) == 0) mem0 = m - p;
  else p = (ms + 1 > m - ms - 1 ? ms + 1 : m - ms - 1) + 1;
  for (size_t j = 0, k; n - j >= m;) {
    unsigned c = R_HAY(j + m - 1);
    if (!in_needle[c]) { j += m; mem = 0; continue; }
    if ((k = m - shift[c]) != 0) { j += k < mem ? mem : k; mem = 0; continue; }
    for (k = ms + 1 > mem ? ms + 1 : mem; k < m && R_NEEDLE(k) == R_HAY(j + k); k++) {}
    if (k < m) { j += k - ms; mem = 0; continue; }
    for (k = ms + 1; k > mem && R_NEEDLE(k - 1) == R_HAY(j + k - 1); k--) {}
    if (k <= mem) return hay + (n - j - m);
    j += p; mem = mem0;
  }
  return NULL;
}
#undef R_NEEDLE
#undef R_HAY
