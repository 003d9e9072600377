/* The pattern matcher of match.h: a backtracking matcher over bytes with
 * Lua 5.4's semantics. Written for this project; what it must do is what
 * the lua5.4 interpreter does, which spec/match_spec.lua and
 * fuzz/fuzz_match.c hold it to.
 *
 * Three things make the semantics more than "what matches":
 * - Errors are found lazily: a piece of the pattern is parsed only when
 *   matching reaches it, so string.find("abc", "x%") is nil (no position
 *   gets past the 'x') while string.find("xbc", "x%") is an error. Each
 *   step here parses the piece it is at, when it is at it.
 * - "pattern too complex" is 5.4's limit on nested matching steps (200),
 *   so the steps nest exactly where 5.4's do: a capture opening or closing,
 *   each try of what follows a quantified item ('?' once its item matched,
 *   '*', '+', '-'). Everything else continues in the same step (a loop).
 * - 5.4 reads the NUL after a Lua string at a few places (the byte after a
 *   pattern's last, the subject byte at its end for %f and %b). Here those
 *   reads are bounded and give 0, which answers the same. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "core/match.h"

typedef const unsigned char *ptr;

/* Records an error; every caller returns NULL (no match) up to the top,
 * and no alternative is tried once ms->error is set. */
static ptr fail(avxbuf_match *ms, const char *message)
{
  ms->error = message;
  ms->budget_left = ms->depth_left;
  return NULL;
}

/* The pattern byte at p, or 0 at its end (where 5.4 reads the NUL). */
static inline int pattern_byte(const avxbuf_match *ms, ptr p)
{
  return p < ms->pattern_end ? *p : 0;
}

/* The subject byte at s, or 0 at its end. */
static inline int subject_byte(const avxbuf_match *ms, ptr s)
{
  return s < ms->subject_end ? *s : 0;
}

/* What %cl tests, decoded once for a run of bytes: the class (its
 * lower-case letter), complemented when the letter is upper case; or, for
 * any other byte after '%', that byte itself (test 0). The classes are
 * <ctype.h>'s in the current locale, as Lua's (5.4 keeps %z, NUL, as a
 * deprecated class). */
typedef struct class_test {
  int test, negate, byte;
} class_test;

static inline class_test decode_class(int cl)
{
  class_test t = { tolower(cl), 0, cl };
  switch (t.test) {
  case 'a': case 'c': case 'd': case 'g': case 'l': case 'p': case 's': case 'u': case 'w': case 'x': case 'z':
    t.negate = isupper(cl) != 0;
    break;
  default:
    t.test = 0;
    break;
  }
  return t;
}

static inline int in_class(int c, class_test t)
{
  int in;
  switch (t.test) {
  case 'a': in = isalpha(c); break;
  case 'c': in = iscntrl(c); break;
  case 'd': in = isdigit(c); break;
  case 'g': in = isgraph(c); break;
  case 'l': in = islower(c); break;
  case 'p': in = ispunct(c); break;
  case 's': in = isspace(c); break;
  case 'u': in = isupper(c); break;
  case 'w': in = isalnum(c); break;
  case 'x': in = isxdigit(c); break;
  case 'z': in = c == 0; break;
  default: return c == t.byte;
  }
  return (in != 0) != t.negate;
}

/* Does byte c belong to class %cl? */
static int class_matches(int c, int cl)
{
  return in_class(c, decode_class(cl));
}

static inline int is_nul(int c) { return c == 0; }

/* How many bytes from s on (at most n) are in class t (want 1) or not in
 * it (want 0): one loop per class, so that each <ctype.h> test is inlined
 * with its table looked up once, not once a byte; and one per outcome the
 * run goes on with, so that a byte costs a test and a branch. */
static size_t class_run(ptr s, size_t n, class_test t, int want)
{
  size_t k = 0;
  int on = t.negate != want;   /* what is(byte) != 0 is while the run goes on */
#define RUN(is) \
  if (on) while (k < n && is(s[k])) k++; \
  else while (k < n && !is(s[k])) k++; \
  break
  switch (t.test) {
  case 'a': RUN(isalpha);
  case 'c': RUN(iscntrl);
  case 'd': RUN(isdigit);
  case 'g': RUN(isgraph);
  case 'l': RUN(islower);
  case 'p': RUN(ispunct);
  case 's': RUN(isspace);
  case 'u': RUN(isupper);
  case 'w': RUN(isalnum);
  case 'x': RUN(isxdigit);
  case 'z': RUN(is_nul);
  default: while (k < n && (s[k] == t.byte) == want) k++; break;
  }
#undef RUN
  return k;
}

