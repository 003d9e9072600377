/* Two Lua states in one process, each with its own avxbuf knobs: a setting
 * made in one must not be seen by the other. Usage: two_states DIR, where
 * DIR holds the avxbuf.so to test. Prints "ok" or what went wrong. */
#include <stdio.h>
#include <string.h>
#include "harness.h"

/* Runs code in L; returns its string result, or the error message. */
static const char *eval(lua_State *L, const char *code)
{
  (void)luaL_dostring(L, code);
  return lua_tostring(L, -1);
}

int main(int argc, char **argv)
{
  if (argc != 2) { fprintf(stderr, "usage: two_states DIR\n"); return 2; }
  lua_State *a = open_state(argv[1]), *b = open_state(argv[1]);
  const char *steps[][3] = {
    /* state, code, expected result */
    { "a", "avxbuf = require 'avxbuf'; return avxbuf.configure{use_avx = 0}.kernel", "auto" },
    { "b", "avxbuf = require 'avxbuf'; return avxbuf.configure{kernel = 'libc'}.kernel", "libc" },
    { "a", "return avxbuf.kernel('copy', 100)", "sse2" },
    { "b", "return avxbuf.kernel('copy', 100)", "libc" },
    { "a", "return avxbuf.config().kernel", "auto" },
    { "b", "return tostring(avxbuf.config().use_avx == avxbuf.cpu().default.use_avx)", "true" },
    { "a", "avxbuf.reset(); return tostring(avxbuf.config().use_avx == avxbuf.cpu().default.use_avx)", "true" },
    { "b", "return avxbuf.kernel('zero', 100)", "libc" },
  };
  int failed = 0;
  for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
    lua_State *L = steps[i][0][0] == 'a' ? a : b;
    const char *got = eval(L, steps[i][1]);
    if (got == NULL || strcmp(got, steps[i][2]) != 0) {
      printf("state %s: %s -> %s, expected %s\n", steps[i][0], steps[i][1],
             got ? got : "(nil)", steps[i][2]);
      failed = 1;
    }
    lua_settop(L, 0);
  }
  lua_close(a);
  lua_close(b);
  if (!failed) printf("ok\n");
  return failed;
}
