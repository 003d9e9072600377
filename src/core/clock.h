/* The core clock without performance counters. A chain of dependent
 * integer adds retires one add per core cycle on every x86 core, so a
 * known number of them timed by the TSC gives the clock the core ran at
 * over that window (the method of travisdowns/avx-turbo). A chain of
 * dependent imuls (3 cycles each: Intel since Nehalem, AMD since Zen;
 * Agner Fog's instruction tables) is the self-check: where the two
 * disagree, the core is not running them at their latency (an emulator,
 * another microarchitecture) and the reading is not to be trusted. No
 * decisions here: src/measure/lmeasure.c reads the chains, lua/avxbuf/licence.lua
 * says what readings mean. */
#ifndef AVXBUF_CLOCK_H
#define AVXBUF_CLOCK_H

#include <stdint.h>
#include <time.h>

#include "core/cpu.h"

/* CLOCK_MONOTONIC in seconds: what the TSC is calibrated against, and what
 * avxbuf.measure, avxbuf.counters.clock() and the C benchmarks time with. */
static inline double avxbuf_now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The instructions of one round of each chain (src/core/clock.c), and the
 * cycles each imul of its chain takes. */
#define AVXBUF_CHAIN_UNROLL 16
#define AVXBUF_IMUL_CYCLES 3

/* Whether the probe can run here; if not, why (a sentence). */
int avxbuf_clock_usable(const avxbuf_cpu *cpu, const char **why);

/* TSC ticks per second, calibrated against CLOCK_MONOTONIC once per
 * process (thread-safe; the first call takes ~20 ms). 0 where unusable. */
double avxbuf_tsc_hz(void);

/* The TSC now, after every earlier instruction has finished; 0 where
 * unusable. */
uint64_t avxbuf_tsc(void);

/* TSC ticks taken by rounds x AVXBUF_CHAIN_UNROLL dependent adds (imuls);
 * 0 for 0 rounds. Only where avxbuf_clock_usable. */
uint64_t avxbuf_chain_add(uint64_t rounds);
uint64_t avxbuf_chain_imul(uint64_t rounds);

/* The clock in GHz that a chain's ticks mean. */
double avxbuf_chain_ghz(uint64_t rounds, uint64_t ticks, int cycles_per_op);

#endif
