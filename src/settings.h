/* The knobs: their names, types and valid values, and the AVXBUF_OPTIONS
 * parser. Settings are plain numbers so that one table describes them all. */
#ifndef AVXBUF_SETTINGS_H
#define AVXBUF_SETTINGS_H

#include <stddef.h>

typedef enum avxbuf_knob {
  K_USE_AVX, K_MAX_VECTOR_SIZE, K_AVX3_THRESHOLD, K_VECTOR_ZEROING,
  K_REP_MOVSB_THRESHOLD, K_REP_MOVSB_STOP_THRESHOLD, K_REP_STOSB_THRESHOLD, K_NONTEMPORAL_THRESHOLD, K_KERNEL,
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

/* Index of the knob called name[0..len), or -1. */
int avxbuf_knob_find(const char *name, size_t len);

/* NULL when value is valid for knob, else what is wrong with it. */
const char *avxbuf_knob_check(int knob, long long value);

/* Parses text[0..len) as a value of knob: NULL on success, else why not. */
const char *avxbuf_knob_parse(int knob, const char *text, size_t len, long long *value);

/* Applies "name=value,name=value" to req. Each bad entry is reported through
 * warn (a complete message) and skipped; returns how many were bad. */
typedef void (*avxbuf_warn_fn)(void *ud, const char *message);
int avxbuf_options_parse(avxbuf_settings *req, const char *text, avxbuf_warn_fn warn, void *ud);

#endif
