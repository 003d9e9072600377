/* Which processor this is compiled for. The SSE/AVX kernels, CPUID and the
 * string instructions exist only on x86; elsewhere every operation goes to
 * the C library, with the same API. */
#ifndef AVXBUF_ARCH_H
#define AVXBUF_ARCH_H

#if defined(__x86_64__)
#define AVXBUF_X86 1
#define AVXBUF_ARCH "x86_64"
#elif defined(__i386__)
/* The kernels' small moves are SSE2 code, and a 32-bit build may run on
 * processors without it (Debian's i386 baseline has none): with -msse2 (or
 * a -march that has it) i386 gets the x86 kernels, without it the C
 * library's. */
#ifdef __SSE2__
#define AVXBUF_X86 1
#endif
#define AVXBUF_ARCH "i386"
#elif defined(__aarch64__)
#define AVXBUF_ARCH "aarch64"
#elif defined(__arm__)
#define AVXBUF_ARCH "arm"
#elif defined(__powerpc64__)
#define AVXBUF_ARCH "ppc64"
#elif defined(__riscv)
#define AVXBUF_ARCH "riscv"
#else
#define AVXBUF_ARCH "unknown"
#endif

#endif
