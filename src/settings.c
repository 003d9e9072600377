#include <stdio.h>
#include <string.h>
#include "settings.h"

const avxbuf_knob_info avxbuf_knobs[K_COUNT] = {
  [K_USE_AVX] = { "use_avx", KT_LEVEL },
  [K_MAX_VECTOR_SIZE] = { "max_vector_size", KT_WIDTH },
  [K_AVX3_THRESHOLD] = { "avx3_threshold", KT_BYTES },
  [K_VECTOR_ZEROING] = { "vector_zeroing", KT_BOOL },
  [K_REP_MOVSB_THRESHOLD] = { "rep_movsb_threshold", KT_BYTES },
  [K_REP_MOVSB_STOP_THRESHOLD] = { "rep_movsb_stop_threshold", KT_BYTES },
  [K_REP_STOSB_THRESHOLD] = { "rep_stosb_threshold", KT_BYTES },
  [K_NONTEMPORAL_THRESHOLD] = { "nontemporal_threshold", KT_BYTES },
  [K_KERNEL] = { "kernel", KT_KERNEL },
};

const char *const avxbuf_kernel_modes[2] = { "auto", "libc" };

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

static int word_is(const char *text, size_t len, const char *word)
{
  return strlen(word) == len && !memcmp(text, word, len);
}

const char *avxbuf_knob_parse(int knob, const char *text, size_t len, long long *value)
{
  switch (avxbuf_knobs[knob].type) {
  case KT_BOOL:
    if (word_is(text, len, "true") || word_is(text, len, "1")) { *value = 1; return NULL; }
    if (word_is(text, len, "false") || word_is(text, len, "0")) { *value = 0; return NULL; }
    return "must be true or false";
  case KT_KERNEL:
    for (int m = 0; m < 2; m++)
      if (word_is(text, len, avxbuf_kernel_modes[m])) { *value = m; return NULL; }
    return "must be \"auto\" or \"libc\"";
  default: {
    /* Decimal digits only: no sign, no spaces, nothing strtoll would skip. */
    long long v = 0;
    if (len == 0) return "must be a number";
    for (size_t i = 0; i < len; i++) {
      if (text[i] < '0' || text[i] > '9') return "must be a whole number";
      if (v > (AVXBUF_MAX_BYTES - (text[i] - '0')) / 10) return "is too large";
      v = v * 10 + (text[i] - '0');
    }
    *value = v;
    return avxbuf_knob_check(knob, v);
  }
  }
}

static void report(avxbuf_warn_fn warn, void *ud, const char *entry, size_t len, const char *what)
{
  char msg[256];
  snprintf(msg, sizeof msg, "avxbuf: AVXBUF_OPTIONS: ignoring '%.*s': %s",
           (int)(len > 64 ? 64 : len), entry, what);
  warn(ud, msg);
}

int avxbuf_options_parse(avxbuf_settings *req, const char *text, avxbuf_warn_fn warn, void *ud)
{
  int bad = 0;
  while (*text) {
    size_t len = strcspn(text, ",");
    const char *eq = memchr(text, '=', len);
    if (len == 0) {
      /* empty entry (",," or a trailing comma): nothing to set */
    } else if (!eq) {
      report(warn, ud, text, len, "expected name=value"); bad++;
    } else {
      int k = avxbuf_knob_find(text, (size_t)(eq - text));
      long long v;
      const char *err = k < 0 ? "unknown knob"
                      : avxbuf_knob_parse(k, eq + 1, len - (size_t)(eq + 1 - text), &v);
      if (err) { report(warn, ud, text, len, err); bad++; }
      else req->v[k] = v;
    }
    text += len + (text[len] == ',');
  }
  return bad;
}
