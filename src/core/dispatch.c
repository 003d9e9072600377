#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include "core/dispatch.h"
#include "core/op.h"

#ifdef AVXBUF_EMULATE_AVX512
#define EMULATED 1
#else
#define EMULATED 0
#endif

const char *const avxbuf_op_names[OP_COUNT + 1] = {
  [OP_COPY] = "copy", [OP_ZERO] = "zero", [OP_FILL] = "fill", [OP_FIND] = "find", [OP_COUNT] = NULL,
};

static avxbuf_machine machine;
static pthread_once_t machine_once = PTHREAD_ONCE_INIT;

static void machine_init(void)
{
  machine.cpu = avxbuf_cpu_get();
  for (int f = 0; f < 3; f++) avxbuf_policy(machine.cpu, (avxbuf_stosb_fact)f, &machine.defaults[f]);
  machine.emulated = EMULATED;
  machine.measures = 1;
}

const avxbuf_machine *avxbuf_machine_get(void)
{
  pthread_once(&machine_once, machine_init);
  return &machine;
}

static avxbuf_stosb_fact fact_on(const avxbuf_machine *m)
{
  return m->measures ? avxbuf_stosb_fact_now() : m->fact;
}

const avxbuf_defaults *avxbuf_machine_defaults(const avxbuf_machine *m)
{
  return &m->defaults[fact_on(m)];
}

/* The CPUID features this CPU has, as kernels state their needs. */
static uint32_t features_of(const avxbuf_cpu *cpu)
{
  uint32_t bits = 0;
  for (int f = 0; f < F_COUNT; f++)
    if (cpu->has[f]) bits |= AVXBUF_FEATURE(f);
  return bits;
}

/* Whether machine m can run k: the CPU has the features it needs and the OS
 * saves the registers of its level (max_use_avx says both); the emulated
 * AVX-512 kernels are SIMDe's plain C. */
static int runs_on(const avxbuf_kernel *k, const avxbuf_machine *m)
{
  if (k->level == 3 && m->emulated) return 1;
  return k->level <= m->cpu->max_use_avx && (k->needs & ~features_of(m->cpu)) == 0;
}

int avxbuf_kernel_available(const avxbuf_kernel *k)
{
  return runs_on(k, avxbuf_machine_get());
}

/* The kernel of a role and register width (0: any) of the highest level up
 * to `level` that m runs, the first listed among equals; NULL if none. */
static const avxbuf_kernel *best_of(const avxbuf_machine *m, avxbuf_kernel_role role, int level, int bits)
{
  const avxbuf_kernel *best = NULL;
  for (int i = 0; avxbuf_kernel_list[i]; i++) {
    const avxbuf_kernel *k = avxbuf_kernel_list[i];
    if (k->role == role && (bits == 0 || k->vector_bits == bits) && k->level <= level && runs_on(k, m)
        && (best == NULL || k->level > best->level))
      best = k;
  }
  return best;
}

/* The C library's kernel: every binary has it, and every rule falls back
 * on it (no vector kernels, no string instructions outside x86). */
static const avxbuf_kernel *libc_kernel(const avxbuf_machine *m)
{
  return best_of(m, KR_LIBC, -1, 0);
}

/* The family for a level and register width (width <= the level's): the
 * 32-byte family at use_avx=3 is AVX-512's own, at 2 AVX2's. */
static avxbuf_family family(const avxbuf_machine *m, long long use_avx, long long width)
{
  const avxbuf_kernel *k = best_of(m, KR_TEMPORAL, (int)use_avx, (int)(8 * width));
  const avxbuf_kernel *k_nt = best_of(m, KR_STREAMING, (int)use_avx, (int)(8 * width));
  if (k == NULL || k_nt == NULL) k = k_nt = libc_kernel(m);
  return (avxbuf_family){ k, k_nt };
}

/* The string-instruction kernel of a role, or the C library's (its window
 * is then never open: no ERMS means thresholds of 0). */
static const avxbuf_kernel *string_kernel(const avxbuf_machine *m, avxbuf_kernel_role role)
{
  const avxbuf_kernel *k = best_of(m, role, -1, 0);
  return k ? k : libc_kernel(m);
}

static long long requested_or(const avxbuf_state *st, int k, long long dflt)
{
  return st->requested.v[k] != AVXBUF_UNSET ? st->requested.v[k] : dflt;
}

/* A threshold in bytes (0: never) as a size; beyond SIZE_MAX (a 32-bit
 * size_t) it is never reached either. */
