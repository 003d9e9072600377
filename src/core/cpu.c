/* CPUID and XGETBV, once per process. Bit positions: Intel SDM vol. 2A,
 * CPUID; AMD APM vol. 3, appendix E. */
#include <pthread.h>
#include <string.h>
#include "core/arch.h"
#include "core/cpu.h"

#ifdef AVXBUF_X86
#include <cpuid.h>
#endif

const char *const avxbuf_feature_names[F_COUNT] = {
  [F_OSXSAVE] = "osxsave", [F_AVX] = "avx", [F_HYPERVISOR] = "hypervisor",
  [F_AVX2] = "avx2", [F_BMI2] = "bmi2", [F_ERMS] = "erms",
  [F_AVX512F] = "avx512f", [F_AVX512DQ] = "avx512dq", [F_AVX512ER] = "avx512er",
  [F_AVX512BW] = "avx512bw", [F_AVX512VL] = "avx512vl", [F_AVX512VBMI2] = "avx512vbmi2",
  [F_FSRM] = "fsrm", [F_SERIALIZE] = "serialize", [F_AVX_VNNI] = "avx_vnni",
  [F_AVX512FP16] = "avx512fp16", [F_AMX_TILE] = "amx_tile",
};

/* Indices of regs[] in avxbuf_cpu_decode: the CPUID registers (leaf, register)
 * that hold the feature bits. */
enum { REG_L1_ECX, REG_L7_EBX, REG_L7_ECX, REG_L7_EDX, REG_L7_1_EAX };

