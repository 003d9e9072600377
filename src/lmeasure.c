/* Timing kernels from C, for avxbuf.tune (lua/avxbuf/tune.lua): at small
 * sizes a call from Lua costs more than the kernel and hides the
 * differences between kernels (docs/benchmarks.md, "Kernels from C"), so a
 * crossover is only seen when the repetitions run here. Kernels are named as
 * avxbuf.kernels() names them; "libc" is the C library's. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lmodule.h"
#include "lfuncs.h"
#include "lembed.h"

#define MAX_KERNELS 8
#define MAX_ROUNDS 64

static double now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static const avxbuf_kernel *kernel_named(lua_State *L, int arg, const char *name)
{
  for (int i = 0; avxbuf_kernel_list[i]; i++) {
    const avxbuf_kernel *k = avxbuf_kernel_list[i];
    if (strcmp(k->name, name) == 0) {
      if (!avxbuf_kernel_available(k))
        luaL_argerror(L, arg, lua_pushfstring(L, "kernel '%s' cannot run on this CPU", name));
      return k;
    }
  }
  luaL_argerror(L, arg, lua_pushfstring(L, "no kernel '%s' (avxbuf.kernels() lists them)", name));
  return NULL;
}

enum { OP_COPY, OP_ZERO, OP_FILL };

/* Field `name` of the table at argument 1, as an integer in [lo, hi]
 * (dflt when absent and dflt >= lo); errors name argument 1 and the field. */
static lua_Integer int_field(lua_State *L, const char *name, lua_Integer lo, lua_Integer hi, lua_Integer dflt)
{
  int isint;
  lua_getfield(L, 1, name);
  lua_Integer v = lua_tointegerx(L, -1, &isint);
  if (lua_isnil(L, -1) && dflt >= lo) v = dflt, isint = 1;
  lua_pop(L, 1);
  if (!isint || v < lo || v > hi)
    luaL_argerror(L, 1, lua_pushfstring(L, "field '%s' must be an integer from %d to %d", name, (int)lo, (int)hi));
  return v;
}

static void run(const avxbuf_kernel *k, int op, unsigned char *d, const unsigned char *s, size_t n, long reps)
{
  for (long r = 0; r < reps; r++) {
    if (op == OP_COPY) k->copy(d, s, n);
    else k->fill(d, op == OP_ZERO ? 0 : 0x5A, n);
  }
}

/* avxbuf.measure{op = "copy"|"zero"|"fill", size = n, kernels = {name, ...},
 * rounds = r [, min_time = seconds]} -> {{seconds per operation, one per
 * round}, ...} in the order of kernels (a name may come twice: the same
 * kernel timed twice gives the noise). Each round times every kernel once, in an order that
 * turns with the round, after an untimed call (a streaming kernel before
 * it has pushed the destination out of the cache); repetitions per timing
 * are set once, on the first kernel, to last min_time (default 20 us).
 * The destination is 2048 bytes past the source modulo 4096, away from
 * page aliasing, and both are 64-byte aligned. */
static int l_measure(lua_State *L)
{
  static const char *const ops[] = { "copy", "zero", "fill", NULL };
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_settop(L, 1);
  lua_getfield(L, 1, "op");
  const char *op_name = lua_tostring(L, -1);
  int op = 0;
  while (ops[op] && (op_name == NULL || strcmp(ops[op], op_name))) op++;
  if (ops[op] == NULL) luaL_argerror(L, 1, "field 'op' must be \"copy\", \"zero\" or \"fill\"");
  lua_pop(L, 1);
  lua_Integer size = int_field(L, "size", 1, (lua_Integer)1 << 30, 0);
  lua_Integer rounds = int_field(L, "rounds", 1, MAX_ROUNDS, 0);
  lua_getfield(L, 1, "min_time");
  double min_time = lua_isnil(L, -1) ? 20e-6 : lua_tonumber(L, -1);
  luaL_argcheck(L, min_time > 0 && min_time <= 1, 1, "field 'min_time' must be in (0, 1] seconds");
  lua_settop(L, 1);
  if (lua_getfield(L, 1, "kernels") != LUA_TTABLE) luaL_argerror(L, 1, "field 'kernels' must be a list of names");
  int nk = (int)luaL_len(L, 2);
  luaL_argcheck(L, nk >= 1 && nk <= MAX_KERNELS, 1, "from 1 to 8 kernels");
  const avxbuf_kernel *k[MAX_KERNELS];
  for (int i = 0; i < nk; i++) {
    lua_rawgeti(L, 2, i + 1);
    const char *name = lua_tostring(L, -1);
    if (name == NULL) luaL_argerror(L, 1, "field 'kernels' must be a list of names");
    k[i] = kernel_named(L, 1, name);
    lua_pop(L, 1);
  }

  /* The result tables first (they allocate), then the arena. */
  lua_createtable(L, nk, 0);
  for (int i = 0; i < nk; i++) {
    lua_createtable(L, (int)rounds, 0);
    lua_rawseti(L, 3, i + 1);
  }
  size_t n = (size_t)size, span = ((n + 4095) & ~(size_t)4095) + 4096;
  unsigned char *arena = NULL;
  if (posix_memalign((void **)&arena, 4096, 2 * span + 4096) != 0) return luaL_error(L, "not enough memory");
  memset(arena, 1, 2 * span + 4096);
  const unsigned char *src = arena + 64;
  unsigned char *dst = arena + span + 2048 + 64;

  double secs[MAX_KERNELS][MAX_ROUNDS];
  long reps = 1;
  for (;;) {
    double t0 = now();
    run(k[0], op, dst, src, n, reps);
    if (now() - t0 >= min_time || reps > (1L << 30)) break;
    reps *= 2;
  }
  for (int r = 0; r < rounds; r++) {
    for (int j = 0; j < nk; j++) {
      int i = (j + r) % nk;
      run(k[i], op, dst, src, n, 1);
      double t0 = now();
      run(k[i], op, dst, src, n, reps);
      secs[i][r] = (now() - t0) / (double)reps;
    }
  }
  free(arena);
  for (int i = 0; i < nk; i++) {
    lua_rawgeti(L, 3, i + 1);
    for (int r = 0; r < rounds; r++) {
      lua_pushnumber(L, secs[i][r]);
      lua_rawseti(L, -2, r + 1);
    }
    lua_pop(L, 1);
  }
  return 1;
}

/* avxbuf.tune([seconds]) -> settings, report, options: lua/avxbuf/tune.lua
 * (compiled in) decides from what avxbuf.measure times. */
static int l_tune(lua_State *L)
{
  lua_Number seconds = lua_isnoneornil(L, 1) ? 1 : lua_tonumber(L, 1);
  luaL_argcheck(L, lua_isnoneornil(L, 1) || lua_type(L, 1) == LUA_TNUMBER, 1, "seconds must be a number in (0, 600]");
  luaL_argcheck(L, seconds > 0 && seconds <= 600, 1, "seconds must be a number in (0, 600]");
  lua_settop(L, 0);
  lua_pushnumber(L, seconds);
  if (!avxbuf_require_embedded(L, "avxbuf.tune")) return lua_error(L);
  lua_insert(L, 1);
  lua_call(L, 1, 3);
  return 3;
}

const luaL_Reg avxbuf_measure_funcs[] = {
  { "measure", l_measure }, { "tune", l_tune },
  { NULL, NULL }
};