static size_t threshold_size(long long threshold)
{
  return threshold == 0 || (unsigned long long)threshold > SIZE_MAX ? SIZE_MAX : (size_t)threshold;
}

static size_t min_size(size_t a, size_t b) { return a < b ? a : b; }
static size_t max_size(size_t a, size_t b) { return a > b ? a : b; }

/* glibc takes the string instructions for sizes above its thresholds (`ja`
 * after the compare in memmove- and memset-vec-unaligned-erms.S), so a
 * threshold of t means from t + 1 here too. */
static size_t above(long long threshold)
{
  size_t t = threshold_size(threshold);
  return t == SIZE_MAX ? SIZE_MAX : t + 1;
}

static int32_t small_upto(size_t below)
{
  return below == 0 ? -1 : (int32_t)min_size(below - 1, AVXBUF_MID_MAX);
}

static size_t le16_upto(const avxbuf_kernel *small, size_t below)
{
  if (small->vector_bits <= 0 || below == 0) return 0;   /* libc: unknown moves */
  return min_size(below - 1, 16);
}

/* Below the first threshold: the family avxbuf_pick_* would take (the narrow
 * one when avx3_threshold splits the sizes), and never its streaming or
 * string-instruction kernel. */
static void plan_small(avxbuf_plan *p)
{
  size_t split_at = p->wide_from > 0 ? p->wide_from : SIZE_MAX;
  p->copy_small = (p->wide_from > 0 ? &p->copy_narrow : &p->copy_wide)->k;
  p->fill_small = (p->wide_from > 0 ? &p->fill_narrow : &p->fill_wide)->k;
  p->copy_small_below = min_size(split_at, min_size(p->nontemporal_copy_from, p->rep_movsb_from));
  p->fill_small_below = min_size(min_size(split_at, p->rep_stosb_from),
                                 min_size(p->nontemporal_fill_from, p->nontemporal_zero_from));
  p->copy_small_fn = p->copy_small->copy;
  p->fill_small_fn = p->fill_small->fill;
  p->copy_small_upto = small_upto(p->copy_small_below);
  p->fill_small_upto = small_upto(p->fill_small_below);
  p->copy_le16_upto = le16_upto(p->copy_small, p->copy_small_below);
  p->fill_le16_upto = le16_upto(p->fill_small, p->fill_small_below);
  p->copy_call_from = p->copy_le16_upto + 1;
  p->fill_call_from = p->fill_le16_upto + 1;
  p->copy_call_span = p->copy_small_below > p->copy_call_from ? p->copy_small_below - p->copy_call_from : 0;
  p->fill_call_span = p->fill_small_below > p->fill_call_from ? p->fill_small_below - p->fill_call_from : 0;
}

/* Whether every overlap's pick of a copy of a bytes and of b bytes is one
 * kernel. */
static int copies_agree(const avxbuf_plan *p, size_t a, size_t b)
{
  const avxbuf_kernel *k = avxbuf_pick_copy(p, a, OV_NONE);
  return k == avxbuf_pick_copy(p, a, OV_FORWARD) && k == avxbuf_pick_copy(p, a, OV_BACKWARD)
         && k == avxbuf_pick_copy(p, b, OV_NONE) && k == avxbuf_pick_copy(p, b, OV_FORWARD)
         && k == avxbuf_pick_copy(p, b, OV_BACKWARD);
}

/* The same for fills of a and b bytes, whatever the byte and the answer of
 * a measurement to come. */
static int fills_agree(const avxbuf_plan *p, size_t a, size_t b)
{
  const avxbuf_kernel *f = avxbuf_pick_fill_kept(p, a, 1, 0);
  int answers = p->stosb_fact_from != SIZE_MAX ? 2 : 1;
  for (int kept = 0; kept < answers; kept++)
    for (int byte = 0; byte <= 1; byte++)
      if (avxbuf_pick_fill_kept(p, a, byte, kept) != f || avxbuf_pick_fill_kept(p, b, byte, kept) != f) return 0;
  return 1;
}

/* Whether one kernel serves every size from lo to hi (agree: copies_agree
 * or fills_agree): the picks change only at the sizes in b (nb of them),
 * so it does where they agree at lo and at each of those in lo < b <= hi. */
static int one_kernel(const avxbuf_plan *p, int (*agree)(const avxbuf_plan *, size_t, size_t), const size_t *b,
                      size_t nb, size_t lo, size_t hi)
{
  if (!agree(p, lo, lo)) return 0;
  for (size_t i = 0; i < nb; i++)
    if (b[i] > lo && b[i] <= hi && !agree(p, lo, b[i])) return 0;
  return 1;
}

