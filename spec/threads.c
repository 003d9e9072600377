/* Four threads, each with its own lua_State and its own knobs, copying and
 * zeroing at the same time (CPU detection runs once, shared). Each checks
 * its results byte for byte and that its settings stayed its own. Built with
 * ThreadSanitizer by `make threads`. Usage: threads DIR (holding avxbuf.so). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include "harness.h"

#define THREADS 4

static const char *dir;

static const char *const knobs[THREADS] = {
  "{use_avx = 0}", "{kernel = 'libc'}", "{nontemporal_threshold = 4096, rep_stosb_threshold = 0}",
  "{vector_zeroing = false, avx3_threshold = 0}",
};

/* Runs in each state: copies, overlapping copies and zeroing checked against
 * string references, interleaved with reading its own config back. */
static const char *const work =
  "local a, knobs = require 'avxbuf', ...\n"
  "local want = a.configure(knobs)\n"
  "local src = {}\n"
  "for i = 1, 9000 do src[i] = string.char((i * 7 + #knobs) % 251) end\n"
  "src = table.concat(src)\n"
  "for round = 1, 150 do\n"
  "  local n = (round * 613) % 9000 + 1\n"
  "  local b = a.new(n + 64, 0x11)\n"
  "  a.copy(b, 33, src, 1, n)\n"
  "  assert(b:tostring(33, 32 + n) == src:sub(1, n), 'copy')\n"
  "  a.copy(b, 40, b, 33, n - 7 > 0 and n - 7 or 0)\n"
  "  a.zero(b, 1, 32)\n"
  "  assert(b:tostring(1, 32) == ('\\0'):rep(32), 'zero')\n"
  "  for k, v in pairs(a.config()) do assert(want[k] == v, 'setting ' .. k .. ' changed') end\n"
  "end\n"
  "return 'ok'\n";

static void *run(void *arg)
{
  long id = (long)arg;
  lua_State *L = open_state(dir);
  char chunk[256];
  snprintf(chunk, sizeof chunk, "return %s", knobs[id]);
  /* the work chunk, called with the knobs table; either way the top of the
   * stack ends up holding "ok" or the error */
  if (luaL_loadstring(L, work) == LUA_OK && luaL_dostring(L, chunk) == LUA_OK)
    lua_pcall(L, 1, 1, 0);
  const char *result = lua_tostring(L, -1);
  int ok = result && result[0] == 'o' && result[1] == 'k' && result[2] == '\0';
  printf("thread %ld (%s): %s\n", id, knobs[id], result ? result : "?");
  lua_close(L);
  return (void *)(long)ok;
}

int main(int argc, char **argv)
{
  if (argc != 2) { fprintf(stderr, "usage: threads DIR\n"); return 2; }
  dir = argv[1];
  /* The process holds the module from before the threads start until after
   * they end, as a host that loads it once does; each state's require and
   * lua_close then only count references to that one load. Without this,
   * ld.so's record of the module (its link map) is made by the first
   * thread's dlopen and freed by the last thread's dlclose, ordered by
   * glibc's internal loader lock, which ThreadSanitizer cannot see: it
   * reported a race in _dl_close_worker, as it does for any library loaded
   * and unloaded that way. */
  char path[4096];
  snprintf(path, sizeof path, "%s/avxbuf.so", dir);
  void *module = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (module == NULL) { fprintf(stderr, "threads: %s\n", dlerror()); return 2; }
  pthread_t t[THREADS];
  for (long i = 0; i < THREADS; i++) pthread_create(&t[i], NULL, run, (void *)i);
  int passed = 0;
  for (int i = 0; i < THREADS; i++) {
    void *ok;
    pthread_join(t[i], &ok);
    passed += ok != NULL;
  }
  dlclose(module);
  printf("threads: %d passed, %d failed\n", passed, THREADS - passed);
  return passed == THREADS ? 0 : 1;
}
