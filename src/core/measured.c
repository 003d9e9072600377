#include <stdatomic.h>
#include <stdlib.h>
#include "core/clock.h"
#include "core/measured.h"

/* Published once: the record is written before `state` becomes DONE
 * (release), and read only after it is seen DONE (acquire). A measurement
 * whose A/A is too wide goes back to IDLE, for a later fill to try again,
 * up to TRIES: pages touched for the first time can run unevenly for a
 * while. */
enum { IDLE, MEASURING, DONE };
static _Atomic int state = IDLE;
static avxbuf_stosb_probe record;
static int tries;   /* (written only while MEASURING) */
#define TRIES 3

avxbuf_stosb_fact avxbuf_stosb_fact_now(void)
{
  return atomic_load_explicit(&state, memory_order_acquire) == DONE ? record.fact : STOSB_UNMEASURED;
}

const avxbuf_stosb_probe *avxbuf_stosb_probe_get(void)
{
  return atomic_load_explicit(&state, memory_order_acquire) == DONE ? &record : NULL;
}

static int by_value(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n)
{
  qsort(v, (size_t)n, sizeof *v, by_value);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Fills of a byte other than 0: AMD cores stream zeros fast, so that
 * rep stosb zeroing where it streams came near the vector loop (docs/
 * policy.md, "Other defaults"), while a fill of any other byte shows it. */
#define BYTE 0x5A

/* One fill by k timed, after an untimed one (below). */
static double twice(const avxbuf_kernel *k, unsigned char *d, size_t n)
{
  k->fill(d, BYTE, n);
  double t0 = avxbuf_now();
  k->fill(d, BYTE, n);
  return avxbuf_now() - t0;
}

/* Each kernel's fill is timed after an untimed one by the same kernel, so
 * that each meets the cache as its own repeated fills leave it (where rep
 * stosb streams, a vector fill right after it finds nothing cached). The
 * rounds interleave the kernels, so that a slow stretch (the other core,
 * another tenant) falls on both alike: vector, rep stosb, vector, ... A
 * round's ratio is rep stosb's time over the mean of the vector fills
 * either side of it; the ratio of those two is the A/A, and where its
 * median strays from 1 by 10% or more, the measurement says nothing. */
#define ROUNDS 5
#define MARGIN 0.1

static int within_margin(double aa)
{
  return aa > 1 - MARGIN && aa < 1 + MARGIN;
}

static void measure(unsigned char *d, size_t size, const avxbuf_kernel *rep, const avxbuf_kernel *vector)
{
  double rep_s[ROUNDS], vec_s[ROUNDS], ratio[ROUNDS], aa[ROUNDS];
  double v1 = twice(vector, d, size);
  for (int i = 0; i < ROUNDS; i++) {
    double r = twice(rep, d, size), v2 = twice(vector, d, size);
    rep_s[i] = r;
    vec_s[i] = (v1 + v2) / 2;
    ratio[i] = r / vec_s[i];
    aa[i] = v2 / v1;
    v1 = v2;
  }
  record.aa = median(aa, ROUNDS);
  record.size = size;
  record.rounds = ROUNDS;
  record.rep_ns = median(rep_s, ROUNDS) * 1e9;
  record.vector_ns = median(vec_s, ROUNDS) * 1e9;
  record.ratio = median(ratio, ROUNDS);
  record.vector = vector->name;
  record.fact = within_margin(record.aa) ? avxbuf_stosb_fact_of(record.ratio) : STOSB_UNMEASURED;
}

void avxbuf_stosb_measure(unsigned char *d, size_t size, const avxbuf_kernel *rep, const avxbuf_kernel *vector)
{
  int idle = IDLE;
  if (atomic_load_explicit(&state, memory_order_relaxed) != IDLE
      || !atomic_compare_exchange_strong_explicit(&state, &idle, MEASURING, memory_order_acquire,
                                                  memory_order_relaxed))
    return;
  measure(d, size, rep, vector);
  tries++;
  atomic_store_explicit(&state, record.fact == STOSB_UNMEASURED && tries < TRIES ? IDLE : DONE,
                        memory_order_release);
}
