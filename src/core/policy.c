/* Which vector width a processor should use by default, and why.
 *
 * Evidence (each rule below names its sources; README has the table):
 * - Intel family 6 model 0x55 (Skylake-SP/X, Cascade Lake, Cooper Lake):
 *   512-bit instructions drop the core's turbo licence, and with it the
 *   clock and SPECjvm2008 xml.transform's score on a Cascade Lake stepping 7
 *   (the report's figures: docs/clock.md); 256-bit zeroing streams still
 *   held licence 1 and only rep stosb released it (OpenJDK PR 8731 /
 *   JDK-8286823). HotSpot avoids 512-bit only on steppings < 5; we avoid
 *   it on every stepping, as glibc, Linux and .NET do.
 * - Cannon/Ice/Tiger/Rocket Lake still drop licence under 512-bit load, less
 *   so: glibc prefers 256-bit on all of them (Prefer_No_AVX512), Linux on
 *   Ice/Tiger Lake (X86_FEATURE_PREFER_YMM), .NET on Cannon Lake. We follow
 *   glibc: AVX2, vector zeroing kept (no report of 256-bit zeroing holding
 *   licence 1 there).
 * - Sapphire/Emerald/Granite Rapids and AMD Zen 4/5 run 512-bit code without
 *   a licence drop: AVX-512, and AVX3Threshold 0, which HotSpot sets on Intel
 *   family 6 with SERIALIZE (and so does avxbuf, beyond the table).
 * - Zen 4 runs a 512-bit operation as two 256-bit halves and stores 32 bytes
 *   a cycle (AMD's Software Optimization Guide for family 19h): a 64-byte
 *   loop gains no bandwidth, and where dst - src is not a multiple of 64
 *   every one of its loads spans two cache lines. It keeps AVX-512's
 *   instructions at 32 bytes (MaxVectorSize 32; the sweeps behind it:
 *   docs/policy.md). */
#include <stdio.h>
#include <string.h>
#include "core/policy.h"

typedef enum { R_BEST, R_LICENCE_SEVERE, R_LICENCE_MILD, R_NO_DROP } rule_id;

static const struct rule {
  int max_use_avx, vector_zeroing;
  long long avx3_threshold;
  const char *name, *text, *source;
} rules[] = {
  [R_BEST] = { 3, 1, 4096, "best",
    NULL, "CPUID and XCR0 of this processor" },
  [R_LICENCE_SEVERE] = { 2, 0, 4096, "licence-severe",
    "512-bit instructions lower this core's turbo licence, and 256-bit zeroing keeps it in licence 1",
    "OpenJDK PR 8731 (JDK-8286823) counters; glibc cpu-features.c; Linux intel.c; .NET codeman.cpp" },
  [R_LICENCE_MILD] = { 2, 1, 4096, "licence-mild",
    "512-bit instructions still lower this core's turbo licence; glibc prefers 256-bit vectors here",
    "glibc sysdeps/x86/cpu-features.c (Prefer_No_AVX512); Linux arch/x86/kernel/cpu/intel.c (PREFER_YMM)" },
  [R_NO_DROP] = { 3, 1, 0, "no-licence-drop",
    "512-bit instructions run here without a turbo licence drop",
    "HotSpot vm_version_x86.cpp (AVX3Threshold 0 with SERIALIZE); glibc's Prefer_No_AVX512 covers Intel only" },
};

/* How a row uses the string instructions: the vendor's rule (below), or a
 * window measured on that processor. */
typedef enum { S_VENDOR, S_FSRM_WINDOW, S_FROM_64K } strings_id;

/* Which turbo-licence counters the core's PMU has (intel/perfmon; Linux
 * tools/perf/pmu-events/arch/x86): core_power.lvl{0,1,2}_turbo_license on
 * Skylake-SP to Rocket Lake, and core_power.throttle on Skylake-SP's die
 * only. Cannon Lake has no published event list. */
typedef enum { LE_NONE, LE_LEVELS, LE_LEVELS_THROTTLE } licence_events_id;
static const char *const licence_event_sets[] = { NULL, "levels", "levels,throttle" };

/* The widest vectors a row's kernels use: the level's, or 32 bytes where a
 * core's datapath is 256 bits wide. */
typedef enum { W_LEVEL, W_YMM } width_id;