/* A way of avxbuf_copy (dispatch.h): the function of the one kernel the
 * picks give every copy from lo to hi bytes, else NULL; above
 * AVXBUF_LARGE_COPY its copy_large, which does not test again for the
 * sizes the way has ruled out: through copy, the default's copies of 4 KiB
 * with dst off a line ran slower than that kernel's own row
 * (docs/runs/zen5-vm-2026-12-07.md, "The second way past the kernel's entry"). */
static avxbuf_copy_fn copy_way(const avxbuf_plan *p, size_t lo, size_t hi)
{
  const size_t b[] = { p->copy_small_below, p->wide_from, p->nontemporal_copy_from, p->rep_movsb_from,
                       p->rep_movsb_until };
  return one_kernel(p, copies_agree, b, sizeof b / sizeof b[0], lo, hi)
         ? avxbuf_copy_from(avxbuf_pick_copy(p, lo, OV_NONE), lo) : NULL;
}

/* The same for avxbuf_fill, below stosb_fact_from only: avxbuf_fill_more
 * takes the measurement. */
static avxbuf_fill_fn fill_way(const avxbuf_plan *p, size_t lo, size_t hi)
{
  const size_t b[] = { p->fill_small_below, p->wide_from, p->nontemporal_fill_from, p->nontemporal_zero_from,
                       p->nontemporal_zero_kept_from, p->rep_stosb_from, p->rep_stosb_until, p->rep_stosb_kept_until };
  return hi < p->stosb_fact_from && one_kernel(p, fills_agree, b, sizeof b / sizeof b[0], lo, hi)
         ? avxbuf_pick_fill_kept(p, lo, 1, 0)->fill : NULL;
}

/* Every way, whichever kernel it calls: a plan split by avx3_threshold
 * below 2 KiB has one kernel for every size of the second one-load way,
 * and through the size classes instead its copies there ran slower than
 * that kernel's own row (docs/runs/zen5-vm-2026-12-07.md, "The ways of a
 * split plan"). And the search's functions either side of the split. */
static void plan_ways(avxbuf_plan *p)
{
  p->find_narrow_fn = p->copy_narrow.k->find;
  p->find_wide_fn = p->copy_wide.k->find;
  p->rfind_narrow_fn = p->copy_narrow.k->rfind;
  p->rfind_wide_fn = p->copy_wide.k->rfind;
  p->copy_call_fn = copy_way(p, AVXBUF_CALL_MIN, AVXBUF_CALL_MAX);
  p->fill_call_fn = fill_way(p, AVXBUF_CALL_MIN, AVXBUF_CALL_MAX);
  p->copy_mid_fn = copy_way(p, AVXBUF_CALL_MAX + 1, AVXBUF_MID_MAX);
  p->fill_mid_fn = fill_way(p, AVXBUF_CALL_MAX + 1, AVXBUF_MID_MAX);
  for (size_t c = 0; c < AVXBUF_CLASSES; c++) {
    size_t lo = max_size(c << AVXBUF_CLASS_SHIFT, AVXBUF_CALL_MIN);
    size_t hi = min_size(((c + 1) << AVXBUF_CLASS_SHIFT) - 1, AVXBUF_MID_MAX);
    p->copy_class_fn[c] = copy_way(p, lo, hi);
    p->fill_class_fn[c] = fill_way(p, lo, hi);
  }
}