static const struct { avxbuf_feature f; unsigned char reg, bit; } feature_bits[] = {
  { F_OSXSAVE, REG_L1_ECX, 27 }, { F_AVX, REG_L1_ECX, 28 }, { F_HYPERVISOR, REG_L1_ECX, 31 },
  { F_AVX2, REG_L7_EBX, 5 }, { F_BMI2, REG_L7_EBX, 8 }, { F_ERMS, REG_L7_EBX, 9 },
  { F_AVX512F, REG_L7_EBX, 16 }, { F_AVX512DQ, REG_L7_EBX, 17 }, { F_AVX512ER, REG_L7_EBX, 27 },
  { F_AVX512BW, REG_L7_EBX, 30 }, { F_AVX512VL, REG_L7_EBX, 31 },
  { F_AVX512VBMI2, REG_L7_ECX, 6 },
  { F_FSRM, REG_L7_EDX, 4 }, { F_SERIALIZE, REG_L7_EDX, 14 }, { F_AVX512FP16, REG_L7_EDX, 23 },
  { F_AMX_TILE, REG_L7_EDX, 24 },
  { F_AVX_VNNI, REG_L7_1_EAX, 4 },
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

static void query(const avxbuf_cpuid_source *src, uint32_t leaf, uint32_t sub, uint32_t r[4])
{
  r[0] = r[1] = r[2] = r[3] = 0;
  src->cpuid(src->ctx, leaf, sub, r);
}

/* The fields of the deterministic leaves multiply to up to 2^62 bytes. No
 * core has a cache level of 1 GiB (the largest L3 one core uses is 96 MiB,
 * Zen 3/4 with 3D V-Cache); a larger figure is invented and reads as
 * unknown, which also keeps the thresholds made from it within long long and
 * a 32-bit size_t. */
#define CACHE_MAX ((uint64_t)1 << 30)

/* Deterministic cache parameters: Intel leaf 4 and AMD leaf 0x8000001D share
 * one layout (SDM vol. 2A; AMD APM vol. 3). Size = ways * partitions * line
 * size * sets; EAX[25:14] + 1 threads share the cache. */
static int read_caches(const avxbuf_cpuid_source *src, uint32_t leaf, const char *name, avxbuf_cpu *cpu)
{
  int found = 0;
  for (uint32_t sub = 0; sub < 16; sub++) {
    uint32_t r[4];
    query(src, leaf, sub, r);
    unsigned type = r[0] & 0x1F, level = (r[0] >> 5) & 0x7;
    if (type == 0) break;
    uint64_t bytes = (uint64_t)(((r[1] >> 22) & 0x3FF) + 1) * (((r[1] >> 12) & 0x3FF) + 1)
                   * ((r[1] & 0xFFF) + 1) * ((uint64_t)r[2] + 1);
    found = 1;
    if (bytes >= CACHE_MAX) continue;
    size_t size = (size_t)bytes;
    if (level == 1 && type == 1) { cpu->l1d = size; cpu->l1d_leaf = name; }
    else if (level == 2) { cpu->l2 = size; cpu->l2_leaf = name; }
    else if (level == 3) { cpu->l3 = size; cpu->l3_leaf = name; cpu->l3_threads = ((r[0] >> 14) & 0xFFF) + 1; }
  }
  return found;
}

/* A hypervisor that hides TOPOEXT may report through the legacy leaf what
 * no core can use: the whole socket's L3 (every CCD's 32 MiB; a recorded
 * dump: spec/data/zen5-vm-cpuid.txt), with no word on how many threads
 * share it. A Zen core uses
 * its own CCD's L3, 32 MiB on Zen 2-5 (96 MiB with 3D V-Cache, whose parts
 * report TOPOEXT and so leaf 0x8000001D): more from the legacy leaf is taken
 * as 32 MiB. */
#define LEGACY_L3_MAX ((size_t)32 << 20)

/* AMD's legacy leaves: L1d KiB in 0x80000005 ECX[31:24], L2 KiB in
 * 0x80000006 ECX[31:16], L3 in 512 KiB units in its EDX[31:18]. */
static void read_legacy_caches(const avxbuf_cpuid_source *src, uint32_t max_ext, avxbuf_cpu *cpu)
{
  uint32_t r[4];
  if (max_ext >= 0x80000005 && cpu->vendor_id == V_AMD) {
    query(src, 0x80000005, 0, r);
    if (r[2] >> 24) { cpu->l1d = (size_t)(r[2] >> 24) << 10; cpu->l1d_leaf = "0x80000005"; }
  }
  if (max_ext < 0x80000006) return;
  query(src, 0x80000006, 0, r);
  if (r[2] >> 16) { cpu->l2 = (size_t)(r[2] >> 16) << 10; cpu->l2_leaf = "0x80000006"; }
  if (r[3] >> 18) {
    cpu->l3 = (size_t)(r[3] >> 18) << 19;
    cpu->l3_leaf = "0x80000006";
    if (cpu->l3 > LEGACY_L3_MAX) { cpu->l3 = LEGACY_L3_MAX; cpu->l3_capped = 1; }
  }
}

/* Which leaf describes the caches: leaf 4 on Intel and Zhaoxin/Centaur;
 * 0x8000001D on AMD and Hygon only with TOPOEXT (0x80000001 ECX bit 22;
 * without it the leaf reads as zeros, as in spec/data/zen5-vm-cpuid.txt), else AMD's legacy
 * leaves, which other vendors may also fill. */
static void detect_caches(const avxbuf_cpuid_source *src, uint32_t max_leaf, uint32_t max_ext, avxbuf_cpu *cpu)
{
  int amd_like = cpu->vendor_id == V_AMD || !strcmp(cpu->vendor, "HygonGenuine");
  int leaf4 = !amd_like && (cpu->vendor_id == V_INTEL || !strcmp(cpu->vendor, "CentaurHauls")
                            || !strcmp(cpu->vendor, "  Shanghai  "));
  if (leaf4 && max_leaf >= 4 && read_caches(src, 4, "4", cpu)) return;
  if (amd_like && max_ext >= 0x8000001D) {
    uint32_t r[4];
    query(src, 0x80000001, 0, r);
    if (((r[2] >> 22) & 1) && read_caches(src, 0x8000001D, "0x8000001D", cpu)) return;
  }
  read_legacy_caches(src, max_ext, cpu);
}

void avxbuf_cpu_read(const avxbuf_cpuid_source *src, avxbuf_cpu *cpu)
{
  avxbuf_cpuid_raw raw = { 0 };
  uint32_t r[4], max_leaf, max_ext;
  query(src, 0, 0, r);
  max_leaf = r[0];
  memcpy(raw.vendor, &r[1], 4); memcpy(raw.vendor + 4, &r[3], 4); memcpy(raw.vendor + 8, &r[2], 4);
  query(src, 1, 0, r);
  raw.leaf1_eax = r[0];
  raw.leaf1_ecx = r[2];
  if (max_leaf >= 7) {
    query(src, 7, 0, r);
    raw.leaf7_ebx = r[1]; raw.leaf7_ecx = r[2]; raw.leaf7_edx = r[3];
    if (r[0] >= 1) { query(src, 7, 1, r); raw.leaf7_1_eax = r[0]; }
  }
  if ((raw.leaf1_ecx >> 27) & 1) raw.xcr0 = src->xcr0;
  avxbuf_cpu_decode(&raw, cpu);

  query(src, 0x80000000, 0, r);
  max_ext = r[0] >= 0x80000000 && r[0] < 0x80000100 ? r[0] : 0;
  if (max_ext >= 0x80000004) {
    uint32_t b[12];
    for (unsigned i = 0; i < 3; i++) query(src, 0x80000002 + i, 0, b + 4 * i);
    memcpy(cpu->brand, b, 48);
    /* Vendors pad the 48 bytes with blanks on either side (the brand in
     * spec/data/zen5-vm-cpuid.txt ends in 14 of them). */
    const char *p = cpu->brand;
    while (*p == ' ') p++;
    size_t n = strlen(p);
    while (n > 0 && p[n - 1] == ' ') n--;
    memmove(cpu->brand, p, n);
    cpu->brand[n] = '\0';
  }
  if (max_ext >= 0x80000007) {
    query(src, 0x80000007, 0, r);
    cpu->invariant_tsc = (r[3] >> 8) & 1;
  }
  detect_caches(src, max_leaf, max_ext, cpu);
}

#ifdef AVXBUF_X86
static void native_cpuid(void *ctx, uint32_t leaf, uint32_t sub, uint32_t r[4])
{
  (void)ctx;
  __cpuid_count(leaf, sub, r[0], r[1], r[2], r[3]);
}

static uint64_t xgetbv0(void)
{
  uint32_t lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return ((uint64_t)hi << 32) | lo;
}

static void detect(avxbuf_cpu *cpu)
{
  uint32_t a, b, c, d;
  __cpuid(1, a, b, c, d);
  avxbuf_cpuid_source src = { native_cpuid, (c >> 27) & 1 ? xgetbv0() : 0, NULL };
  avxbuf_cpu_read(&src, cpu);
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