typedef struct {
  avxbuf_vendor vendor;
  unsigned family, model_lo, model_hi, stepping_lo, stepping_hi;
  const char *uarch;
  rule_id rule;
  strings_id strings;
  licence_events_id licence_events;
  width_id width;
} cpu_row;

/* First match wins: the one list of models avxbuf knows, licence-affected
 * ones included. Intel display models from Linux intel-family.h; AMD
 * family/model ranges from AMD's revision guides. */
static const cpu_row cpu_table[] = {
  { V_INTEL, 6, 0x55, 0x55, 0, 4, "Skylake-SP/X", R_LICENCE_SEVERE, S_VENDOR, LE_LEVELS_THROTTLE, W_LEVEL },
  { V_INTEL, 6, 0x55, 0x55, 5, 7, "Cascade Lake", R_LICENCE_SEVERE, S_VENDOR, LE_LEVELS_THROTTLE, W_LEVEL },
  { V_INTEL, 6, 0x55, 0x55, 10, 11, "Cooper Lake", R_LICENCE_SEVERE, S_VENDOR, LE_LEVELS_THROTTLE, W_LEVEL },
  { V_INTEL, 6, 0x55, 0x55, 0, 15, "Skylake-SP family (unlisted stepping)", R_LICENCE_SEVERE, S_VENDOR,
    LE_LEVELS_THROTTLE, W_LEVEL },
  { V_INTEL, 6, 0x66, 0x66, 0, 15, "Cannon Lake", R_LICENCE_MILD, S_VENDOR, LE_NONE, W_LEVEL },
  { V_INTEL, 6, 0x6A, 0x6A, 0, 15, "Ice Lake-SP", R_LICENCE_MILD, S_VENDOR, LE_LEVELS, W_LEVEL },
  { V_INTEL, 6, 0x6C, 0x6C, 0, 15, "Ice Lake-D", R_LICENCE_MILD, S_VENDOR, LE_LEVELS, W_LEVEL },
  { V_INTEL, 6, 0x7D, 0x7E, 0, 15, "Ice Lake", R_LICENCE_MILD, S_VENDOR, LE_LEVELS, W_LEVEL },
  { V_INTEL, 6, 0x8C, 0x8D, 0, 15, "Tiger Lake", R_LICENCE_MILD, S_VENDOR, LE_LEVELS, W_LEVEL },
  { V_INTEL, 6, 0xA7, 0xA7, 0, 15, "Rocket Lake", R_LICENCE_MILD, S_VENDOR, LE_LEVELS, W_LEVEL },
  { V_INTEL, 6, 0x8F, 0x8F, 0, 15, "Sapphire Rapids", R_NO_DROP, S_VENDOR, LE_NONE, W_LEVEL },
  { V_INTEL, 6, 0xCF, 0xCF, 0, 15, "Emerald Rapids", R_NO_DROP, S_VENDOR, LE_NONE, W_LEVEL },
  { V_INTEL, 6, 0xAD, 0xAE, 0, 15, "Granite Rapids", R_NO_DROP, S_VENDOR, LE_NONE, W_LEVEL },
  { V_INTEL, 6, 0x57, 0x57, 0, 15, "Knights Landing", R_BEST, S_VENDOR, LE_NONE, W_LEVEL },
  { V_INTEL, 6, 0x85, 0x85, 0, 15, "Knights Mill", R_BEST, S_VENDOR, LE_NONE, W_LEVEL },
  { V_INTEL, 6, 0x2A, 0x2A, 0, 15, "Sandy Bridge", R_BEST, S_VENDOR, LE_NONE, W_LEVEL },
  { V_INTEL, 6, 0x2D, 0x2D, 0, 15, "Sandy Bridge-E", R_BEST, S_VENDOR, LE_NONE, W_LEVEL },
  { V_INTEL, 6, 0x3A, 0x3A, 0, 15, "Ivy Bridge", R_BEST, S_VENDOR, LE_NONE, W_LEVEL },
  { V_INTEL, 6, 0x3E, 0x3E, 0, 15, "Ivy Bridge-E", R_BEST, S_VENDOR, LE_NONE, W_LEVEL },
  { V_INTEL, 6, 0x3C, 0x3C, 0, 15, "Haswell", R_BEST, S_VENDOR, LE_NONE, W_LEVEL },
  { V_INTEL, 6, 0x3F, 0x3F, 0, 15, "Haswell-E", R_BEST, S_VENDOR, LE_NONE, W_LEVEL },
  { V_INTEL, 6, 0x45, 0x46, 0, 15, "Haswell", R_BEST, S_VENDOR, LE_NONE, W_LEVEL },
  { V_INTEL, 6, 0x3D, 0x3D, 0, 15, "Broadwell", R_BEST, S_VENDOR, LE_NONE, W_LEVEL },
  { V_INTEL, 6, 0x47, 0x47, 0, 15, "Broadwell", R_BEST, S_VENDOR, LE_NONE, W_LEVEL },
  { V_INTEL, 6, 0x4F, 0x4F, 0, 15, "Broadwell-E", R_BEST, S_VENDOR, LE_NONE, W_LEVEL },
  { V_INTEL, 6, 0x56, 0x56, 0, 15, "Broadwell-D", R_BEST, S_VENDOR, LE_NONE, W_LEVEL },
  { V_INTEL, 6, 0x4E, 0x4E, 0, 15, "Skylake", R_BEST, S_VENDOR, LE_NONE, W_LEVEL },
  { V_INTEL, 6, 0x5E, 0x5E, 0, 15, "Skylake", R_BEST, S_VENDOR, LE_NONE, W_LEVEL },
  { V_INTEL, 6, 0x8E, 0x8E, 0, 15, "Kaby/Coffee/Whiskey Lake", R_BEST, S_VENDOR, LE_NONE, W_LEVEL },
  { V_INTEL, 6, 0x9E, 0x9E, 0, 15, "Kaby/Coffee Lake", R_BEST, S_VENDOR, LE_NONE, W_LEVEL },
  { V_INTEL, 6, 0xA5, 0xA6, 0, 15, "Comet Lake", R_BEST, S_VENDOR, LE_NONE, W_LEVEL },
  { V_INTEL, 6, 0x97, 0x97, 0, 15, "Alder Lake", R_BEST, S_VENDOR, LE_NONE, W_LEVEL },
  { V_INTEL, 6, 0x9A, 0x9A, 0, 15, "Alder Lake", R_BEST, S_VENDOR, LE_NONE, W_LEVEL },
  { V_INTEL, 6, 0xB7, 0xB7, 0, 15, "Raptor Lake", R_BEST, S_VENDOR, LE_NONE, W_LEVEL },
  { V_INTEL, 6, 0xBA, 0xBA, 0, 15, "Raptor Lake", R_BEST, S_VENDOR, LE_NONE, W_LEVEL },
  { V_INTEL, 6, 0xBF, 0xBF, 0, 15, "Raptor Lake", R_BEST, S_VENDOR, LE_NONE, W_LEVEL },
  { V_INTEL, 6, 0xAA, 0xAC, 0, 15, "Meteor Lake", R_BEST, S_VENDOR, LE_NONE, W_LEVEL },
  { V_AMD, 0x17, 0x00, 0x2F, 0, 15, "Zen/Zen+", R_BEST, S_VENDOR, LE_NONE, W_LEVEL },
  { V_AMD, 0x17, 0x30, 0xFF, 0, 15, "Zen 2", R_BEST, S_VENDOR, LE_NONE, W_LEVEL },
  { V_AMD, 0x19, 0x10, 0x1F, 0, 15, "Zen 4", R_NO_DROP, S_VENDOR, LE_NONE, W_YMM },
  { V_AMD, 0x19, 0x60, 0x7F, 0, 15, "Zen 4", R_NO_DROP, S_VENDOR, LE_NONE, W_YMM },
  { V_AMD, 0x19, 0xA0, 0xAF, 0, 15, "Zen 4", R_NO_DROP, S_VENDOR, LE_NONE, W_YMM },
  { V_AMD, 0x19, 0x00, 0xFF, 0, 15, "Zen 3", R_BEST, S_VENDOR, LE_NONE, W_LEVEL },
  { V_AMD, 0x1A, 0x00, 0xFF, 0, 15, "Zen 5", R_NO_DROP, S_FSRM_WINDOW, LE_NONE, W_LEVEL },
};

