/* CPU detection: raw CPUID/XGETBV values, and their decoding into a plain
 * struct. Decoding is pure, so the policy can be tested with the register
 * values of processors we do not have. No decisions here: see policy.h. */
#ifndef AVXBUF_CPU_H
#define AVXBUF_CPU_H

#include <stddef.h>
#include <stdint.h>

/* The registers the decision depends on (the fields of avxbuf.decide{}). */
typedef struct avxbuf_cpuid_raw {
  char vendor[13];           /* CPUID.0: EBX EDX ECX */
  uint32_t leaf1_eax, leaf1_ecx;
  uint32_t leaf7_ebx, leaf7_ecx, leaf7_edx, leaf7_1_eax;
  uint64_t xcr0;             /* XGETBV(0); 0 when OSXSAVE is clear */
} avxbuf_cpuid_raw;

typedef enum avxbuf_feature {
  F_OSXSAVE, F_AVX, F_HYPERVISOR,
  F_AVX2, F_BMI2, F_ERMS, F_AVX512F, F_AVX512DQ, F_AVX512ER, F_AVX512BW, F_AVX512VL,
  F_AVX512VBMI2, F_FSRM, F_SERIALIZE, F_AVX_VNNI, F_AVX512FP16, F_AMX_TILE,
  F_COUNT
} avxbuf_feature;

extern const char *const avxbuf_feature_names[F_COUNT];

typedef enum avxbuf_vendor { V_OTHER, V_INTEL, V_AMD } avxbuf_vendor;

typedef struct avxbuf_cpu {
  int x86;                            /* 0: another architecture, no CPUID */
  const char *arch;                   /* "x86_64", "aarch64", ... */
  char vendor[13];
  avxbuf_vendor vendor_id;
  unsigned family, model, stepping;   /* display values */
  unsigned char has[F_COUNT];         /* CPUID bits, whatever the OS enables */
  uint64_t xcr0;
  int os_avx, os_avx512;              /* the OS saves that register state */
  int max_use_avx;                    /* best level CPU and OS both allow */
  /* Filled by avxbuf_cpu_read only (not part of the raw values): */
  char brand[49];
  size_t l1d, l2, l3;                 /* bytes per instance; 0 = unknown */
  unsigned l3_threads;                /* threads sharing an L3; 0 = not said */
  const char *l1d_leaf, *l2_leaf, *l3_leaf;   /* the CPUID leaf each came from, or NULL */
  int l3_capped;                      /* l3 is the cap, below what the leaf said */
  int invariant_tsc;                  /* CPUID 0x80000007 EDX bit 8: the TSC ticks at one rate */
} avxbuf_cpu;

void avxbuf_cpu_decode(const avxbuf_cpuid_raw *raw, avxbuf_cpu *cpu);

/* Where CPUID values come from: the instruction, or a recorded dump (any
 * leaf it lacks reads as zeros, as a CPU answers a leaf past its maximum
 * with some other leaf's values: the maximum leaves are checked first). */
typedef struct avxbuf_cpuid_source {
  void (*cpuid)(void *ctx, uint32_t leaf, uint32_t sub, uint32_t r[4]);
  uint64_t xcr0;   /* XGETBV(0), read only when OSXSAVE is set */
  void *ctx;
} avxbuf_cpuid_source;

/* Everything detection knows, from any source: the decoded registers, the
 * brand and the caches. */
void avxbuf_cpu_read(const avxbuf_cpuid_source *src, avxbuf_cpu *cpu);

/* This machine, detected once per process (thread-safe). */
const avxbuf_cpu *avxbuf_cpu_get(void);

#endif