static void plan(avxbuf_state *st, const avxbuf_machine *m)
{
  const long long *e = st->effective.v;
  avxbuf_plan *p = &st->plan;
  p->string_copy = string_kernel(m, KR_STRING_COPY);
  p->string_fill = string_kernel(m, KR_STRING_FILL);
  if (e[K_KERNEL] == KERNEL_LIBC) {
    const avxbuf_kernel *libc = libc_kernel(m);
    p->copy_narrow = p->copy_wide = p->fill_narrow = p->fill_wide = (avxbuf_family){ libc, libc };
    p->wide_from = p->rep_movsb_from = p->rep_movsb_until = p->rep_stosb_from = p->rep_stosb_until = SIZE_MAX;
    p->nontemporal_copy_from = p->nontemporal_fill_from = p->nontemporal_zero_from = SIZE_MAX;
    plan_small(p);
    return;
  }
  avxbuf_family wide = family(m, e[K_USE_AVX], e[K_MAX_VECTOR_SIZE]);
  /* HotSpot's AVX3Threshold: below it, 32-byte vectors even at UseAVX=3. */
  int split = e[K_USE_AVX] == 3 && e[K_MAX_VECTOR_SIZE] == 64 && e[K_AVX3_THRESHOLD] > 0;
  avxbuf_family narrow = split ? family(m, 3, 32) : wide;
  p->copy_wide = wide;
  p->copy_narrow = narrow;
  /* UseXMMForObjInit off: no ymm/zmm stores for zero and fill; 128-bit
   * stores run at licence 0, and rep stosb keeps its window. */
  avxbuf_family xmm = family(m, e[K_USE_AVX], 16);
  p->fill_wide = e[K_VECTOR_ZEROING] ? wide : xmm;
  p->fill_narrow = e[K_VECTOR_ZEROING] ? narrow : xmm;
  p->wide_from = split ? threshold_size(e[K_AVX3_THRESHOLD]) : 0;
  p->rep_movsb_from = above(e[K_REP_MOVSB_THRESHOLD]);
  p->rep_movsb_until = threshold_size(e[K_REP_MOVSB_STOP_THRESHOLD]);   /* 0: no end */
  p->rep_stosb_from = above(e[K_REP_STOSB_THRESHOLD]);
  p->rep_stosb_until = threshold_size(e[K_REP_STOSB_STOP_THRESHOLD]);   /* 0: no end */
  p->nontemporal_copy_from = threshold_size(e[K_NONTEMPORAL_THRESHOLD]);
  p->nontemporal_fill_from = threshold_size(e[K_MEMSET_NONTEMPORAL_THRESHOLD]);
  p->nontemporal_zero_from = threshold_size(e[K_ZERO_NONTEMPORAL_THRESHOLD]);
  plan_small(p);
}

/* The slow path: every size and plan the fast path leaves. */
void avxbuf_copy_more(const avxbuf_plan *p, void *d, const void *s, size_t n, avxbuf_overlap ov)
{
  const avxbuf_kernel *k = avxbuf_pick_copy(p, n, ov);
  if (n <= 16 && k->vector_bits > 0) copy_le16((unsigned char *)d, (const unsigned char *)s, n);
  else avxbuf_copy_from(k, n)(d, s, n);
}

void avxbuf_fill_more(const avxbuf_plan *p, void *d, int byte, size_t n)
{
  if (n >= p->stosb_fact_from) {   /* (the fill below writes over what the measurement leaves) */
    size_t at = p->stosb_fact_from;
    avxbuf_stosb_measure((unsigned char *)d, at, p->string_fill, p->stosb_vector);
  }
  const avxbuf_kernel *k = avxbuf_pick_fill(p, n, byte);
  if (n <= 16 && k->vector_bits > 0) fill_le16((unsigned char *)d, byte, n);
  else k->fill(d, byte, n);
}

void avxbuf_state_resolve(avxbuf_state *st)
{
  avxbuf_state_resolve_on(st, avxbuf_machine_get());
}

/* The effective settings e of st's requested ones on m, where d are the
 * policy's defaults. */
