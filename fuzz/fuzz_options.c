/* libFuzzer: the AVXBUF_OPTIONS parser on arbitrary text. Whatever it
 * accepts must be a valid value of a real knob; warnings are complete
 * strings; nothing reads or writes out of bounds (ASan). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "core/settings.h"

static void warn(void *ud, const char *message)
{
  size_t *count = ud;
  if (strlen(message) >= 256 || strncmp(message, "avxbuf: AVXBUF_OPTIONS: ignoring '", 34) != 0) abort();
  (*count)++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  char *text = malloc(size + 1);
  memcpy(text, data, size);
  text[size] = '\0';
  avxbuf_settings req = avxbuf_settings_unset();
  size_t warnings = 0;
  int bad = avxbuf_options_parse(&req, text, warn, &warnings);
  if (bad < 0 || (size_t)bad != warnings) abort();
  for (int k = 0; k < K_COUNT; k++)
    if (req.v[k] != AVXBUF_UNSET && avxbuf_knob_check(k, req.v[k]) != NULL) abort();
  free(text);
  return 0;
}
