#include <stdio.h>
#include <string.h>
#include "core/settings.h"

const avxbuf_knob_info avxbuf_knobs[K_COUNT] = {
  [K_USE_AVX] = { "use_avx", KT_LEVEL },
  [K_MAX_VECTOR_SIZE] = { "max_vector_size", KT_WIDTH },
  [K_AVX3_THRESHOLD] = { "avx3_threshold", KT_BYTES },
  [K_VECTOR_ZEROING] = { "vector_zeroing", KT_BOOL },
  [K_REP_MOVSB_THRESHOLD] = { "rep_movsb_threshold", KT_BYTES },
  [K_REP_MOVSB_STOP_THRESHOLD] = { "rep_movsb_stop_threshold", KT_BYTES },
  [K_REP_STOSB_THRESHOLD] = { "rep_stosb_threshold", KT_BYTES },
  [K_REP_STOSB_STOP_THRESHOLD] = { "rep_stosb_stop_threshold", KT_BYTES },
  [K_NONTEMPORAL_THRESHOLD] = { "nontemporal_threshold", KT_BYTES },
  [K_MEMSET_NONTEMPORAL_THRESHOLD] = { "memset_nontemporal_threshold", KT_BYTES },
  [K_ZERO_NONTEMPORAL_THRESHOLD] = { "zero_nontemporal_threshold", KT_BYTES },
  [K_KERNEL] = { "kernel", KT_KERNEL },
};

const char *const avxbuf_kernel_modes[2] = { "auto", "libc" };

avxbuf_settings avxbuf_settings_unset(void)
{
  avxbuf_settings s;
  for (int k = 0; k < K_COUNT; k++) s.v[k] = AVXBUF_UNSET;
  return s;
}

int avxbuf_knob_find(const char *name, size_t len)
{
  for (int k = 0; k < K_COUNT; k++)
    if (strlen(avxbuf_knobs[k].name) == len && !memcmp(avxbuf_knobs[k].name, name, len))
      return k;
  return -1;
}

const char *avxbuf_knob_check(int knob, long long v)
{
  switch (avxbuf_knobs[knob].type) {
  case KT_LEVEL: return v >= 0 && v <= 3 ? NULL : "must be 0, 1, 2 or 3";
  case KT_WIDTH: return v == 16 || v == 32 || v == 64 ? NULL : "must be 16, 32 or 64";
  case KT_BYTES: return v >= 0 && v <= AVXBUF_MAX_BYTES ? NULL : "must be a byte count from 0 to 2^62";
  case KT_BOOL: return v == 0 || v == 1 ? NULL : "must be true or false";
  case KT_KERNEL: return v == KERNEL_AUTO || v == KERNEL_LIBC ? NULL : "must be \"auto\" or \"libc\"";
  }
  return "unknown knob";
}

static int word_is(const avxbuf_value *v, const char *word)
{
  return v->kind == KV_WORD && strlen(word) == v->len && !memcmp(v->word, word, v->len);
}

avxbuf_value avxbuf_value_of_text(const char *text, size_t len)
{
  avxbuf_value v = { KV_WORD, 0, text, len };
  if (len == 4 && !memcmp(text, "true", 4)) { v.kind = KV_BOOLEAN; v.integer = 1; return v; }
  if (len == 5 && !memcmp(text, "false", 5)) { v.kind = KV_BOOLEAN; v.integer = 0; return v; }
  size_t i = len > 0 && text[0] == '-';
  if (i == len) return v;
  long long n = 0;
  for (; i < len; i++) {
    if (text[i] < '0' || text[i] > '9') return v;
    /* past 2^62 every knob refuses it: saturate there, before it could overflow */
    n = n > AVXBUF_MAX_BYTES / 10 ? AVXBUF_MAX_BYTES + 1 : n * 10 + (text[i] - '0');
  }
  v.kind = KV_INTEGER;
  v.integer = n > AVXBUF_MAX_BYTES ? AVXBUF_MAX_BYTES + 1 : n;
  if (text[0] == '-') v.integer = -v.integer;
  return v;
}

const char *avxbuf_knob_value(int knob, const avxbuf_value *v, long long *out)
{
  switch (avxbuf_knobs[knob].type) {
  case KT_BOOL:
    if (v->kind != KV_BOOLEAN) return "must be true or false";
    *out = v->integer;
    return NULL;
  case KT_KERNEL:
    for (int m = 0; m < 2; m++)
      if (word_is(v, avxbuf_kernel_modes[m])) { *out = m; return NULL; }
    return "must be \"auto\" or \"libc\"";
  default:
    if (v->kind != KV_INTEGER) return "must be an integer";
    *out = v->integer;
    return avxbuf_knob_check(knob, v->integer);
  }
}

static void report(avxbuf_warn_fn warn, void *ud, const char *entry, size_t len, const char *what)
{
  char msg[256];
  snprintf(msg, sizeof msg, "avxbuf: AVXBUF_OPTIONS: ignoring '%.*s': %s",
           (int)(len > 64 ? 64 : len), entry, what);
  warn(ud, msg);
}

static int is_blank(char c)
{
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

static int is_separator(char c)
{
  return is_blank(c) || c == ',' || c == ';';
}

static size_t skip_blanks(const char *s)
{
  size_t n = 0;
  while (is_blank(s[n])) n++;
  return n;
}

/* The length of the run at s of characters that are neither separators
 * nor stop. */
static size_t token(const char *s, char stop)
{
  size_t n = 0;
  while (s[n] && !is_separator(s[n]) && s[n] != stop) n++;
  return n;
}

/* One entry at text (no separator first): applies it to req or says why
 * not (*err); returns its length. */
static size_t parse_entry(avxbuf_settings *req, const char *text, const char **err)
{
  size_t name_len = token(text, '='), at = name_len + skip_blanks(text + name_len);
  if (text[at] != '=') { *err = "expected name=value"; return name_len; }
  at++;
  size_t gap = skip_blanks(text + at), value_len = token(text + at + gap, '\0');
  const char *value = text + at + gap;
  /* "use_avx= vector_zeroing=false": the word after the blank is the next
   * entry, not this one's value */
  if (value_len == 0 || (gap > 0 && memchr(value, '=', value_len))) { *err = "no value"; return at; }
  int k = avxbuf_knob_find(text, name_len);
  if (name_len == 0) { *err = "no knob name"; }
  else if (k < 0) { *err = "unknown knob"; }
  else {
    avxbuf_value v = avxbuf_value_of_text(value, value_len);
    long long x;
    *err = avxbuf_knob_value(k, &v, &x);
    if (!*err) req->v[k] = x;
  }
  return at + gap + value_len;
}

int avxbuf_options_parse(avxbuf_settings *req, const char *text, avxbuf_warn_fn warn, void *ud)
{
  int bad = 0;
  for (;;) {
    while (is_separator(*text)) text++;
    if (!*text) return bad;
    const char *err = NULL;
    size_t len = parse_entry(req, text, &err);
    if (err) { report(warn, ud, text, len, err); bad++; }
    text += len;
  }
}