/* Does byte c belong to the set [...] from open (its '[') to close (its
 * ']')? item_end has checked the brackets: a '%' inside is never the last
 * byte before close. */
static int set_matches(int c, ptr open, ptr close)
{
  ptr p = open + 1;
  int in = 1;   /* what finding c means: 0 for a complement [^...] */
  if (*p == '^') {
    in = 0;
    p++;
  }
  for (; p < close; p++) {
    if (*p == '%') {
      p++;
      if (class_matches(c, *p)) return in;
    } else if (p[1] == '-' && p + 2 < close) {   /* a range x-y ('-' last is literal) */
      if (p[0] <= c && c <= p[2]) return in;
      p += 2;
    } else if (*p == c) {
      return in;
    }
  }
  return !in;
}

/* The end of %x or of a set [...] at p; NULL when it is malformed. The
 * first byte of a set is always a member, so []] and [^]] hold ']'. */
static ptr class_or_set_end(avxbuf_match *ms, ptr p)
{
  int c = *p++;
  if (c == '%') {
    if (p == ms->pattern_end) return fail(ms, "malformed pattern (ends with '%')");
    return p + 1;
  }
  if (pattern_byte(ms, p) == '^') p++;
  do {
    if (p == ms->pattern_end) return fail(ms, "malformed pattern (missing ']')");
    c = *p++;
    if (c == '%' && p < ms->pattern_end) p++;   /* %] is a member, not the end */
  } while (pattern_byte(ms, p) != ']');
  return p + 1;
}

/* The end of the single-byte item at p (a byte, '.', %x or a set), that
 * is where its quantifier would be; NULL on a malformed item. */
static inline ptr item_end(avxbuf_match *ms, ptr p)
{
  return *p == '%' || *p == '[' ? class_or_set_end(ms, p) : p + 1;
}

/* Does the item [p, ep) match the subject byte at s? Never at the end. */
static inline int item_matches(const avxbuf_match *ms, ptr s, ptr p, ptr ep)
{
  if (s >= ms->subject_end) return 0;
  int c = *s;
  switch (*p) {
  case '.': return 1;
  case '%': return class_matches(c, p[1]);
  case '[': return set_matches(c, p, ep - 1);
  default: return *p == c;
  }
}

static ptr match_step(avxbuf_match *ms, ptr s, ptr p);

/* The rest of the pattern from p at s, one nesting level deeper: every
 * nested try goes through here, which keeps 5.4's depth limit. */
static ptr match_nested(avxbuf_match *ms, ptr s, ptr p)
{
  /* A budget is 0..200, or -1 (no limit: see match.h), which never counts
   * down to 0; then the guard stops it instead. */
  if (ms->depth_left == 0 || ms->depth_left == -AVXBUF_MATCH_STACK_GUARD) {
    ms->depth_left--;   /* where 5.4 leaves it */
    return fail(ms, "pattern too complex");
  }
  ms->depth_left--;
  ptr e = match_step(ms, s, p);
  ms->depth_left++;
  return e;
}

/* How many bytes from s on the item [p, ep) matches in a row: the loop of
 * item* and item+, with the item decoded once. */
static size_t count_matches(const avxbuf_match *ms, ptr s, ptr p, ptr ep)
{
  size_t avail = (size_t)(ms->subject_end - s), n = 0;
  switch (*p) {
  case '.':
    return avail;
  case '%':
    return class_run(s, avail, decode_class(p[1]), 1);
  case '[':
    while (n < avail && set_matches(s[n], p, ep - 1)) n++;
    return n;
  default:
    while (n < avail && s[n] == *p) n++;
    return n;
  }
}

/* item* and item+ (after its first byte): as many as match, then fewer
 * and fewer until the rest matches. */
static ptr expand_greedy(avxbuf_match *ms, ptr s, ptr p, ptr ep)
{
  size_t n = count_matches(ms, s, p, ep);
  for (;;) {
    ptr e = match_nested(ms, s + n, ep + 1);
    if (e || ms->error || n == 0) return e;
    n--;
  }
}

/* item-: the rest first, one more item only when the rest fails. */
static ptr expand_lazy(avxbuf_match *ms, ptr s, ptr p, ptr ep)
{
  for (;;) {
    ptr e = match_nested(ms, s, ep + 1);
    if (e || ms->error) return e;
    if (!item_matches(ms, s, p, ep)) return NULL;
    s++;
  }
}

