/* Lua 5.4's patterns (string.find, string.match, string.gmatch) over bytes:
 * no Lua state here (lmatch.c pushes the results and raises the errors), so
 * the matcher runs the same on every Lua version and can be fuzzed alone.
 * It never allocates and never reads outside [subject, subject + len) or
 * [pattern, pattern + plen): neither needs a terminating NUL.
 *
 * Everything observable is 5.4's: what matches, which captures, which
 * error and when (a malformed piece is an error only once matching reaches
 * it, as in 5.4), and the nesting limit behind "pattern too complex". */
#ifndef AVXBUF_MATCH_H
#define AVXBUF_MATCH_H

#include <stddef.h>

#define AVXBUF_MATCH_MAXCAPTURES 32   /* LUA_MAXCAPTURES */
#define AVXBUF_MATCH_MAXDEPTH 200     /* 5.4's MAXCCALLS for the matcher */
/* Nesting never goes deeper than this, whatever the budget: see budget.
 * Each level is a match_step frame on the C stack, so this keeps a match
 * within a small part of the 1 MiB that some hosts give a thread
 * (docs/reliability.md); 5.4's own gmatch has no bound there. */
#define AVXBUF_MATCH_STACK_GUARD 1000

/* What a capture's len holds besides a byte count. */
#define AVXBUF_CAP_OPEN ((size_t)-1)       /* "(" seen, ")" not yet */
#define AVXBUF_CAP_POSITION ((size_t)-2)   /* "()": start is the position */

/* No previous match (gmatch's first step). */
#define AVXBUF_MATCH_NO_LAST ((size_t)-1)

enum { AVXBUF_MATCH_ERROR = -1, AVXBUF_MATCH_NONE = 0, AVXBUF_MATCH_FOUND = 1 };

typedef struct avxbuf_capture {
  size_t start;   /* offset in the subject */
  size_t len;     /* bytes, or AVXBUF_CAP_OPEN / AVXBUF_CAP_POSITION */
} avxbuf_capture;

typedef struct avxbuf_match {
  const unsigned char *subject, *subject_end;
  const unsigned char *pattern, *pattern_end;
  /* Nested steps allowed in each try: AVXBUF_MATCH_MAXDEPTH, except in a
   * gmatch iterator after an error. 5.4's gmatch keeps one counter for all
   * its calls and an error skips its restoring, so the next call gets what
   * was left where the error was raised: 200 minus the nesting there, and
   * after "pattern too complex" -1, which never counts down to 0 again (no
   * limit but the pattern's length: each nested step moves on in the
   * pattern). budget_left is that value after an error; a budget is 0..200
   * or -1 (any value below 0 acts the same). Nesting deeper than
   * AVXBUF_MATCH_STACK_GUARD is "pattern too complex" in any case (5.4
   * would recurse on, with patterns of thousands of pieces). */
  int budget, budget_left;
  int depth_left;   /* nested steps still allowed */
  /* The result: the match is [start, end); captures 0 .. level-1. */
  int level;
  int found;        /* a match was found (even if an error follows it) */
  size_t start, end;
  avxbuf_capture capture[AVXBUF_MATCH_MAXCAPTURES];
  /* On AVXBUF_MATCH_ERROR: 5.4's message (static, or in error_text). */
  const char *error;
  char error_text[48];
} avxbuf_match;

void avxbuf_match_init(avxbuf_match *ms, const void *subject, size_t len, const void *pattern, size_t plen);

/* string.find / string.match from offset init (0 .. len): a leading '^'
 * anchors the match at init; otherwise each offset from init to len is
 * tried in turn. Returns AVXBUF_MATCH_FOUND, _NONE or _ERROR. */
int avxbuf_match_find(avxbuf_match *ms, size_t init);

/* Where matches of a pattern can start (see match.c), worked out for a
 * nesting budget: a gmatch iterator keeps it for all its calls. */
typedef struct avxbuf_match_start {
  int kind, budget;
  int span;                 /* the pattern is that item alone, or with '+' */
  int test, negate, byte;   /* a class, or a byte */
  size_t open, close;       /* a set: offsets of its brackets in the pattern */
} avxbuf_match_start;

/* Works out *plan for gmatch's use of ms's pattern and budget (the subject
 * does not matter). */
void avxbuf_match_plan_gmatch(avxbuf_match *ms, avxbuf_match_start *plan);

/* One step of 5.4's string.gmatch from offset from (beyond len: none): no
 * anchor ('^' is an ordinary byte), and a match that ends at last (the end
 * of the step before, or AVXBUF_MATCH_NO_LAST) is passed over. plan: from
 * avxbuf_match_plan_gmatch, or NULL; one for another budget is not used. */
int avxbuf_match_gmatch(avxbuf_match *ms, size_t from, size_t last, const avxbuf_match_start *plan);

/* On a match whose captures include one left open, the result is
 * AVXBUF_MATCH_ERROR "unfinished capture" with found set and start/end
 * the match: 5.4 raises it while pushing the results, after gmatch has
 * moved past the match. */

/* Whether p has a byte of "^$*+?.([%-": without one string.find searches
 * plainly. */
int avxbuf_match_has_specials(const void *p, size_t n);

#endif
