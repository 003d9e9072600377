/* rep movsb / rep stosb. With ERMS (and FSRM for short copies) microcode
 * moves whole cache lines, without a vector register: the report behind
 * avxbuf found that only such a non-vector clear let a Cascade Lake core
 * leave licence 1. */
#include "core/arch.h"
#ifdef AVXBUF_X86
#include <string.h>
#include "kernels/kernels.h"
#include "kernels/small.h"

AVXBUF_KERNEL_ALIGN static void rep_movsb_copy(void *d, const void *s, size_t n)
{
  /* rep movsb runs forward; an overlap it would corrupt goes to memmove. */
  if (!forward_safe(d, s, n)) { memmove(d, s, n); return; }
  __asm__ volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(n) : : "memory");
}

AVXBUF_KERNEL_ALIGN static void rep_stosb_fill(void *d, int c, size_t n)
{
  __asm__ volatile("rep stosb" : "+D"(d), "+c"(n) : "a"(c) : "memory");
}

/* Each serves one operation; the other slots are libc's, so that every
 * kernel is complete. */
const avxbuf_kernel avxbuf_k_rep_movsb = { "rep_movsb", rep_movsb_copy, avxbuf_libc_fill, avxbuf_libc_find,
  avxbuf_libc_rfind, AVXBUF_FEATURE(F_ERMS), -1, 0, KR_STRING_COPY, NULL, 0, 0, NULL };
const avxbuf_kernel avxbuf_k_rep_stosb = { "rep_stosb", avxbuf_libc_copy, rep_stosb_fill, avxbuf_libc_find,
  avxbuf_libc_rfind, AVXBUF_FEATURE(F_ERMS), -1, 0, KR_STRING_FILL, NULL, 0, 0, NULL };
#endif /* AVXBUF_X86 */
