/* The buffer's rules (buffer.h): growth, the line and the plain search. */
#include <string.h>
#include "core/buffer.h"

/* A doubling that would take a block past this stops just below it when
 * the need fits: glibc's malloc maps blocks from its largest dynamic mmap
 * threshold up (32 MiB on 64 bits, 16 on 32) afresh each time, so every page
 * of each new buffer faults again, while it serves and reuses smaller ones
 * from its heap once one that size has been freed (the page faults it
 * cost: docs/runs/figures-once-cited.md). Other allocators lose one
 * doubling step at most. */
#define GROWTH_SOFT_LIMIT ((size_t)4 * 1024 * 1024 * sizeof(long) - (size_t)64 * 1024)

/* Later blocks at least double (once, up to GROWTH_SOFT_LIMIT), so that
 * appending a byte at a time costs amortised O(1). */
int buffer_grow(buffer_stats *st, buffer_alloc alloc, void *ud, buffer *b, size_t need, size_t keep)
{
  if (need <= b->cap) return 1;
  size_t used = buffer_consumed(b), room = b->cap + used;   /* room: from the block's aligned start */
  /* Bytes consumed from the front make room by compaction, unless it
   * would leave less than an eighth of the room free (string.buffer's
   * rule, buf_more2 in lj_buf.c): then the block grows. So at least
   * room / 8 bytes are appended between two compactions, each of which
   * moves at most room bytes: at most 8 bytes moved per byte appended,
   * and consuming from the front stays O(1) amortised. */
  if (used > 0 && need <= room && room - need >= room / 8) {
    unsigned char *base = b->data - used;
    memmove(base, b->data, keep);
    b->data = base;
    b->cap = room;
    b->gen++;
    st->compactions++;
    st->compacted += keep;
    return 1;
  }
  size_t cap = room == 0 ? need : room > MAX_LENGTH / 2 ? MAX_LENGTH : 2 * room;
  if (cap > GROWTH_SOFT_LIMIT && room < GROWTH_SOFT_LIMIT && need <= GROWTH_SOFT_LIMIT)
    cap = GROWTH_SOFT_LIMIT;
  if (cap < need) cap = need;
  cap = (cap + BUFFER_ALIGN - 1) & ~(size_t)(BUFFER_ALIGN - 1);
  size_t size = cap + BUFFER_ALIGN - 1;
  /* Grown where it is when the allocator can (glibc remaps a large block
   * rather than copy it to fresh pages, so a doubling neither copies nor
   * faults its pages in again: docs/runs/figures-once-cited.md); the bytes
   * kept move only when the block's alignment slack changed or bytes were
   * consumed (they go to the new block's aligned start). On failure the
   * old block stays (lua_Alloc's contract). */
  size_t offset = b->block ? (size_t)(b->data - (unsigned char *)b->block) : 0;
  void *block = alloc(ud, b->block, b->block ? b->block_size : 0, size);
  if (block == NULL) return 0;
  uintptr_t start = (uintptr_t)block;
  unsigned char *data = (unsigned char *)((start + BUFFER_ALIGN - 1) & ~(uintptr_t)(BUFFER_ALIGN - 1));
  if ((uintptr_t)data != start + offset) memmove(data, (void *)(start + offset), keep);
  if (used > 0) {
    st->compactions++;
    st->compacted += keep;
  }
  size_t added = size - (b->block ? b->block_size : 0);
  b->block = block;
  b->block_size = size;
  b->data = data;
  b->cap = cap;
  b->gen++;
  st->unpaced += added;
  /* held counts what release() takes back, which it can only for a buffer
   * that still has its module (not one a finalizer brought back). */
  if (b->module != NULL) st->held += added;
  return 1;
}

int buffer_line(const buffer *b, size_t off, size_t *n)
{
  if (off >= b->len) return -1;
  /* memchr: glibc's is vectorised, and a newline is one byte. */
  const unsigned char *p = b->data + off, *nl = memchr(p, '\n', b->len - off);
  *n = nl ? (size_t)(nl - p) : b->len - off;
  return nl != NULL;
}

const unsigned char *buffer_search(const avxbuf_plan *p, const buffer *b, size_t off, size_t n,
                                   const unsigned char *needle, size_t m, int reverse)
{
  if (m > n) return NULL;
  return avxbuf_find_of(p, n, reverse)(b->data + off, n, needle, m);
}
