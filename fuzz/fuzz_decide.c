/* libFuzzer: the policy over random CPUID and XCR0 values. It must never
 * choose a level the values do not allow: AVX-512 needs F+BW+VL and
 * XCR0 & 0xE6; AVX needs OSXSAVE and XCR0 & 0x6. Then the whole reading
 * (avxbuf_cpu_read: brand, caches) over a CPU whose every leaf answers
 * with bytes of the input. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "core/policy.h"

static const char *const vendors[] = { "GenuineIntel", "AuthenticAMD", "HygonGenuine", "" };

typedef struct { const uint8_t *data; size_t size; } input;

/* Leaf (leaf, sub) of the fuzzed CPU: 16 bytes of the input picked by a
 * hash of the two, so that every leaf and subleaf can be steered. */
static void fuzz_cpuid(void *ctx, uint32_t leaf, uint32_t sub, uint32_t r[4])
{
  const input *in = ctx;
  if (in->size < 16) return;
  size_t at = ((leaf * 2654435761u) ^ (sub * 40503u)) % (in->size - 15);
  memcpy(r, in->data + at, 16);
}

static void read_whole_cpu(const uint8_t *data, size_t size)
{
  input in = { data, size };
  uint64_t xcr0 = 0;
  memcpy(&xcr0, data, size < 8 ? size : 8);
  avxbuf_cpuid_source src = { fuzz_cpuid, xcr0, &in };
  avxbuf_cpu cpu;
  avxbuf_defaults d;
  avxbuf_cpu_read(&src, &cpu);
  avxbuf_policy(&cpu, (avxbuf_stosb_fact)(size % 3), &d);
  if (memchr(cpu.brand, '\0', sizeof cpu.brand) == NULL) abort();
  size_t n = strlen(cpu.brand);
  if (n > 0 && (cpu.brand[0] == ' ' || cpu.brand[n - 1] == ' ')) abort();
  if (cpu.l3_capped && cpu.l3 != (size_t)32 << 20) abort();
  if ((cpu.l1d && !cpu.l1d_leaf) || (cpu.l2 && !cpu.l2_leaf) || (cpu.l3 && !cpu.l3_leaf)) abort();
  if (d.nontemporal_threshold < 0 || d.rep_movsb_threshold < 0 || d.rep_movsb_stop_threshold < 0
      || d.rep_stosb_threshold < 0 || d.rep_stosb_stop_threshold < 0 || d.use_avx > cpu.max_use_avx) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  read_whole_cpu(data, size);
  uint8_t buf[1 + 6 * 4 + 8] = { 0 };
  memcpy(buf, data, size < sizeof buf ? size : sizeof buf);
  avxbuf_cpuid_raw raw;
  memset(&raw, 0, sizeof raw);
  strcpy(raw.vendor, vendors[buf[0] & 3]);
  uint32_t *regs[] = { &raw.leaf1_eax, &raw.leaf1_ecx, &raw.leaf7_ebx, &raw.leaf7_ecx,
                       &raw.leaf7_edx, &raw.leaf7_1_eax };
  for (int i = 0; i < 6; i++) memcpy(regs[i], buf + 1 + 4 * i, 4);
  memcpy(&raw.xcr0, buf + 25, 8);

  avxbuf_cpu cpu;
  avxbuf_defaults d;
  avxbuf_cpu_decode(&raw, &cpu);
  avxbuf_policy(&cpu, (avxbuf_stosb_fact)((buf[0] >> 2) % 3), &d);

  int osxsave = (raw.leaf1_ecx >> 27) & 1;
  uint64_t xcr0 = osxsave ? raw.xcr0 : 0;
  if (d.use_avx < 0 || d.use_avx > 3 || d.use_avx > cpu.max_use_avx) abort();
  if (d.use_avx >= 1 && !(osxsave && (xcr0 & 0x6) == 0x6 && ((raw.leaf1_ecx >> 28) & 1))) abort();
  if (d.use_avx >= 2 && !((raw.leaf7_ebx >> 5) & 1)) abort();
  if (d.use_avx == 3 && !((xcr0 & 0xE6) == 0xE6 && (raw.leaf7_ebx >> 16 & 1)
                          && (raw.leaf7_ebx >> 30 & 1) && (raw.leaf7_ebx >> 31 & 1))) abort();
  if (memchr(d.reason, '\0', sizeof d.reason) == NULL || strlen(d.reason) < 20) abort();
  if (d.nontemporal_threshold < 0 || d.rep_movsb_threshold < 0 || d.rep_stosb_threshold < 0
      || d.rep_stosb_stop_threshold < 0) abort();
  return 0;
}