/* "(" (len AVXBUF_CAP_OPEN) or "()" (AVXBUF_CAP_POSITION) at s; the
 * capture is dropped again when the rest fails. */
static ptr open_capture(avxbuf_match *ms, ptr s, ptr p, size_t len)
{
  if (ms->level >= AVXBUF_MATCH_MAXCAPTURES) return fail(ms, "too many captures");
  ms->capture[ms->level].start = (size_t)(s - ms->subject);
  ms->capture[ms->level].len = len;
  ms->level++;
  ptr e = match_nested(ms, s, p);
  if (e == NULL) ms->level--;
  return e;
}

/* ")" at s closes the innermost capture still open. */
static ptr close_capture(avxbuf_match *ms, ptr s, ptr p)
{
  int k = ms->level - 1;
  while (k >= 0 && ms->capture[k].len != AVXBUF_CAP_OPEN) k--;
  if (k < 0) return fail(ms, "invalid pattern capture");
  ms->capture[k].len = (size_t)(s - ms->subject) - ms->capture[k].start;
  ptr e = match_nested(ms, s, p);
  if (e == NULL) ms->capture[k].len = AVXBUF_CAP_OPEN;
  return e;
}

/* %bxy at s (p after "%b"): an x, then bytes up to the y that balances
 * it; the end of that, or NULL. */
static ptr match_balance(avxbuf_match *ms, ptr s, ptr p)
{
  if (ms->pattern_end - p < 2) return fail(ms, "malformed pattern (missing arguments to '%b')");
  if (s >= ms->subject_end || *s != p[0]) return NULL;
  int open = p[0], close = p[1];
  size_t depth = 1;
  while (++s < ms->subject_end) {
    if (*s == close) {   /* tested first: %bxx ends at the next x */
      if (--depth == 0) return s + 1;
    } else if (*s == open) {
      depth++;
    }
  }
  return NULL;
}

/* %f[set] at s (p after "%f"): the byte before s (NUL at the start) is
 * not in the set and the byte at s (NUL at the end) is. Returns the rest
 * of the pattern, or NULL (no match, or an error). */
static ptr match_frontier(avxbuf_match *ms, ptr s, ptr p, int *matched)
{
  *matched = 0;
  if (pattern_byte(ms, p) != '[') return fail(ms, "missing '[' after '%f' in pattern");
  ptr ep = item_end(ms, p);
  if (ep == NULL) return NULL;
  int before = s == ms->subject ? 0 : s[-1];
  *matched = !set_matches(before, p, ep - 1) && set_matches(subject_byte(ms, s), p, ep - 1);
  return ep;
}

/* %1 .. %9 at s: the same bytes as that capture, which must be closed. A
 * position capture has no bytes to repeat: it never matches (as in 5.4). */
static ptr match_backref(avxbuf_match *ms, ptr s, int digit)
{
  int k = digit - '1';
  if (k < 0 || k >= ms->level || ms->capture[k].len == AVXBUF_CAP_OPEN) {
    snprintf(ms->error_text, sizeof ms->error_text, "invalid capture index %%%d", k + 1);
    return fail(ms, ms->error_text);
  }
  size_t len = ms->capture[k].len;
  if (len == AVXBUF_CAP_POSITION || (size_t)(ms->subject_end - s) < len) return NULL;
  if (memcmp(ms->subject + ms->capture[k].start, s, len) != 0) return NULL;
  return s + len;
}

/* The pattern from p, at subject position s: the end of the match, or
 * NULL (no match, or ms->error). Pieces that cannot backtrack (a plain
 * item, %b, %f, a back-reference) continue in this loop; the rest nest. */