/* A licence-affected model that reports AMX or AVX512-FP16, which Intel
 * first shipped in Sapphire Rapids (Intel's ISA extensions reference): a
 * hypervisor's masked model (seen: Rocket Lake's 0xA7 with both), and
 * glibc, which looks at features, gives it 512-bit code there. */
static const cpu_row masked_model =
  { V_INTEL, 6, 0, 0xFF, 0, 15, "Sapphire Rapids or later (AMX or AVX512-FP16 under a masked model)", R_NO_DROP,
    S_FROM_64K, LE_NONE, W_LEVEL };

static const cpu_row *find_row(const avxbuf_cpu *cpu)
{
  for (size_t i = 0; i < sizeof cpu_table / sizeof cpu_table[0]; i++) {
    const cpu_row *r = &cpu_table[i];
    if (r->vendor == cpu->vendor_id && r->family == cpu->family
        && cpu->model >= r->model_lo && cpu->model <= r->model_hi
        && cpu->stepping >= r->stepping_lo && cpu->stepping <= r->stepping_hi)
      return (r->rule == R_LICENCE_SEVERE || r->rule == R_LICENCE_MILD)
             && (cpu->has[F_AMX_TILE] || cpu->has[F_AVX512FP16]) ? &masked_model : r;
  }
  return NULL;
}

