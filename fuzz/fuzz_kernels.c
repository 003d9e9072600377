/* libFuzzer: every kernel, through the real dispatch, against a byte-wise
 * reference, with random size, offsets, overlap and knobs; 64 guard bytes
 * around the destination range (and the whole arena) must not change.
 * Built twice: native (levels the CPU allows) and emulated (AVX-512 too). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "dispatch.h"

#define MAX_N (16 * 1024)   /* above every threshold the harness sets */
#define ARENA (2 * MAX_N + 4 * 1024)

static unsigned char arena[ARENA], expect[ARENA];

static void ref_copy(unsigned char *base, size_t d, size_t s, size_t n)
{
  unsigned char *tmp = malloc(n ? n : 1);
  for (size_t i = 0; i < n; i++) tmp[i] = base[s + i];
  for (size_t i = 0; i < n; i++) base[d + i] = tmp[i];
  free(tmp);
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
  for (int k = 0; k < K_COUNT; k++) st.requested.v[k] = AVXBUF_UNSET;
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
  if (left) memcpy(arena + s, p, left < n ? left : n);
  memcpy(expect, arena, ARENA);

  if (op & 1) {
    /* copy: in the arena (any overlap) or from a separate block */
    avxbuf_overlap ov = OV_NONE;
    if (d != s && (d > s ? d - s : s - d) < n) ov = d > s ? OV_BACKWARD : OV_FORWARD;
    ref_copy(expect, d, s, n);
    avxbuf_pick_copy(&st.plan, n, ov)->copy(arena + d, arena + s, n);
  } else {
    memset(expect + d, (op & 2) ? byte : 0, n);
    avxbuf_pick_fill(&st.plan, n)->fill(arena + d, (op & 2) ? byte : 0, n);
  }
  if (memcmp(arena, expect, ARENA) != 0) abort();
  return 0;
}