static void effective(const avxbuf_state *st, const avxbuf_machine *m, const avxbuf_defaults *d, long long *e)
{
  /* Lower what the CPU and OS cannot run (HotSpot clamps UseAVX the same way).
   * The emulated build can always run level 3: its AVX-512 kernels are SIMDe. */
  long long level = requested_or(st, K_USE_AVX, d->use_avx);
  if (level > m->cpu->max_use_avx && !(m->emulated && level == 3))
    level = m->cpu->max_use_avx;
  long long width = avxbuf_level_width(level);
  /* The policy's width where the level is its own (a row may narrow it);
   * the level's otherwise. */
  long long mvs = requested_or(st, K_MAX_VECTOR_SIZE, level == d->use_avx ? d->max_vector_size : width);
  int erms = m->cpu->has[F_ERMS];

  e[K_USE_AVX] = level;
  e[K_MAX_VECTOR_SIZE] = mvs < width ? mvs : width;
  e[K_AVX3_THRESHOLD] = requested_or(st, K_AVX3_THRESHOLD, d->avx3_threshold);
  e[K_VECTOR_ZEROING] = requested_or(st, K_VECTOR_ZEROING, d->vector_zeroing);
  e[K_REP_MOVSB_THRESHOLD] = erms ? requested_or(st, K_REP_MOVSB_THRESHOLD, d->rep_movsb_threshold) : 0;
  e[K_REP_MOVSB_STOP_THRESHOLD] =
    erms ? requested_or(st, K_REP_MOVSB_STOP_THRESHOLD, d->rep_movsb_stop_threshold) : 0;
  e[K_REP_STOSB_THRESHOLD] = erms ? requested_or(st, K_REP_STOSB_THRESHOLD, d->rep_stosb_threshold) : 0;
  e[K_REP_STOSB_STOP_THRESHOLD] =
    erms ? requested_or(st, K_REP_STOSB_STOP_THRESHOLD, d->rep_stosb_stop_threshold) : 0;
  e[K_NONTEMPORAL_THRESHOLD] = requested_or(st, K_NONTEMPORAL_THRESHOLD, d->nontemporal_threshold);
  /* A copy of n bytes streams 2n through the cache, a fill n: unless told
   * (glibc 2.40's x86_memset_non_temporal_threshold), fills stream from
   * the policy's multiple (twice, or more: policy.c) of the copy threshold
   * (0, or past 2^62: never). */
  long long nt = e[K_NONTEMPORAL_THRESHOLD], f = d->fill_nontemporal_factor;
  e[K_MEMSET_NONTEMPORAL_THRESHOLD] =
    requested_or(st, K_MEMSET_NONTEMPORAL_THRESHOLD, nt > AVXBUF_MAX_BYTES / f ? 0 : f * nt);
  /* Zero streams with a told fills' threshold (glibc's memset threshold
   * serves both); else from twice the copies' (fills' too, unless the
   * policy moved theirs), or, where the policy says so (AMD), with copies. */
  int told = st->requested.v[K_MEMSET_NONTEMPORAL_THRESHOLD] != AVXBUF_UNSET;
  long long zero = told ? e[K_MEMSET_NONTEMPORAL_THRESHOLD] : d->zero_streams_as_copies ? nt
                 : nt > AVXBUF_MAX_BYTES / 2 ? 0 : 2 * nt;
  e[K_ZERO_NONTEMPORAL_THRESHOLD] = requested_or(st, K_ZERO_NONTEMPORAL_THRESHOLD, zero);
  e[K_KERNEL] = requested_or(st, K_KERNEL, KERNEL_AUTO);
}

void avxbuf_state_resolve_on(avxbuf_state *st, const avxbuf_machine *m)
{
  avxbuf_stosb_fact fact = fact_on(m);
  const avxbuf_defaults *d = &m->defaults[fact];
  avxbuf_plan *p = &st->plan;
  st->fact = fact;
  effective(st, m, d, st->effective.v);
  plan(st, m);
  /* Where a measurement is still to come and would move this state's
   * window, its plan holds the other answer's ends too, and the kernel the
   * measurement weighs rep stosb against: the default's, whatever this
   * state's knobs, since the answer serves every state. */
  p->stosb_fact_from = SIZE_MAX;
  p->rep_stosb_kept_until = p->rep_stosb_until;
  p->nontemporal_zero_kept_from = p->nontemporal_zero_from;
  p->stosb_vector = NULL;
  if (m->measures && fact == STOSB_UNMEASURED && d->rep_stosb_probe_size > 0 && m->cpu->has[F_ERMS]
      && st->effective.v[K_KERNEL] == KERNEL_AUTO) {
    avxbuf_settings kept = avxbuf_settings_unset();   /* (every knob effective() sets) */
    effective(st, m, &m->defaults[STOSB_AS_FAST], kept.v);
    p->rep_stosb_kept_until = threshold_size(kept.v[K_REP_STOSB_STOP_THRESHOLD]);
    p->nontemporal_zero_kept_from = threshold_size(kept.v[K_ZERO_NONTEMPORAL_THRESHOLD]);
    if (p->rep_stosb_kept_until != p->rep_stosb_until || p->nontemporal_zero_kept_from != p->nontemporal_zero_from) {
      p->stosb_fact_from = threshold_size(d->rep_stosb_probe_size);
      p->stosb_vector = family(m, d->use_avx, d->max_vector_size).k;
    }
  }
  plan_ways(p);
}

void avxbuf_state_current(avxbuf_state *st)
{
  if (st->fact != avxbuf_stosb_fact_now()) avxbuf_state_resolve(st);
}

void avxbuf_state_default_on(avxbuf_state *st, const avxbuf_machine *m)
{
  memset(st, 0, sizeof *st);
  st->at_load = st->requested = avxbuf_settings_unset();
  avxbuf_state_resolve_on(st, m);
}

void avxbuf_state_init(avxbuf_state *st, const char *options, avxbuf_warn_fn warn, void *ud)
{
  st->at_load = avxbuf_settings_unset();
  if (options) avxbuf_options_parse(&st->at_load, options, warn, ud);
  avxbuf_state_reset(st);
}

void avxbuf_state_reset(avxbuf_state *st)
{
  st->requested = st->at_load;
  avxbuf_state_resolve(st);
}