static const char *const level_names[] = { "SSE2", "AVX", "AVX2", "AVX-512" };

/* Why the CPU and OS allow no more than cpu->max_use_avx. */
static const char *limit_text(const avxbuf_cpu *cpu)
{
  if (!cpu->has[F_OSXSAVE]) return "OSXSAVE is clear, so the OS enables no AVX state";
  if (!cpu->os_avx && cpu->has[F_AVX]) return "the OS has not enabled AVX state (XCR0 & 0x6)";
  if (cpu->has[F_AVX512F] && !(cpu->has[F_AVX512BW] && cpu->has[F_AVX512VL]))
    return "it has AVX-512F without the BW and VL that avxbuf's 512-bit kernels need";
  if (cpu->has[F_AVX512F] && !cpu->os_avx512)
    return "the OS has not enabled AVX-512 state (XCR0 & 0xE6)";
  if (cpu->max_use_avx == 0) return cpu->has[F_AVX2] ? "it reports AVX2 without AVX" : "it reports no AVX";
  if (cpu->max_use_avx == 1) return "it reports AVX without AVX2";
  return "it reports no AVX-512";
}

/* Thresholds, from measurement where we have it and glibc's choices where
 * we do not (the evidence for each: docs/policy.md, "Other defaults").
 * - rep movsb, Intel with ERMS: glibc's (sysdeps/x86/dl-cacheinfo.h,
 *   dl_init_cacheinfo): 2112 with FSRM, else 4096 x (vector size / 16) for
 *   32- and 64-byte vectors and 2048 for 16-byte ones, with no end. AMD:
 *   never by default (glibc too moves it to its non-temporal threshold
 *   there, BZ 30994). Zen 5 with FSRM: from 32 KiB with no end of its own,
 *   so until copies stream (nontemporal_threshold: half the L3, at most 16
 *   times the L2). From 4 MiB rep movsb either keeps the cache or streams,
 *   a state of the machine no CPUID leaf shows: keeping it, it beats every
 *   vector and streaming loop, and streaming, it keeps up with the
 *   streaming loops (the sweeps: docs/policy.md, "Other defaults"). The
 *   masked Sapphire Rapids class: from 64 KiB, where the vector loops
 *   stopped winning.
 * - rep stosb: glibc's 2048 with ERMS on Intel (64 KiB for the masked
 *   class, as rep movsb); on AMD never, but on Zen 5 from the L2 size:
 *   past the L2 the vector stores slow while rep stosb keeps the cache.
 *   From 4 x L2 it keeps it on some machines and streams on others with
 *   the same CPUID, so the window's end there is measured (measured.h):
 *   where rep stosb fills as fast as the vector loop it runs until fills
 *   stream, and zero from twice the copies' threshold, not from it (as
 *   fills do, unless the L3 leaf was capped: below); otherwise, or before
 *   the measurement, it ends at 4 x L2, as a streaming fill loses more
 *   than a cached one gains (docs/policy.md, "Other defaults").
 * - non-temporal: half the last-level cache for copies, whose source and
 *   destination then exceed it, but at most 16 L2s: a large L3 is shared
 *   by cores (and, under a hypervisor, tenants) this thread cannot see, and glibc too
 *   takes a fraction (a quarter) of the chip's L3. Zero and fill, which
 *   touch half the memory per byte, stream from twice it; from 4 times it
 *   where the L3 leaf said more than any core can use (l3_capped), so the
 *   L3 a core has is unknown beyond the cap: on the Zen 5 VM whose leaf
 *   says 508 MiB temporal fills beat streaming ones at twice it in every
 *   sweep recorded, and lost at 4 times it (docs/policy.md).
 * - AMD: zero streams from the copies' threshold, fill from twice it:
 *   there streaming stores of zeros outrun those of any other byte and beat
 *   temporal zeroing from where streaming copies do, and streaming fills do
 *   not (docs/policy.md, "Other defaults", has the sweeps). */
