/* CPUID and XGETBV, once per process. Bit positions: Intel SDM vol. 2A,
 * CPUID; AMD APM vol. 3, appendix E. */
#include <pthread.h>
#include <string.h>
#include "arch.h"
#include "cpu.h"

#ifdef AVXBUF_X86
#include <cpuid.h>
#endif

const char *const avxbuf_feature_names[F_COUNT] = {
  [F_OSXSAVE] = "osxsave", [F_AVX] = "avx", [F_HYPERVISOR] = "hypervisor",
  [F_AVX2] = "avx2", [F_BMI2] = "bmi2", [F_ERMS] = "erms",
  [F_AVX512F] = "avx512f", [F_AVX512DQ] = "avx512dq", [F_AVX512ER] = "avx512er",
  [F_AVX512BW] = "avx512bw", [F_AVX512VL] = "avx512vl", [F_AVX512VBMI2] = "avx512vbmi2",
  [F_FSRM] = "fsrm", [F_SERIALIZE] = "serialize", [F_AVX_VNNI] = "avx_vnni",
};

enum { R_L1_ECX, R_L7_EBX, R_L7_ECX, R_L7_EDX, R_L7_1_EAX };

static const struct { avxbuf_feature f; unsigned char reg, bit; } feature_bits[] = {
  { F_OSXSAVE, R_L1_ECX, 27 }, { F_AVX, R_L1_ECX, 28 }, { F_HYPERVISOR, R_L1_ECX, 31 },
  { F_AVX2, R_L7_EBX, 5 }, { F_BMI2, R_L7_EBX, 8 }, { F_ERMS, R_L7_EBX, 9 },
  { F_AVX512F, R_L7_EBX, 16 }, { F_AVX512DQ, R_L7_EBX, 17 }, { F_AVX512ER, R_L7_EBX, 27 },
  { F_AVX512BW, R_L7_EBX, 30 }, { F_AVX512VL, R_L7_EBX, 31 },
  { F_AVX512VBMI2, R_L7_ECX, 6 },
  { F_FSRM, R_L7_EDX, 4 }, { F_SERIALIZE, R_L7_EDX, 14 },
  { F_AVX_VNNI, R_L7_1_EAX, 4 },
};

/* XCR0 bits: 1 SSE, 2 AVX (upper ymm), 5 opmask, 6 ZMM_Hi256, 7 Hi16_ZMM. */
#define XCR0_AVX 0x6u
#define XCR0_AVX512 0xE6u

void avxbuf_cpu_decode(const avxbuf_cpuid_raw *raw, avxbuf_cpu *cpu)
{
  const uint32_t regs[] = { raw->leaf1_ecx, raw->leaf7_ebx, raw->leaf7_ecx,
                            raw->leaf7_edx, raw->leaf7_1_eax };
  memset(cpu, 0, sizeof *cpu);
  cpu->x86 = 1;   /* CPUID values describe an x86 processor */
#ifdef AVXBUF_X86
  cpu->arch = AVXBUF_ARCH;
#else
  cpu->arch = "x86_64";   /* decide{} in a build without x86 kernels */
#endif
  memcpy(cpu->vendor, raw->vendor, sizeof cpu->vendor);
  cpu->vendor[sizeof cpu->vendor - 1] = '\0';
  cpu->vendor_id = !strcmp(cpu->vendor, "GenuineIntel") ? V_INTEL
                 : !strcmp(cpu->vendor, "AuthenticAMD") ? V_AMD : V_OTHER;

  uint32_t eax = raw->leaf1_eax;
  unsigned base_family = (eax >> 8) & 0xF, base_model = (eax >> 4) & 0xF;
  cpu->family = base_family == 0xF ? base_family + ((eax >> 20) & 0xFF) : base_family;
  cpu->model = (base_family == 0x6 || base_family == 0xF)
             ? (((eax >> 16) & 0xF) << 4) + base_model : base_model;
  cpu->stepping = eax & 0xF;

  for (size_t i = 0; i < sizeof feature_bits / sizeof feature_bits[0]; i++)
    cpu->has[feature_bits[i].f] = (regs[feature_bits[i].reg] >> feature_bits[i].bit) & 1;

  /* Without OSXSAVE, XGETBV faults and no extended state is enabled. */
  cpu->xcr0 = cpu->has[F_OSXSAVE] ? raw->xcr0 : 0;
  cpu->os_avx = (cpu->xcr0 & XCR0_AVX) == XCR0_AVX;
  cpu->os_avx512 = (cpu->xcr0 & XCR0_AVX512) == XCR0_AVX512;

  /* Each level needs the ones below it (a CPUID that reports AVX2 without
   * AVX is not to be trusted with either; found by fuzz/fuzz_decide.c). The
   * 512-bit kernels execute F (zmm moves), BW (byte broadcast) and VL (EVEX
   * ymm); Knights Landing/Mill have F without BW/VL. */
  int avx = cpu->os_avx && cpu->has[F_AVX];
  int avx2 = avx && cpu->has[F_AVX2];
  if (avx2 && cpu->os_avx512 && cpu->has[F_AVX512F] && cpu->has[F_AVX512BW] && cpu->has[F_AVX512VL])
    cpu->max_use_avx = 3;
  else if (avx2)
    cpu->max_use_avx = 2;
  else if (avx)
    cpu->max_use_avx = 1;
  else
    cpu->max_use_avx = 0;
}

