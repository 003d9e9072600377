/* The knobs: their names, types and valid values, and the AVXBUF_OPTIONS
 * parser. Settings are plain numbers so that one table describes them all. */
#ifndef AVXBUF_SETTINGS_H
#define AVXBUF_SETTINGS_H

#include <stddef.h>

typedef enum avxbuf_knob {
  K_USE_AVX, K_MAX_VECTOR_SIZE, K_AVX3_THRESHOLD, K_VECTOR_ZEROING,
  K_REP_MOVSB_THRESHOLD, K_REP_MOVSB_STOP_THRESHOLD, K_REP_STOSB_THRESHOLD, K_REP_STOSB_STOP_THRESHOLD,
  K_NONTEMPORAL_THRESHOLD,
  K_MEMSET_NONTEMPORAL_THRESHOLD, K_ZERO_NONTEMPORAL_THRESHOLD, K_KERNEL,
  K_COUNT
} avxbuf_knob;

typedef enum { KT_LEVEL, KT_WIDTH, KT_BYTES, KT_BOOL, KT_KERNEL } avxbuf_knob_type;

typedef struct avxbuf_knob_info {
  const char *name;
  avxbuf_knob_type type;
} avxbuf_knob_info;

extern const avxbuf_knob_info avxbuf_knobs[K_COUNT];

/* Values of K_KERNEL. */
enum { KERNEL_AUTO, KERNEL_LIBC };
extern const char *const avxbuf_kernel_modes[2];

#define AVXBUF_UNSET (-1LL)
#define AVXBUF_MAX_BYTES (1LL << 62)

typedef struct avxbuf_settings { long long v[K_COUNT]; } avxbuf_settings;

/* Settings with every knob AVXBUF_UNSET: the policy's defaults apply. */
avxbuf_settings avxbuf_settings_unset(void);

/* Index of the knob called name[0..len), or -1. */
int avxbuf_knob_find(const char *name, size_t len);

/* NULL when value is valid for knob, else what is wrong with it. */
const char *avxbuf_knob_check(int knob, long long value);

/* A knob's value before it is judged, as configure{} got it from Lua or as
 * AVXBUF_OPTIONS spells it: both are read into one of these kinds and then
 * judged by avxbuf_knob_value, so the two paths accept the same values and
 * give the same reasons. */
typedef enum { KV_BOOLEAN, KV_INTEGER, KV_WORD, KV_OTHER } avxbuf_value_kind;
typedef struct avxbuf_value {
  avxbuf_value_kind kind;
  long long integer;   /* KV_BOOLEAN 0 or 1; KV_INTEGER the value, beyond 2^62 saturated */
  const char *word;    /* KV_WORD: word[0..len) */
  size_t len;
} avxbuf_value;

/* What text[0..len) spells: true or false, a decimal integer (an optional
 * minus sign and digits), or else a word. */
avxbuf_value avxbuf_value_of_text(const char *text, size_t len);

/* Judges v as a value of knob: NULL with *out set, or what is wrong with it. */
const char *avxbuf_knob_value(int knob, const avxbuf_value *v, long long *out);

/* Applies "name=value" entries to req: entries are separated by blanks,
 * commas or semicolons, and blanks around the '=' are allowed. Each bad
 * entry is reported through warn (a complete message naming it and why)
 * and skipped, the others apply; returns how many were bad. */
typedef void (*avxbuf_warn_fn)(void *ud, const char *message);
int avxbuf_options_parse(avxbuf_settings *req, const char *text, avxbuf_warn_fn warn, void *ud);

#endif
