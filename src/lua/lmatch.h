/* The plain search of lmatch.c, which find, rfind and split's separator
 * share: one place picks the kernel and calls it. */
#ifndef AVXBUF_LMATCH_H
#define AVXBUF_LMATCH_H

#include "lua/lmodule.h"

/* The first (reverse: the last) occurrence of needle (m > 0 bytes) that
 * lies within the n bytes of b at offset off, or NULL; with the kernel b's
 * plan picks for n bytes. */
const unsigned char *avxbuf_search(lua_State *L, const buffer *b, size_t off, size_t n,
                                   const unsigned char *needle, size_t m, int reverse);

#endif
