/* From settings to kernels: the effective settings of one Lua state, and
 * the kernel each operation uses at each size. */
#ifndef AVXBUF_DISPATCH_H
#define AVXBUF_DISPATCH_H

#include <stddef.h>
#include <stdint.h>
#include "kernels/kernels.h"
#include "kernels/small.h"
#include "core/cpu.h"
#include "core/measured.h"
#include "core/policy.h"
#include "core/settings.h"

/* What this process runs on: detected and decided once, for each answer a
 * measurement may give (measured.h); or a machine described to decide{}. */
typedef struct avxbuf_machine {
  const avxbuf_cpu *cpu;
  avxbuf_defaults defaults[3];   /* the policy's, for each avxbuf_stosb_fact (described: its fact's only) */
  int emulated;       /* AVX-512 kernels are SIMDe code: level 3 always allowed */
  int measures;       /* 1: this process's machine, whose fact is avxbuf_stosb_fact_now() */
  avxbuf_stosb_fact fact;        /* else the fact it was described with */
} avxbuf_machine;

const avxbuf_machine *avxbuf_machine_get(void);

/* The defaults that apply on m now. */
const avxbuf_defaults *avxbuf_machine_defaults(const avxbuf_machine *m);

/* Whether this CPU and OS (or, for AVX-512, the emulation) can run k. */
int avxbuf_kernel_available(const avxbuf_kernel *k);

typedef struct avxbuf_family { const avxbuf_kernel *k, *k_nt; } avxbuf_family;

/* The sizes of the one-load way: above the 16 moved inline, up to below
 * every threshold a policy sets by default (glibc's string instructions
 * start above 2048, dl-cacheinfo.h; the others higher). */
#define AVXBUF_CALL_MIN 17
#define AVXBUF_CALL_MAX 2048
/* The second one-load way's largest size: below the string instructions'
 * window on the Zen 5 row (from 32 KiB, policy.c); plans whose kernel
 * changes below that (Intel's glibc threshold for copies, AVX3Threshold's
 * split at 4 KiB) take the size classes below there. */
#define AVXBUF_MID_MAX ((32 << 10) - 1)
/* Classes of 256 bytes: a threshold that is a multiple of 256 ends one. */
#define AVXBUF_CLASS_SHIFT 8
#define AVXBUF_CLASSES ((AVXBUF_MID_MAX >> AVXBUF_CLASS_SHIFT) + 1)

/* Precomputed at configure time so the hot path is a few compares. A
 * threshold of SIZE_MAX means never. */
