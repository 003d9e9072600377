/* The default settings for a processor, and why: a pure function of the
 * decoded CPU (detection is cpu.h's job), so it can be asked about any
 * processor by its CPUID values. */
#ifndef AVXBUF_POLICY_H
#define AVXBUF_POLICY_H

#include "core/cpu.h"

/* What CPUID cannot say, so avxbuf measures it (core/measured.h): whether
 * rep stosb of 4 times the L2 fills as fast as the temporal vector fill, as
 * it does where it keeps the cache, or slower, as where it streams.
 * Machines with the same CPUID leaves were seen both ways (docs/policy.md,
 * "Other defaults"). */
typedef enum avxbuf_stosb_fact { STOSB_UNMEASURED, STOSB_SLOWER, STOSB_AS_FAST } avxbuf_stosb_fact;
extern const char *const avxbuf_stosb_fact_names[3];

/* The fact a measurement gives: rep stosb's time over the vector fill's
 * (medians of the same rounds; 0: none taken), AS_FAST below 1. The one
 * rule, for the probe, decide{rep_stosb_ratio} and bench/plancheck.lua
 * alike. */
avxbuf_stosb_fact avxbuf_stosb_fact_of(double ratio);

typedef struct avxbuf_defaults {
  int use_avx;                 /* 0..3 */
  int max_vector_size;         /* bytes: the widest vectors the kernels use (at most use_avx's width) */
  int vector_zeroing;          /* 0/1 */
  long long avx3_threshold;    /* bytes */
  long long rep_movsb_threshold, rep_movsb_stop_threshold, rep_stosb_threshold, rep_stosb_stop_threshold;
  long long nontemporal_threshold;
  int zero_streams_as_copies;  /* 1: zero streams from the copies' threshold, not twice it (AMD) */
  int fill_nontemporal_factor; /* fills stream from this many times nontemporal_threshold */
  long long rep_stosb_probe_size;  /* bytes: the fill whose rep stosb the policy needs measured (0: none) */
  avxbuf_stosb_fact rep_stosb;     /* what the policy was told of it */
  const char *thresholds_source;   /* where the string-instruction thresholds come from */
  const char *nontemporal_source;  /* and nontemporal_threshold (NULL: not x86) */
  const char *uarch;           /* "Cascade Lake", ... or "unknown" */
  const char *licence_events;  /* the turbo-licence counters it has: "levels", "levels,throttle" or NULL */
  const char *rule;            /* the policy row that decided */
  const char *source;          /* where that row's evidence is */
  char reason[320];            /* one sentence for people */
} avxbuf_defaults;

void avxbuf_policy(const avxbuf_cpu *cpu, avxbuf_stosb_fact stosb, avxbuf_defaults *out);

/* The register width of a use_avx level: 0 SSE2 16, 1-2 AVX/AVX2 32, 3 AVX-512 64. */
static inline int avxbuf_level_width(long long use_avx)
{
  return use_avx <= 0 ? 16 : use_avx < 3 ? 32 : 64;
}

#endif
