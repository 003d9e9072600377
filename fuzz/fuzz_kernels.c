/* libFuzzer: every kernel, through the real dispatch, against a byte-wise
 * reference, with random size, offsets, overlap and knobs; 64 guard bytes
 * around the destination range (and the whole arena) must not change.
 * Searches (op & 4) run every kernel's find and rfind directly, and split's
 * byte offsets. Built
 * twice: native (levels the CPU allows) and emulated (AVX-512 too). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "core/dispatch.h"

#define MAX_N (16 * 1024)   /* above every threshold the harness sets */
#define ARENA (2 * MAX_N + 4 * 1024)

static unsigned char arena[ARENA], expect[ARENA], before[ARENA];

static void ref_copy(unsigned char *base, size_t d, size_t s, size_t n)
{
  unsigned char *tmp = malloc(n ? n : 1);
  for (size_t i = 0; i < n; i++) tmp[i] = base[s + i];
  for (size_t i = 0; i < n; i++) base[d + i] = tmp[i];
  free(tmp);
}

/* The first (or the last) occurrence, position by position. */
static const unsigned char *ref_find(const unsigned char *h, size_t n, const unsigned char *x, size_t m, int last)
{
  const unsigned char *found = NULL;
  for (size_t p = 0; p + m <= n; p++) {
    size_t k = 0;
    while (k < m && h[p + k] == x[k]) k++;
    if (k == m) {
      found = h + p;
      if (!last) break;
    }
  }
  return found;
}

#define SEARCH_MAX_N 2048   /* past every strategy change (4 x 64 bytes, the budgets); the reference costs n m */
#define SEARCH_MAX_M 200

/* Text of n bytes at a misalignment of its own: the input repeated
 * (periodic) or random bytes seeded by it, over 1-4 letters or all 256
 * (flags), so that candidates abound; the needle (m from msel) from the
 * text at pos (a match) or from the input, one byte changed or not. */
static void search(size_t n, uint32_t msel, uint32_t pos, size_t off, int flags, const uint8_t *in, size_t left)
{
  static unsigned char needle[SEARCH_MAX_M];
  n = n % SEARCH_MAX_N + 1;
  unsigned char *hay = arena + off % 64;
  int letters = flags & 0x80 ? 256 : 1 + (flags & 3);
  uint32_t x = pos;
  for (size_t i = 0; i < left; i++) x = x * 31 + in[i];
  for (size_t i = 0; i < n; i++) {
    x = x * 69069 + 1;
    hay[i] = (unsigned char)((flags & 0x10 ? x >> 24 : left ? in[i % left] : i * 131 + 7) % letters);
  }
  size_t m = 1 + msel % (n < SEARCH_MAX_M ? n : SEARCH_MAX_M);
  if (flags & 0x20) memcpy(needle, hay + pos % (n - m + 1), m);
  else for (size_t i = 0; i < m; i++) needle[i] = (unsigned char)((left ? in[(i + pos) % left] : i) % letters);
  if (flags & 0x40) needle[(pos >> 3) % m] ^= 1;
  memcpy(expect, arena, ARENA);
  const unsigned char *first = ref_find(hay, n, needle, m, 0), *last = ref_find(hay, n, needle, m, 1);
  for (int i = 0; avxbuf_kernel_list[i]; i++) {
    const avxbuf_kernel *k = avxbuf_kernel_list[i];
    if (!avxbuf_kernel_available(k)) continue;
    if (k->find(hay, n, needle, m) != first || k->rfind(hay, n, needle, m) != last) abort();
  }
  /* split's batches (src/kernels/offsets.c): the first k offsets of one byte. */
  static size_t got[80];
  size_t k = 1 + msel % 80, want = 0, found = avxbuf_byte_offsets(hay, n, needle[0], got, k);
  for (size_t i = 0; i < n && want < k; i++)
    if (hay[i] == needle[0] && (want >= found || got[want++] != i)) abort();
  if (found != want) abort();
  if (memcmp(arena, expect, ARENA) != 0) abort();   /* searches only read */
}

static uint32_t take(const uint8_t **p, size_t *left, int bytes)
{
  uint32_t v = 0;
  for (int i = 0; i < bytes; i++) {
    v = v << 8 | (*left ? **p : 0);
    if (*left) { (*p)++; (*left)--; }
  }
  return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  const uint8_t *p = data;
  size_t left = size;
  uint32_t op = take(&p, &left, 1), knobs = take(&p, &left, 2);
  size_t n = take(&p, &left, 3) % MAX_N;
  size_t d = take(&p, &left, 2) % (ARENA - n), s = take(&p, &left, 2) % (ARENA - n);
  int byte = (int)take(&p, &left, 1);

  /* Knobs: level, width, thresholds small enough for every path to be hit. */
  avxbuf_state st;
  memset(&st, 0, sizeof st);
  st.requested = avxbuf_settings_unset();
  st.requested.v[K_USE_AVX] = knobs & 3;
  st.requested.v[K_MAX_VECTOR_SIZE] = (long long[]){ 16, 32, 64, 64 }[(knobs >> 2) & 3];
  st.requested.v[K_AVX3_THRESHOLD] = (knobs >> 4) & 1 ? 512 : 0;
  st.requested.v[K_VECTOR_ZEROING] = (knobs >> 5) & 1;
  st.requested.v[K_REP_MOVSB_THRESHOLD] = (knobs >> 6) & 1 ? 700 : 0;
  st.requested.v[K_REP_STOSB_THRESHOLD] = (knobs >> 7) & 1 ? 900 : 0;
  st.requested.v[K_NONTEMPORAL_THRESHOLD] = (knobs >> 8) & 1 ? 1500 : 0;
  st.requested.v[K_KERNEL] = (knobs >> 9) & 7 ? KERNEL_AUTO : KERNEL_LIBC;
  avxbuf_state_resolve(&st);

  for (size_t i = 0; i < ARENA; i++) arena[i] = (unsigned char)(i * 131 + (i >> 9) + 7);
  if (op & 4) {
    search(n, knobs, (uint32_t)d, s, byte, p, left);
    return 0;
  }
  if (left) memcpy(arena + s, p, left < n ? left : n);
  memcpy(expect, arena, ARENA);

  if (op & 1) {
    /* copy: in the arena (any overlap) or from a separate block */
    avxbuf_overlap ov = OV_NONE;
    if (d != s && (d > s ? d - s : s - d) < n) ov = d > s ? OV_BACKWARD : OV_FORWARD;
    ref_copy(expect, d, s, n);
    const avxbuf_kernel *k = avxbuf_pick_copy(&st.plan, n, ov);
    if (k->copy_large != NULL) {   /* its copy past the size tests, at every size */
      memcpy(before, arena, ARENA);
      k->copy_large(arena + d, arena + s, n);
      if (memcmp(arena, expect, ARENA) != 0) abort();
      memcpy(arena, before, ARENA);
    }
    k->copy(arena + d, arena + s, n);
  } else {
    memset(expect + d, (op & 2) ? byte : 0, n);
    avxbuf_pick_fill(&st.plan, n, (op & 2) ? byte : 0)->fill(arena + d, (op & 2) ? byte : 0, n);
  }
  if (memcmp(arena, expect, ARENA) != 0) abort();
  return 0;
}