typedef struct avxbuf_plan {
  avxbuf_family copy_narrow, copy_wide, fill_narrow, fill_wide;
  size_t wide_from, rep_movsb_from, rep_movsb_until, rep_stosb_from, rep_stosb_until;
  size_t nontemporal_copy_from, nontemporal_fill_from, nontemporal_zero_from;
  /* Where stosb_fact_from is not SIZE_MAX, a fill's kernel depends on what
   * this process measures at its first fill of that size (measured.h), with
   * stosb_vector, the default's vector kernel there: where rep stosb was
   * AS_FAST its window ends at rep_stosb_kept_until and zero streams from
   * nontemporal_zero_kept_from. A state resolved after the measurement has
   * these in the fields above. */
  size_t stosb_fact_from, rep_stosb_kept_until, nontemporal_zero_kept_from;
  const avxbuf_kernel *stosb_vector;
  const avxbuf_kernel *string_copy, *string_fill;   /* the rep_* windows' kernels */
  /* Below the first of the thresholds one kernel serves every size: the
   * one the picks below return there, with its function at hand, so that a
   * small operation costs a compare and a call, not a chain of dependent
   * loads through plan, family and kernel, which small copies from C paid
   * for (docs/kernels.md). */
  size_t copy_small_below, fill_small_below;
  const avxbuf_kernel *copy_small, *fill_small;
  avxbuf_copy_fn copy_small_fn;
  avxbuf_fill_fn fill_small_fn;
  /* The largest size each of those serves (below the first threshold), at
   * most AVXBUF_MID_MAX, as an int32_t (-1: none): a caller that checks its
   * own arguments calls the function above for n up to this without the
   * pick. lua/avxbuf/ffi.lua does, reading these four fields, which stay in
   * this order (src/luajit/lluajit.c exports their offsets). */
  int32_t copy_small_upto, fill_small_upto;
  /* The sizes (at most 16) avxbuf_copy/avxbuf_fill move inline: up to 16
   * bytes a vector kernel of the small family runs small.h's scalar moves
   * and nothing else. 0 where none: a move of 0 bytes is none either way. */
  size_t copy_le16_upto, fill_le16_upto;
  /* The sizes the small kernel's call serves, le16_upto < n < small_below,
   * as a start and a span, so that the way to the call is one unsigned
   * compare: every compare on that way is paid by every call
   * (docs/runs/intel-vm-2026-12-03.md, "Where the default's 256 B goes"). */
  size_t copy_call_from, copy_call_span, fill_call_from, fill_call_span;
  /* The function of the kernel the picks give every size from 17 to
   * AVXBUF_CALL_MAX, else NULL: the way to the call for those sizes is then
   * one load, of the function, and compares with constants: each further
   * load of the plan on that way is one more dependent load in every call
   * (what that cost: docs/runs/zen4-vm-2026-12-04.md, "Where the default's
   * 256 B went"). */
  avxbuf_copy_fn copy_call_fn;
  avxbuf_fill_fn fill_call_fn;
  /* The same above AVXBUF_CALL_MAX, up to AVXBUF_MID_MAX: the function of
   * the kernel the picks give all those sizes (for copies its copy_large,
   * as for the size classes below past AVXBUF_LARGE_COPY: avxbuf_copy_from),
   * else NULL. The way through
   * from/span and the small function took four loads of the plan, and a
   * load whose address bits 11:0 match a store still in flight waits on
   * it (4K aliasing): wherever the plan shared its page offset with a
   * copy's last stores, each call waited (docs/runs/zen5-vm-2026-12-05.md,
   * "The default's 4 KiB"). */
  avxbuf_copy_fn copy_mid_fn;
  avxbuf_fill_fn fill_mid_fn;
  /* By size class (n >> AVXBUF_CLASS_SHIFT, from AVXBUF_CALL_MIN to
   * AVXBUF_MID_MAX), the function of the kernel the picks give every size of
   * the class, whatever the overlap (and for fills the byte, and what a
   * measurement to come could answer), else NULL: where a plan's thresholds
   * leave the ways above without a function (avx3_threshold's split, a
   * string-instruction window from 2 KiB), its calls of those sizes take
   * one load more, not the pick's chain of dependent loads through plan,
   * family and kernel. A plan split at 512 copied 1-4 KiB at 0.62-0.79x its
   * kernel's row through the pick (docs/runs/zen5-vm-2026-12-06.md). The
   * ways above stay first: an indexed load in their place, whose address
   * waits on n, cost the default's 256 B copies up to 0.3 of their time
   * there (the same file). */
  avxbuf_copy_fn copy_class_fn[AVXBUF_CLASSES];
  avxbuf_fill_fn fill_class_fn[AVXBUF_CLASSES];
  /* avxbuf_pick_find's kernels' functions below and from wide_from, so
   * that no load on a search's way to its call waits on another, as on a
   * copy's; the pick's chain through family and kernel did. */
  avxbuf_find_fn find_narrow_fn, find_wide_fn;
  avxbuf_rfind_fn rfind_narrow_fn, rfind_wide_fn;
} avxbuf_plan;

typedef struct avxbuf_state {
  avxbuf_settings at_load;     /* what AVXBUF_OPTIONS set; reset() returns here */
  avxbuf_settings requested;   /* AVXBUF_UNSET where the default applies */
  avxbuf_settings effective;
  avxbuf_stosb_fact fact;      /* what had been measured when it was resolved */
  avxbuf_plan plan;
} avxbuf_state;