#ifdef AVXBUF_X86
static uint64_t xgetbv0(void)
{
  uint32_t lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return ((uint64_t)hi << 32) | lo;
}

/* Deterministic cache parameters: Intel leaf 4 and AMD leaf 0x8000001D share
 * one layout. Size = ways * partitions * line size * sets. */
static void read_caches(uint32_t leaf, avxbuf_cpu *cpu)
{
  for (uint32_t sub = 0; sub < 16; sub++) {
    uint32_t a, b, c, d;
    __cpuid_count(leaf, sub, a, b, c, d);
    unsigned type = a & 0x1F, level = (a >> 5) & 0x7;
    if (type == 0) break;
    size_t size = (size_t)(((b >> 22) & 0x3FF) + 1) * (((b >> 12) & 0x3FF) + 1)
                * ((b & 0xFFF) + 1) * ((size_t)c + 1);
    if (level == 1 && type == 1) cpu->l1d = size;
    else if (level == 2) cpu->l2 = size;
    else if (level == 3) cpu->l3 = size;
  }
}

static void detect(avxbuf_cpu *cpu)
{
  avxbuf_cpuid_raw raw = { 0 };
  uint32_t a, b, c, d, max_leaf, max_ext;
  __cpuid(0, max_leaf, b, c, d);
  memcpy(raw.vendor, &b, 4); memcpy(raw.vendor + 4, &d, 4); memcpy(raw.vendor + 8, &c, 4);
  __cpuid(1, raw.leaf1_eax, b, raw.leaf1_ecx, d);
  if (max_leaf >= 7) {
    __cpuid_count(7, 0, a, raw.leaf7_ebx, raw.leaf7_ecx, raw.leaf7_edx);
    if (a >= 1) __cpuid_count(7, 1, raw.leaf7_1_eax, b, c, d);
  }
  if ((raw.leaf1_ecx >> 27) & 1) raw.xcr0 = xgetbv0();
  avxbuf_cpu_decode(&raw, cpu);

  __cpuid(0x80000000, max_ext, b, c, d);
  if (max_ext >= 0x80000004) {
    uint32_t r[12];
    for (unsigned i = 0; i < 3; i++)
      __cpuid(0x80000002 + i, r[4 * i], r[4 * i + 1], r[4 * i + 2], r[4 * i + 3]);
    memcpy(cpu->brand, r, 48);
    /* Vendors pad the 48 bytes with blanks on either side (the Zen 5 VM's
     * "Oxide Virtual Turin-like Processor" ends in 14 of them). */
    const char *p = cpu->brand;
    while (*p == ' ') p++;
    size_t n = strlen(p);
    while (n > 0 && p[n - 1] == ' ') n--;
    memmove(cpu->brand, p, n);
    cpu->brand[n] = '\0';
  }
  if (cpu->vendor_id == V_INTEL && max_leaf >= 4) {
    read_caches(4, cpu);
  } else if (cpu->vendor_id == V_AMD && max_ext >= 0x8000001D) {
    read_caches(0x8000001D, cpu);
  } else if (max_ext >= 0x80000006) {  /* legacy AMD: L2 in KiB, L3 in 512 KiB units */
    __cpuid(0x80000006, a, b, c, d);
    cpu->l2 = (size_t)(c >> 16) << 10;
    cpu->l3 = (size_t)(d >> 18) << 19;
  }
}
#else
static void detect(avxbuf_cpu *cpu)
{
  avxbuf_cpuid_raw raw = { 0 };
  avxbuf_cpu_decode(&raw, cpu);
  cpu->x86 = 0;
  cpu->arch = AVXBUF_ARCH;
}
#endif

static avxbuf_cpu this_cpu;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static void detect_once(void) { detect(&this_cpu); }

const avxbuf_cpu *avxbuf_cpu_get(void)
{
  pthread_once(&once, detect_once);
  return &this_cpu;
}
