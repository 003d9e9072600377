/* Reads and writes at a page's edge: every kernel this CPU runs, and the
 * plan's way to them (avxbuf_copy, avxbuf_fill: the inline moves, the call
 * ways, the picks) under the default and under each vector family alone,
 * with the source, the destination, the haystack and the needle ending at
 * the last byte before an inaccessible page, and starting at the first
 * byte after one. The guard bytes of spec/kernels_spec.lua see a write past
 * a destination; a read past a source's end is seen only when it faults,
 * which it does where the source ends a mapping (as glibc's string tests
 * place theirs: string/test-memcpy.c). Lua-free: linked with the core and
 * the kernels of one build flavour.
 *   pageguard MAXN      every size 0..MAXN; prints "no fault" at the end
 *   pageguard --planted a copy that reads one byte past its source: must
 *                       die at the guard (the check's own test) */
#define _DEFAULT_SOURCE   /* MAP_ANONYMOUS */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "core/dispatch.h"
#include "kernels/kernels.h"

static size_t page;

/* pages accessible bytes between two inaccessible pages. */
static unsigned char *guarded(size_t pages)
{
  unsigned char *m = mmap(NULL, (pages + 2) * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED || mprotect(m, page, PROT_NONE) != 0 || mprotect(m + (pages + 1) * page, page, PROT_NONE) != 0) {
    perror("pageguard: mmap");
    exit(2);
  }
  return m + page;
}

static void refill(unsigned char *p, size_t n)
{
  for (size_t i = 0; i < n; i++) p[i] = (unsigned char)(i * 7 + 1);
}

static void fail(const char *what, const char *name, size_t n)
{
  printf("%s: %s wrong at n=%zu\n", name, what, n);
  exit(1);
}

/* One kernel's four operations at the edges of [base, end). */
static void kernel_edges(const avxbuf_kernel *k, unsigned char *base, unsigned char *end, unsigned char *other,
                         size_t n)
{
  for (size_t da = 0; da < 64; da += 13) {
    k->copy(other + da, end - n, n);
    if (memcmp(other + da, end - n, n) != 0) fail("copy from the end", k->name, n);
    k->copy(other + da, base, n);
    if (memcmp(other + da, base, n) != 0) fail("copy from the start", k->name, n);
  }
  k->copy(end - n, other, n);
  k->copy(base, other, n);
  k->fill(end - n, 0x5a, n);
  k->fill(base, 0x5b, n);
  if (n % 3 != 0) return;
  for (size_t m = 1; m <= n && m <= 80; m += m < 20 ? 1 : 13) {
    unsigned char absent[80];
    memset(absent, 0xEE, m);   /* no match: every byte of the haystack is read */
    if (k->find(end - n, n, absent, m) || k->find(base, n, absent, m) || k->rfind(end - n, n, absent, m)
        || k->rfind(base, n, absent, m))
      fail("search", k->name, n);
    if (k->find(end - n, n, end - m, m) == NULL || k->rfind(base, n, base, m) == NULL) fail("search", k->name, n);
  }
}

/* The plan's way at the edges of [base, end), overlapping moves included. */
static void plan_edges(const avxbuf_plan *p, const char *name, unsigned char *base, unsigned char *end,
                       unsigned char *other, size_t n)
{
  for (size_t da = 0; da < 64; da += 7) {
    avxbuf_copy(p, other + da, end - n, n, OV_NONE);
    if (memcmp(other + da, end - n, n) != 0) fail("plan copy from the end", name, n);
    avxbuf_copy(p, other + da, base, n, OV_NONE);
    if (memcmp(other + da, base, n) != 0) fail("plan copy from the start", name, n);
    avxbuf_copy(p, end - n, other + da, n, OV_NONE);
    avxbuf_copy(p, base, other + da, n, OV_NONE);
    avxbuf_fill(p, end - n, 0, n);
    avxbuf_fill(p, base, 0xA5, n);
  }
  for (size_t d = 1; d < 40 && n + d <= (size_t)(end - base); d += 3) {
    avxbuf_copy(p, end - n, end - n - d, n, avxbuf_overlap_of(end - n, end - n - d, n));
    avxbuf_copy(p, end - n - d, end - n, n, avxbuf_overlap_of(end - n - d, end - n, n));
    avxbuf_copy(p, base, base + d, n, avxbuf_overlap_of(base, base + d, n));
    avxbuf_copy(p, base + d, base, n, avxbuf_overlap_of(base + d, base, n));
  }
}

static void quiet(void *ud, const char *message) { (void)ud; (void)message; }

int main(int argc, char **argv)
{
  page = (size_t)sysconf(_SC_PAGESIZE);
  if (argc == 2 && strcmp(argv[1], "--planted") == 0) {
    unsigned char *base = guarded(1), out[65];
    memcpy(out, base + page - 64, 65);   /* one byte into the guard page */
    printf("no fault (read %d)\n", out[64]);
    return 0;
  }
  if (argc != 2) {
    fprintf(stderr, "usage: pageguard MAXN | --planted\n");
    return 2;
  }
  size_t maxn = strtoul(argv[1], NULL, 10), pages = (maxn + page - 1) / page + 1;
  unsigned char *base = guarded(pages), *end = base + pages * page;
  unsigned char *other = malloc(maxn + 64);
  if (other == NULL) return 2;
  refill(base, pages * page);
  refill(other, maxn + 64);
  for (const avxbuf_kernel *const *k = avxbuf_kernel_list; *k; k++)
    if (avxbuf_kernel_available(*k))
      for (size_t n = 0; n <= maxn; n++) kernel_edges(*k, base, end, other, n);
  /* The default plan, then each vector family alone at every size (its
   * level and width, thresholds off, streaming from the first byte for a
   * streaming kernel: bench/lib/kernel_list.lua's rule, from the same
   * registry), then the string instructions, then the C library. */
  size_t count = 0;
  for (const avxbuf_kernel *const *k = avxbuf_kernel_list; *k; k++) count++;
  for (size_t o = 0; o < count + 3; o++) {
    char options[200] = "";
    if (o >= 1 && o <= count) {
      const avxbuf_kernel *k = avxbuf_kernel_list[o - 1];
      if (!avxbuf_kernel_available(k) || k->level < 0) continue;
      snprintf(options, sizeof options,
               "use_avx=%d,max_vector_size=%d,avx3_threshold=0,rep_movsb_threshold=0,rep_stosb_threshold=0,"
               "nontemporal_threshold=%d", k->level, k->vector_bits / 8, k->role == KR_STREAMING);
    } else if (o == count + 1) {
      snprintf(options, sizeof options, "avx3_threshold=0,rep_movsb_threshold=1,rep_stosb_threshold=1,"
               "nontemporal_threshold=0");
    } else if (o == count + 2) {
      snprintf(options, sizeof options, "kernel=libc");
    }
    static avxbuf_state st;
    avxbuf_state_init(&st, options, quiet, NULL);
    for (size_t n = 0; n <= maxn; n++) {
      refill(base, pages * page);
      plan_edges(&st.plan, options[0] ? options : "default", base, end, other, n);
    }
  }
  puts("no fault");
  return 0;
}