/* Knobs from AVXBUF_OPTIONS (NULL: none), warnings through warn. */
void avxbuf_state_init(avxbuf_state *st, const char *options, avxbuf_warn_fn warn, void *ud);
/* Back to the settings of load time. */
void avxbuf_state_reset(avxbuf_state *st);
/* Recomputes effective settings and plan from requested ones, for this
 * machine or (_on) any other: what the policy would pick there. */
void avxbuf_state_resolve(avxbuf_state *st);
void avxbuf_state_resolve_on(avxbuf_state *st, const avxbuf_machine *m);
/* Every knob unset (the policy's defaults), resolved for m: what cpu()
 * and decide() report as the default. */
void avxbuf_state_default_on(avxbuf_state *st, const avxbuf_machine *m);
/* Resolves st again if this process has measured what its plan waited on,
 * so that its settings say what runs; the binding calls it before it
 * reports them. */
void avxbuf_state_current(avxbuf_state *st);

typedef enum avxbuf_overlap {
  OV_NONE,        /* disjoint ranges */
  OV_FORWARD,     /* overlapping, but an ascending copy is safe */
  OV_BACKWARD     /* dst inside (src, src + n): must copy descending */
} avxbuf_overlap;

static inline avxbuf_overlap avxbuf_overlap_of(const void *d, const void *s, size_t n)
{
  uintptr_t a = (uintptr_t)d, b = (uintptr_t)s;
  if (a == b || (a > b ? a - b : b - a) >= n) return OV_NONE;
  return a > b ? OV_BACKWARD : OV_FORWARD;
}

/* The kernels for an operation of n bytes; a copy into the same memory
 * (a == b above) is treated as disjoint: every kernel handles it. */
static inline const avxbuf_kernel *avxbuf_pick_copy(const avxbuf_plan *p, size_t n, avxbuf_overlap ov)
{
  if (n < p->copy_small_below) return p->copy_small;
  const avxbuf_family *f = n >= p->wide_from ? &p->copy_wide : &p->copy_narrow;
  if (n >= p->nontemporal_copy_from && ov == OV_NONE) return f->k_nt;
  if (n >= p->rep_movsb_from && n < p->rep_movsb_until && ov != OV_BACKWARD) return p->string_copy;
  return f->k;
}

/* The fill's pick where a measurement to come answered "as fast" (kept) or
 * not. */
static inline const avxbuf_kernel *avxbuf_pick_fill_kept(const avxbuf_plan *p, size_t n, int byte, int kept)
{
  if (n < p->fill_small_below) return p->fill_small;
  const avxbuf_family *f = n >= p->wide_from ? &p->fill_wide : &p->fill_narrow;
  if (n >= (byte ? p->nontemporal_fill_from : kept ? p->nontemporal_zero_kept_from : p->nontemporal_zero_from))
    return f->k_nt;
  if (n >= p->rep_stosb_from && n < (kept ? p->rep_stosb_kept_until : p->rep_stosb_until)) return p->string_fill;
  return f->k;
}

/* Zero is a fill of byte 0, which streams from a threshold of its own. */
static inline const avxbuf_kernel *avxbuf_pick_fill(const avxbuf_plan *p, size_t n, int byte)
{
  int kept = p->stosb_fact_from != SIZE_MAX && avxbuf_stosb_fact_now() == STOSB_AS_FAST;
  return avxbuf_pick_fill_kept(p, n, byte, kept);
}

/* Search reads only: the copy family's temporal kernel of that size. */
static inline const avxbuf_kernel *avxbuf_pick_find(const avxbuf_plan *p, size_t n)
{
  return (n >= p->wide_from ? &p->copy_wide : &p->copy_narrow)->k;
}

/* The search function of avxbuf_pick_find's kernel (reverse: from the
 * end), read from the plan's own fields (avxbuf_plan). */