static ptr match_step(avxbuf_match *ms, ptr s, ptr p)
{
  for (;;) {
    if (p == ms->pattern_end) return s;
    switch (*p) {
    case '(':
      if (pattern_byte(ms, p + 1) == ')') return open_capture(ms, s, p + 2, AVXBUF_CAP_POSITION);
      return open_capture(ms, s, p + 1, AVXBUF_CAP_OPEN);
    case ')':
      return close_capture(ms, s, p + 1);
    case '$':
      if (p + 1 == ms->pattern_end) return s == ms->subject_end ? s : NULL;
      break;   /* elsewhere an ordinary byte */
    case '%': {
      int next = pattern_byte(ms, p + 1);
      if (next == 'b') {
        s = match_balance(ms, s, p + 2);
        if (s == NULL) return NULL;
        p += 4;
        continue;
      }
      if (next == 'f') {
        int matched;
        ptr rest = match_frontier(ms, s, p + 2, &matched);
        if (!matched) return NULL;
        p = rest;
        continue;
      }
      if (next >= '0' && next <= '9') {
        s = match_backref(ms, s, next);
        if (s == NULL) return NULL;
        p += 2;
        continue;
      }
      break;   /* a class such as %a or %% */
    }
    default:
      break;
    }

    /* A single-byte item and its quantifier, if any. */
    ptr ep = item_end(ms, p);
    if (ep == NULL) return NULL;
    int quantifier = pattern_byte(ms, ep);
    if (!item_matches(ms, s, p, ep)) {
      if (quantifier != '*' && quantifier != '?' && quantifier != '-') return NULL;
      p = ep + 1;   /* zero of them will do */
      continue;
    }
    switch (quantifier) {
    case '?': {
      ptr e = match_nested(ms, s + 1, ep + 1);
      if (e || ms->error) return e;
      p = ep + 1;   /* without the item */
      continue;
    }
    case '+': return expand_greedy(ms, s + 1, p, ep);
    case '*': return expand_greedy(ms, s, p, ep);
    case '-': return expand_lazy(ms, s, p, ep);
    default:
      s++;
      p = ep;
      continue;
    }
  }
}

void avxbuf_match_init(avxbuf_match *ms, const void *subject, size_t len, const void *pattern, size_t plen)
{
  ms->subject = (ptr)subject;
  ms->subject_end = ms->subject + len;
  ms->pattern = (ptr)pattern;
  ms->pattern_end = ms->pattern + plen;
  ms->budget = ms->budget_left = AVXBUF_MATCH_MAXDEPTH;
  ms->level = 0;
  ms->found = 0;
  ms->start = ms->end = 0;
  ms->error = NULL;
}

/* Where a match can start. When the pattern's first piece that looks at
 * the subject is a single-byte item without a quantifier that allows zero
 * of it ('+' or none), with only captures opening before it, a match can
 * start only where that item matches: elsewhere 5.4 tries and fails at
 * once, without nesting deeper than the captures or reaching anything
 * that raises an error. So those places are skipped in a tight loop
 * (memchr for a plain byte). Not when the captures before it would make
 * an error first: more than 32 of them, or a nesting budget they use up.
 *
 * When that item (with '+' or no quantifier) is the whole pattern, as in
 * gmatch("%a+"), the match there is the item's run (or its one byte): 5.4
 * gets it by nesting twice at most (so with a budget of 2 or more) and
 * raises nothing on the way, so it is taken without matching (span), which
 * saves the matcher's calls on the commonest gmatch (the instruction
 * counts: docs/runs/figures-once-cited.md). */
enum { START_ANYWHERE, START_BYTE, START_CLASS, START_SET };
enum { SPAN_NONE, SPAN_ONE, SPAN_RUN };

static void plan_start(avxbuf_match *ms, ptr p, avxbuf_match_start *f)
{
  f->kind = START_ANYWHERE;
  f->span = SPAN_NONE;
  f->budget = ms->budget;
  int opens = 0;
  while (p < ms->pattern_end && *p == '(') {
    p += pattern_byte(ms, p + 1) == ')' ? 2 : 1;
    opens++;
  }
  if (p == ms->pattern_end || opens > AVXBUF_MATCH_MAXCAPTURES) return;
  if (ms->budget >= 0 && ms->budget <= opens) return;
  int c = *p;
  if (c == '(' || c == ')' || (c == '$' && p + 1 == ms->pattern_end)) return;
  int next = pattern_byte(ms, p + 1);
  if (c == '%' && (next == 'b' || next == 'f' || (next >= '0' && next <= '9'))) return;
  ptr ep = item_end(ms, p);
  if (ep == NULL) {   /* malformed: matching raises it at the first place */
    ms->error = NULL;
    ms->budget_left = ms->budget;
    return;
  }
  int q = pattern_byte(ms, ep);
  if (q == '*' || q == '?' || q == '-') return;
  switch (c) {
  case '.':   /* anywhere but the end, which the loop tries last anyway */
    break;
  case '%': {
    class_test t = decode_class(next);
    f->kind = START_CLASS;
    f->test = t.test;
    f->negate = t.negate;
    f->byte = t.byte;
    break;
  }
  case '[':
    f->kind = START_SET;
    f->open = (size_t)(p - ms->pattern);
    f->close = (size_t)(ep - 1 - ms->pattern);
    break;
  default:
    f->kind = START_BYTE;
    f->byte = c;
    break;
  }
  if (f->kind != START_ANYWHERE && opens == 0 && (ms->budget < 0 || ms->budget >= 2)) {
    if (ep == ms->pattern_end) f->span = SPAN_ONE;
    else if (q == '+' && ep + 1 == ms->pattern_end) f->span = SPAN_RUN;
  }
}

