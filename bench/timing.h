/* What the C benchmarks (csweep.c, smallcopy.c) time with: the monotonic
 * clock in seconds (src/core/clock.h's avxbuf_now, as avxbuf.measure), and the
 * median of n samples (sorted in place). */
#ifndef AVXBUF_BENCH_TIMING_H
#define AVXBUF_BENCH_TIMING_H

#include <stdlib.h>

#include "core/clock.h"

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#endif