static inline avxbuf_find_fn avxbuf_find_of(const avxbuf_plan *p, size_t n, int reverse)
{
  if (reverse) return n >= p->wide_from ? p->rfind_wide_fn : p->rfind_narrow_fn;
  return n >= p->wide_from ? p->find_wide_fn : p->find_narrow_fn;
}

/* An operation of n bytes with the kernel the plan picks: an inline fast
 * path for the sizes below the plan's first threshold, and the slow path
 * out of line (avxbuf_copy_more, which picks), as LuaJIT's lj_buf_more.
 * The fast path keeps the ways measured to pay
 * (docs/runs/zen5-vm-2026-12-05.md, "The small path in two parts"). Sizes
 * from 2 KiB to 32 KiB test their range with constants before any load, so
 * that they load the plan once: a load whose address bits 11:0 match a
 * store still in flight waits on it (4K aliasing, in Intel's optimization
 * manual). The small kernel's call for 17 B-2 KiB is marked likely, so that
 * a caller's loop of them stays one block. Up to 16 bytes a vector kernel runs
 * small.h's scalar moves and nothing else, so they run here, without the
 * call, which for the small pieces buf:put assembles costs more than the
 * move. */
void avxbuf_copy_more(const avxbuf_plan *p, void *d, const void *s, size_t n, avxbuf_overlap ov);
void avxbuf_fill_more(const avxbuf_plan *p, void *d, int byte, size_t n);

static inline void avxbuf_copy(const avxbuf_plan *p, void *d, const void *s, size_t n, avxbuf_overlap ov)
{
  avxbuf_copy_fn f;
  if (__builtin_expect(n - (AVXBUF_CALL_MAX + 1) <= AVXBUF_MID_MAX - (AVXBUF_CALL_MAX + 1), 0)) {
    f = p->copy_mid_fn;
    if (f != NULL) { f(d, s, n); return; }
  }
  f = p->copy_call_fn;
  if (__builtin_expect(f != NULL && n - AVXBUF_CALL_MIN <= AVXBUF_CALL_MAX - AVXBUF_CALL_MIN, 1)) {
    f(d, s, n);
    return;
  }
  if (n - AVXBUF_CALL_MIN <= AVXBUF_MID_MAX - AVXBUF_CALL_MIN) {
    f = p->copy_class_fn[n >> AVXBUF_CLASS_SHIFT];
    if (f != NULL) { f(d, s, n); return; }
  }
  if (n - p->copy_call_from < p->copy_call_span) { p->copy_small_fn(d, s, n); return; }
  if (n <= p->copy_le16_upto) { copy_le16((unsigned char *)d, (const unsigned char *)s, n); return; }
  avxbuf_copy_more(p, d, s, n, ov);
}

static inline void avxbuf_fill(const avxbuf_plan *p, void *d, int byte, size_t n)
{
  avxbuf_fill_fn f;
  if (__builtin_expect(n - (AVXBUF_CALL_MAX + 1) <= AVXBUF_MID_MAX - (AVXBUF_CALL_MAX + 1), 0)) {
    f = p->fill_mid_fn;
    if (f != NULL) { f(d, byte, n); return; }
  }
  f = p->fill_call_fn;
  if (__builtin_expect(f != NULL && n - AVXBUF_CALL_MIN <= AVXBUF_CALL_MAX - AVXBUF_CALL_MIN, 1)) {
    f(d, byte, n);
    return;
  }
  if (n - AVXBUF_CALL_MIN <= AVXBUF_MID_MAX - AVXBUF_CALL_MIN) {
    f = p->fill_class_fn[n >> AVXBUF_CLASS_SHIFT];
    if (f != NULL) { f(d, byte, n); return; }
  }
  if (n - p->fill_call_from < p->fill_call_span) { p->fill_small_fn(d, byte, n); return; }
  if (n <= p->fill_le16_upto) { fill_le16((unsigned char *)d, byte, n); return; }
  avxbuf_fill_more(p, d, byte, n);
}

#endif
