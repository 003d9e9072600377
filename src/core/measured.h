/* Facts about this machine that CPUID cannot give, measured in this process
 * when first needed, once (thread-safe). The policy takes them as inputs
 * (policy.h); no decisions here. */
#ifndef AVXBUF_MEASURED_H
#define AVXBUF_MEASURED_H

#include <stddef.h>
#include "core/policy.h"
#include "kernels/kernels.h"

/* One measurement of rep stosb against the temporal vector fill. */
typedef struct avxbuf_stosb_probe {
  size_t size;                /* bytes filled by each */
  int rounds;                 /* timed rounds: rep stosb, then vector (each after an untimed fill of its own) */
  double rep_ns, vector_ns;   /* medians of the rounds */
  double ratio;               /* median of rep stosb's time over the mean of its round's two vector fills */
  double aa;                  /* the A/A: median of the second vector fill's time over the first's */
  const char *vector;         /* the vector kernel's name */
  avxbuf_stosb_fact fact;     /* avxbuf_stosb_fact_of(ratio), or STOSB_UNMEASURED where the A/A was too wide */
} avxbuf_stosb_probe;

/* What has been measured: STOSB_UNMEASURED before the measurement ends. */
avxbuf_stosb_fact avxbuf_stosb_fact_now(void);

/* The measurement, or NULL before it ends. */
const avxbuf_stosb_probe *avxbuf_stosb_probe_get(void);

/* Measures on d[0..size), unless this process has measured already or
 * another thread is measuring. d is the destination of a fill the caller is
 * about to make, which must follow: the measurement leaves other bytes
 * there. */
void avxbuf_stosb_measure(unsigned char *d, size_t size, const avxbuf_kernel *rep, const avxbuf_kernel *vector);

#endif
