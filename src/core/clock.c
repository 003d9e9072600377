/* The chains of src/core/clock.h, each one asm block: no compiler may shorten a
 * chain, vectorise it or keep its counter in memory, at any optimisation
 * level (a probe that ran wide code would change the licence it measures;
 * make audit checks the compiled loops: tools/audit.lua, rule "probe"). */
#include <pthread.h>

#include "core/arch.h"
#include "core/clock.h"

#ifdef AVXBUF_X86
/* rdtsc between two lfences: it does not wait for earlier instructions to
 * finish, nor later ones for it (Intel SDM vol. 2, RDTSC). */
uint64_t avxbuf_tsc(void)
{
  uint32_t lo, hi;
  __asm__ volatile("lfence\n\trdtsc\n\tlfence" : "=a"(lo), "=d"(hi) : : "memory");
  return ((uint64_t)hi << 32) | lo;
}

#define TIMES16(s) s s s s s s s s s s s s s s s s

/* Not inlined nor cloned, with external linkage: one copy of each loop, the
 * one the audit reads. (A count of 0 would run dec's 2^64 rounds.) */
#ifdef __clang__
#define ONE_COPY __attribute__((noinline))
#else
#define ONE_COPY __attribute__((noipa))
#endif

/* A chain's function: x = x OP one, 16 to a round, rounds times, in one
 * asm block, between two TSC reads. */
#define CHAIN(name, op, x0)                                                     \
  ONE_COPY uint64_t name(uint64_t rounds)                                       \
  {                                                                             \
    if (rounds == 0) return 0;                                                  \
    unsigned long x = x0, one = 1, n = (unsigned long)rounds;                   \
    uint64_t t0 = avxbuf_tsc();                                                 \
    __asm__ volatile("1:\n\t" TIMES16(op " %[one], %[x]\n\t") "dec %[n]\n\tjnz 1b" \
                     : [x] "+r"(x), [n] "+r"(n) : [one] "r"(one) : "cc");       \
    return avxbuf_tsc() - t0;                                                   \
  }

CHAIN(avxbuf_chain_add, "add", 0)
CHAIN(avxbuf_chain_imul, "imul", 1)

/* One (monotonic time, TSC) pair: the TSC read between two clock reads,
 * the pair with the closest reads of three kept. */
static void pair(double *t, uint64_t *ticks)
{
  double best = 0;
  for (int i = 0; i < 3; i++) {
    double a = avxbuf_now();
    uint64_t c = avxbuf_tsc();
    double b = avxbuf_now();
    if (i == 0 || b - a < best) best = b - a, *t = (a + b) / 2, *ticks = c;
  }
}

static double tsc_rate;
static pthread_once_t tsc_once = PTHREAD_ONCE_INIT;

static void calibrate(void)
{
  double t0, t1;
  uint64_t c0, c1;
  pair(&t0, &c0);
  do pair(&t1, &c1); while (t1 - t0 < 0.02);
  tsc_rate = (double)(c1 - c0) / (t1 - t0);
}

double avxbuf_tsc_hz(void)
{
  pthread_once(&tsc_once, calibrate);
  return tsc_rate;
}

int avxbuf_clock_usable(const avxbuf_cpu *cpu, const char **why)
{
  if (!cpu->invariant_tsc) {
    *why = "the TSC is not invariant here (CPUID 0x80000007 EDX bit 8 is clear): its ticks are not time";
    return 0;
  }
  return 1;
}

double avxbuf_chain_ghz(uint64_t rounds, uint64_t ticks, int cycles_per_op)
{
  double hz = avxbuf_tsc_hz();
  if (ticks == 0 || hz <= 0) return 0;
  return (double)rounds * AVXBUF_CHAIN_UNROLL * cycles_per_op / ((double)ticks / hz) / 1e9;
}
#else
uint64_t avxbuf_tsc(void) { return 0; }
double avxbuf_chain_ghz(uint64_t rounds, uint64_t ticks, int cycles_per_op)
{
  (void)rounds, (void)ticks, (void)cycles_per_op;
  return 0;
}
uint64_t avxbuf_chain_add(uint64_t rounds) { (void)rounds; return 0; }
uint64_t avxbuf_chain_imul(uint64_t rounds) { (void)rounds; return 0; }
double avxbuf_tsc_hz(void) { return 0; }

int avxbuf_clock_usable(const avxbuf_cpu *cpu, const char **why)
{
  (void)cpu;
  *why = "the clock probe is x86 code, and this build (" AVXBUF_ARCH ") has none";
  return 0;
}
#endif