static void thresholds(const avxbuf_cpu *cpu, const cpu_row *row, avxbuf_stosb_fact stosb, avxbuf_defaults *out)
{
  int intel_erms = cpu->has[F_ERMS] && cpu->vendor_id != V_AMD;
  long long vec = out->max_vector_size;
  int stosb_kept = 0;
  if (row && row->strings == S_FSRM_WINDOW && cpu->has[F_FSRM] && cpu->l2) {
    out->rep_movsb_threshold = (32 << 10) - 1;   /* taken above it: from 32 KiB */
    out->rep_movsb_stop_threshold = 0;   /* no end: streaming copies end it */
    out->rep_stosb_threshold = (long long)cpu->l2 - 1;   /* from the L2 size */
    long long beyond_l2 = 4 * (long long)cpu->l2;   /* where rep stosb keeps the cache or not */
    out->rep_stosb_probe_size = cpu->has[F_ERMS] ? beyond_l2 : 0;   /* no rep stosb kernel: nothing to measure */
    stosb_kept = stosb == STOSB_AS_FAST;
    out->rep_stosb_stop_threshold = stosb_kept ? 0 : beyond_l2;   /* 0: until fills stream */
    out->thresholds_source =
      stosb == STOSB_AS_FAST ? "this processor's row (docs/policy.md): with FSRM, rep movsb from 32 KiB until copies "
                              "stream (nontemporal_threshold), rep stosb from the L2 size until fills stream, as "
                              "it filled 4 times the L2 as fast as the vector loop here (measured)"
      : stosb == STOSB_SLOWER ? "this processor's row (docs/policy.md): with FSRM, rep movsb from 32 KiB until "
                                    "copies stream (nontemporal_threshold), rep stosb from the L2 size to 4 times it, "
                                    "where it filled slower than the vector loop here (measured)"
      : "this processor's row (docs/policy.md): with FSRM, rep movsb from 32 KiB until copies stream "
        "(nontemporal_threshold), rep stosb from the L2 size to 4 times it until a fill that size measures more";
  } else if (row && row->strings == S_FROM_64K && intel_erms) {
    out->rep_movsb_threshold = out->rep_stosb_threshold = (64 << 10) - 1;   /* taken above it: from 64 KiB */
    out->thresholds_source = "this processor's row (docs/policy.md): rep movsb and rep stosb from 64 KiB";
  } else if (intel_erms) {
    out->rep_movsb_threshold = cpu->has[F_FSRM] ? 2112 : vec >= 32 ? 4096 * (vec / 16) : 2048;
    out->rep_stosb_threshold = 2048;
    out->thresholds_source = "glibc sysdeps/x86/dl-cacheinfo.h (rep_movsb_threshold, rep_stosb_threshold)";
  } else {
    out->thresholds_source = "AMD (docs/policy.md): the vector loops beat rep movsb and rep stosb, as glibc finds";
  }
  size_t llc = cpu->l3 ? cpu->l3 : cpu->l2;
  size_t nt = llc / 2;
  int capped = cpu->l3 && cpu->l2 && cpu->l2 <= nt / 16;
  if (capped) nt = 16 * cpu->l2;
  out->nontemporal_threshold = llc ? (long long)nt : 4 << 20;
  out->nontemporal_source = !llc ? "no cache size read: 4 MiB (docs/policy.md)"
                          : capped ? "16 times the L2, no more than half the last-level cache (docs/policy.md)"
                          : "half the last-level cache (docs/policy.md)";
  out->fill_nontemporal_factor = cpu->l3_capped ? 4 : 2;
  out->zero_streams_as_copies = cpu->vendor_id == V_AMD && !stosb_kept;
}