/* How many bytes from s on are (want 1) or are not (want 0) the plan's
 * item (a plan of any kind but START_ANYWHERE). */
static size_t item_run(const avxbuf_match *ms, ptr s, const avxbuf_match_start *f, int want)
{
  size_t n = (size_t)(ms->subject_end - s), k = 0;
  switch (f->kind) {
  case START_BYTE:
    if (!want) {
      ptr at = memchr(s, f->byte, n);
      return at ? (size_t)(at - s) : n;
    }
    while (k < n && s[k] == f->byte) k++;
    return k;
  case START_CLASS:
    return class_run(s, n, (class_test){ f->test, f->negate, f->byte }, want);
  default:   /* START_SET */
    while (k < n && set_matches(s[k], ms->pattern + f->open, ms->pattern + f->close) == want) k++;
    return k;
  }
}

/* The first place from s on where the filter lets a match start, or NULL
 * (none before the end: there the item cannot match either). */
static ptr next_start(const avxbuf_match *ms, ptr s, const avxbuf_match_start *f)
{
  s += item_run(ms, s, f, 0);
  return s < ms->subject_end ? s : NULL;
}

/* The end of the match at s of a pattern that is all one item (f->span),
 * where next_start has found that item. */
static ptr span_end(const avxbuf_match *ms, ptr s, const avxbuf_match_start *f)
{
  return f->span == SPAN_ONE ? s + 1 : s + 1 + item_run(ms, s + 1, f, 1);
}

/* Tries p at each offset from `from` (only there when anchored) up to the
 * subject's end inclusive; a match ending at `last` does not count. plan:
 * where matches can start, or NULL to work it out here. */
static int search(avxbuf_match *ms, ptr p, size_t from, int anchored, size_t last, const avxbuf_match_start *plan)
{
  size_t len = (size_t)(ms->subject_end - ms->subject);
  ms->budget_left = ms->budget;
  if (from > len) return AVXBUF_MATCH_NONE;
  avxbuf_match_start here = { .kind = START_ANYWHERE, .span = SPAN_NONE };
  if (anchored) plan = &here;
  else if (plan == NULL || plan->budget != ms->budget) {
    plan_start(ms, p, &here);
    plan = &here;
  }
  for (ptr s = ms->subject + from;; s++) {
    if (plan->kind != START_ANYWHERE) {
      s = next_start(ms, s, plan);
      if (s == NULL) return AVXBUF_MATCH_NONE;
    }
    ms->level = 0;
    ms->depth_left = ms->budget;
    ptr e = plan->span != SPAN_NONE ? span_end(ms, s, plan) : match_nested(ms, s, p);
    if (e && (size_t)(e - ms->subject) != last) {
      ms->found = 1;
      ms->start = (size_t)(s - ms->subject);
      ms->end = (size_t)(e - ms->subject);
      for (int k = 0; k < ms->level; k++)
        if (ms->capture[k].len == AVXBUF_CAP_OPEN) {
          ms->error = "unfinished capture";
          return AVXBUF_MATCH_ERROR;
        }
      return AVXBUF_MATCH_FOUND;
    }
    if (ms->error) return AVXBUF_MATCH_ERROR;
    if (anchored || s == ms->subject_end) return AVXBUF_MATCH_NONE;
  }
}

int avxbuf_match_find(avxbuf_match *ms, size_t init)
{
  ptr p = ms->pattern;
  int anchored = p < ms->pattern_end && *p == '^';
  return search(ms, p + anchored, init, anchored, AVXBUF_MATCH_NO_LAST, NULL);
}

void avxbuf_match_plan_gmatch(avxbuf_match *ms, avxbuf_match_start *plan)
{
  plan_start(ms, ms->pattern, plan);
}

int avxbuf_match_gmatch(avxbuf_match *ms, size_t from, size_t last, const avxbuf_match_start *plan)
{
  return search(ms, ms->pattern, from, 0, last, plan);
}

int avxbuf_match_has_specials(const void *p, size_t n)
{
  const unsigned char *b = p;
  for (size_t k = 0; k < n; k++) {
    switch (b[k]) {
    case '^': case '$': case '*': case '+': case '?': case '.': case '(': case '[': case '%': case '-':
      return 1;
    default:
      break;
    }
  }
  return 0;
}