const char *const avxbuf_stosb_fact_names[3] = { "unmeasured", "slower", "as fast" };

/* As fast or faster: where rep stosb keeps the cache it took less time
 * than the vector fill, and where it streams about twice (docs/policy.md);
 * between the two a window opened wrongly costs more (fills to the
 * streaming threshold at half speed) than one kept shut (the vector fill's
 * speed at 4-16 times the L2), so the verdict leans to the shut one. */
avxbuf_stosb_fact avxbuf_stosb_fact_of(double ratio)
{
  return !(ratio > 0) ? STOSB_UNMEASURED : ratio < 1 ? STOSB_AS_FAST : STOSB_SLOWER;
}

void avxbuf_policy(const avxbuf_cpu *cpu, avxbuf_stosb_fact stosb, avxbuf_defaults *out)
{
  if (!cpu->x86) {
    memset(out, 0, sizeof *out);
    out->uarch = cpu->arch;
    out->max_vector_size = avxbuf_level_width(0);
    out->rule = "not-x86";
    out->source = "the build's target architecture";
    out->avx3_threshold = 4096;
    out->fill_nontemporal_factor = 2;
    snprintf(out->reason, sizeof out->reason, "%s: %s, so no SSE/AVX kernels; using the C library's memmove/memset",
             cpu->arch, strcmp(cpu->arch, "i386") ? "not an x86 processor"
                        : "built without SSE2 (the i386 baseline; -msse2 brings the kernels)");
    return;
  }
  const cpu_row *row = find_row(cpu);
  const struct rule *rule = &rules[row ? row->rule : R_BEST];
  int use_avx = cpu->max_use_avx < rule->max_use_avx ? cpu->max_use_avx : rule->max_use_avx;

  memset(out, 0, sizeof *out);
  out->use_avx = use_avx;
  out->max_vector_size = row && row->width == W_YMM && use_avx == 3 ? 32 : avxbuf_level_width(use_avx);
  out->vector_zeroing = rule->vector_zeroing;
  out->avx3_threshold = rule->avx3_threshold;
  /* HotSpot's own rule (VM_Version::avx3_threshold): 0 on Intel family 6
   * with SERIALIZE, whose 64-byte loads and stores it finds improved; it
   * reaches the models the table does not name yet. */
  if (cpu->vendor_id == V_INTEL && cpu->family == 6 && cpu->has[F_SERIALIZE]) out->avx3_threshold = 0;
  out->uarch = row ? row->uarch : "unknown";
  out->licence_events = licence_event_sets[row ? row->licence_events : LE_NONE];
  out->rule = rule->name;
  out->source = rule->source;
  out->rep_stosb = stosb;
  thresholds(cpu, row, stosb, out);

  const char *vendor = cpu->vendor_id == V_INTEL ? "Intel"
                     : cpu->vendor_id == V_AMD ? "AMD" : cpu->vendor;
  /* Families as vendors write them: Intel 6, AMD 0x19. */
  int n = snprintf(out->reason, sizeof out->reason,
                   cpu->family < 10 ? "%s %s (family %u, model 0x%02X, stepping %u): "
                                    : "%s %s (family 0x%X, model 0x%02X, stepping %u): ",
                   vendor, out->uarch, cpu->family, cpu->model, cpu->stepping);
  char *p = out->reason + n;
  size_t left = sizeof out->reason - (size_t)n;
  if (rule->text && use_avx == rule->max_use_avx)
    snprintf(p, left, "%s; using %s%s%s", rule->text, level_names[use_avx],
             out->max_vector_size < avxbuf_level_width(use_avx)
               ? " at 32 bytes (its 512-bit loads and stores run as two 256-bit halves)" : "",
             rule->vector_zeroing ? "" : ", and rep stosb for zeroing");
  else if (rule->text)
    snprintf(p, left, "%s, but %s; using %s", rule->text, limit_text(cpu), level_names[use_avx]);
  else
    snprintf(p, left, "%s; using %s, the best this CPU and OS allow",
             use_avx == 3 ? "AVX-512 with no known licence drop" : limit_text(cpu),
             level_names[use_avx]);
}
