/* Measuring from C: kernels timed for avxbuf.tune (lua/avxbuf/tune.lua),
 * and the core clock (src/core/clock.h), alone or right after a burst of a
 * kernel, for avxbuf.licence (lua/avxbuf/licence.lua). At small sizes a
 * call from Lua costs more than the kernel and hides the differences
 * between kernels (docs/benchmarks.md, "Kernels from C"), so a crossover is
 * only seen when the repetitions run here; and a clock reading must follow
 * the burst with nothing in between. Kernels are named as avxbuf.kernels()
 * names them; "libc" is the C library's. */
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "lua/largs.h"
#include "lua/lmodule.h"
#include "lua/lfuncs.h"
#include "lua/lembed.h"
#include "core/op.h"

#define MAX_KERNELS 8
#define MAX_ROUNDS 64
#define MAX_CLOCK_ROWS 16
#define MAX_ROWS MAX_CLOCK_ROWS   /* of either's results */

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

/* The operation a kernel is timed at: "copy", "zero" or "fill" (a search
 * is not timed here); -1 for any other name, NULL included. */
static int measured_op(const char *name)
{
  for (int op = 0; op < OP_COUNT; op++)
    if (op != OP_FIND && name && strcmp(avxbuf_op_names[op], name) == 0) return op;
  return -1;
}

/* The values of n rows by rounds into the n lists (made before) of the
 * table at index 3. */
static void set_results(lua_State *L, int n, int rounds, double (*v)[MAX_ROUNDS])
{
  for (int i = 0; i < n; i++) {
    lua_rawgeti(L, 3, i + 1);
    for (int r = 0; r < rounds; r++) {
      lua_pushnumber(L, v[i][r]);
      lua_rawseti(L, -2, r + 1);
    }
    lua_pop(L, 1);
  }
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
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_settop(L, 1);
  lua_getfield(L, 1, "op");
  int op = measured_op(lua_tostring(L, -1));
  if (op < 0) luaL_argerror(L, 1, "field 'op' must be \"copy\", \"zero\" or \"fill\"");
  lua_pop(L, 1);
  lua_Integer size = avxbuf_intfield(L, 1, "size", 1, (lua_Integer)1 << 30, 0);
  lua_Integer rounds = avxbuf_intfield(L, 1, "rounds", 1, MAX_ROUNDS, 0);
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

  double secs[MAX_ROWS][MAX_ROUNDS];
  long reps = 1;
  for (;;) {
    double t0 = avxbuf_now();
    run(k[0], op, dst, src, n, reps);
    if (avxbuf_now() - t0 >= min_time || reps > (1L << 30)) break;
    reps *= 2;
  }
  for (int r = 0; r < rounds; r++) {
    for (int j = 0; j < nk; j++) {
      int i = (j + r) % nk;
      run(k[i], op, dst, src, n, 1);
      double t0 = avxbuf_now();
      run(k[i], op, dst, src, n, reps);
      secs[i][r] = (avxbuf_now() - t0) / (double)reps;
    }
  }
  free(arena);
  set_results(L, nk, (int)rounds, secs);
  return 1;
}

/* The clock over a window of adds (rounded down to whole chain rounds), or
 * of imuls as long. */
static double window_ghz(uint64_t rounds) { return avxbuf_chain_ghz(rounds, avxbuf_chain_add(rounds), 1); }
static double imul_ghz(uint64_t rounds)
{
  rounds /= AVXBUF_IMUL_CYCLES;
  return avxbuf_chain_ghz(rounds, avxbuf_chain_imul(rounds), AVXBUF_IMUL_CYCLES);
}

/* The probe's window: argument or field `adds`, 1600 to 2^30 (~0.5 us to
 * ~0.3 s at 3 GHz), by default 96000 (~30 us). */
#define MIN_ADDS 1600
#define MAX_ADDS ((lua_Integer)1 << 30)
#define DEFAULT_ADDS 96000

/* Pushes nil and why, when the probe cannot run here. */
static int clock_unusable(lua_State *L)
{
  const char *why;
  if (!avxbuf_clock_usable(avxbuf_cpu_get(), &why)) {
    luaL_pushfail(L);
    lua_pushstring(L, why);
    return 2;
  }
  if (avxbuf_tsc_hz() > 0) return 0;
  luaL_pushfail(L);
  lua_pushliteral(L, "the TSC did not advance against CLOCK_MONOTONIC");
  return 2;
}

/* The TSC ticks of us microseconds. */
static uint64_t ticks_of(lua_Integer us) { return (uint64_t)((double)us * 1e-6 * avxbuf_tsc_hz()); }

/* avxbuf.coreclock([adds [, windows]]) -> GHz, {add_ghz, imul_ghz, ratio,
 * agree, tsc_ghz, seconds} | nil, reason. Five windows of each chain,
 * interleaved; each chain's highest reading is kept, as an interrupt inside
 * a window only ever lowers it (a window of one chain is ~30 us: the host
 * takes the CPU or another thread shares its core now and then, and an
 * interleaved window of each is then far apart). ratio: imul's best over
 * add's best; agree: within 2%. windows (1 to 64): no warm-up and that many
 * windows of each, to read the clock that the work just done left (a
 * benchmark's reading, inside the ~0.7 ms a lower licence is held). */
static int l_coreclock(lua_State *L)
{
  lua_Integer adds = optint(L, 1, DEFAULT_ADDS);
  luaL_argcheck(L, adds >= MIN_ADDS && adds <= MAX_ADDS, 1, "adds must be an integer from 1600 to 2^30");
  int quick = !lua_isnoneornil(L, 2);
  lua_Integer windows = optint(L, 2, 5);
  luaL_argcheck(L, windows >= 1 && windows <= 64, 2, "windows must be an integer from 1 to 64");
  int fail = clock_unusable(L);
  if (fail) return fail;
  uint64_t r_add = (uint64_t)adds / AVXBUF_CHAIN_UNROLL;
  uint64_t r_imul = r_add / AVXBUF_IMUL_CYCLES;
  double add = 0, imul = 0;
  /* ~1 ms of the chain first: its code in the caches, its branch learnt,
   * and a core that was idle brought to its running clock. */
  uint64_t warm = quick ? 0 : ticks_of(1000), t0 = avxbuf_tsc();
  while (avxbuf_tsc() - t0 < warm) avxbuf_chain_add(64);
  for (lua_Integer i = 0; i < windows; i++) {
    double a = window_ghz(r_add);
    double m = avxbuf_chain_ghz(r_imul, avxbuf_chain_imul(r_imul), AVXBUF_IMUL_CYCLES);
    if (a > add) add = a;
    if (m > imul) imul = m;
  }
  double ratio = add > 0 ? imul / add : 0;
  lua_pushnumber(L, add);
  lua_createtable(L, 0, 6);
  lua_pushnumber(L, add);
  lua_setfield(L, -2, "add_ghz");
  lua_pushnumber(L, imul);
  lua_setfield(L, -2, "imul_ghz");
  lua_pushnumber(L, ratio);
  lua_setfield(L, -2, "ratio");
  lua_pushboolean(L, ratio >= 0.98 && ratio <= 1.02);
  lua_setfield(L, -2, "agree");
  lua_pushnumber(L, avxbuf_tsc_hz() / 1e9);
  lua_setfield(L, -2, "tsc_ghz");
  lua_pushnumber(L, add > 0 ? (double)(r_add * AVXBUF_CHAIN_UNROLL) / (add * 1e9) : 0);
  lua_setfield(L, -2, "seconds");
  return 2;
}

typedef struct clock_row {
  const avxbuf_kernel *kernel;   /* NULL: the scalar add chain */
  int op;
} clock_row;

/* Runs the row's work for at least `ticks` TSC ticks: its kernel over
 * n bytes again and again (8 calls between looks at the TSC), or the add
 * chain. */
static void burst(const clock_row *w, unsigned char *d, const unsigned char *s, size_t n, uint64_t ticks)
{
  uint64_t t0 = avxbuf_tsc();
  do {
    if (w->kernel) run(w->kernel, w->op, d, s, n, 8);
    else avxbuf_chain_add(64);
  } while (avxbuf_tsc() - t0 < ticks);
}

/* avxbuf.measure_clock{rows = {{kernel = name, op = "copy"|"zero"|"fill"}
 * or {kernel = "scalar"}, ...}, rounds = r [, size = bytes, burst_us = us,
 * settle_us = us, adds = n, chain = "add"|"imul"]} -> {{GHz, one per round},
 * ...} in the order of
 * rows | nil, reason. Each reading: the scalar chain for settle_us (default
 * 5000: a core leaves a lower licence ~0.7 ms after the last wide
 * instruction on Skylake-SP, Travis Downs' measurements, and a host's power
 * management can take longer: docs/clock.md), then the row's work
 * for burst_us (default 200: a licence change takes effect within ~20 us),
 * then at once two windows of the chain (by default add; imul, as long, is
 * the second way of measuring the same clock), the higher kept (an interrupt
 * or a passing dip of the host's clock lowers one). Each round reads every row
 * once, in an order shuffled anew each round. size (default 4096) bytes of
 * source and destination stay in the L1 cache. */
static int l_measure_clock(lua_State *L)
{
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_settop(L, 1);
  lua_Integer rounds = avxbuf_intfield(L, 1, "rounds", 1, MAX_ROUNDS, 0);
  lua_Integer size = avxbuf_intfield(L, 1, "size", 64, (lua_Integer)1 << 20, 4096);
  lua_Integer burst_us = avxbuf_intfield(L, 1, "burst_us", 1, 100000, 200);
  lua_Integer settle_us = avxbuf_intfield(L, 1, "settle_us", 0, 100000, 5000);
  lua_Integer adds = avxbuf_intfield(L, 1, "adds", MIN_ADDS, MAX_ADDS, DEFAULT_ADDS);
  lua_getfield(L, 1, "chain");
  const char *chain = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
  int imul = chain && strcmp(chain, "imul") == 0;
  if (!lua_isnil(L, -1) && !imul && (chain == NULL || strcmp(chain, "add") != 0))
    luaL_argerror(L, 1, "field 'chain' must be \"add\" or \"imul\"");
  lua_pop(L, 1);
  if (lua_getfield(L, 1, "rows") != LUA_TTABLE) luaL_argerror(L, 1, "field 'rows' must be a list of tables");
  lua_Integer len = luaL_len(L, 2);
  luaL_argcheck(L, len >= 1 && len <= MAX_CLOCK_ROWS, 1, "from 1 to 16 rows");
  int nr = (int)len;
  clock_row rows[MAX_CLOCK_ROWS];
  for (int i = 0; i < nr; i++) {
    lua_rawgeti(L, 2, i + 1);   /* (it returns the type from 5.3 on only) */
    if (!lua_istable(L, -1)) luaL_argerror(L, 1, "field 'rows' must be a list of tables");
    lua_getfield(L, -1, "kernel");
    const char *name = lua_tostring(L, -1);
    if (name == NULL) luaL_argerror(L, 1, "each row needs a field 'kernel' (a name, or \"scalar\")");
    rows[i].kernel = strcmp(name, "scalar") == 0 ? NULL : kernel_named(L, 1, name);
    lua_getfield(L, -2, "op");
    int op = measured_op(lua_tostring(L, -1));
    if (rows[i].kernel && op < 0)
      luaL_argerror(L, 1, "a kernel's row needs field 'op': \"copy\", \"zero\" or \"fill\"");
    rows[i].op = op;
    lua_pop(L, 3);
  }
  int fail = clock_unusable(L);
  if (fail) return fail;

  /* The result tables first (they allocate), then the arena. */
  lua_createtable(L, nr, 0);
  for (int i = 0; i < nr; i++) {
    lua_createtable(L, (int)rounds, 0);
    lua_rawseti(L, 3, i + 1);
  }
  size_t n = (size_t)size;
  unsigned char *arena = NULL;
  if (posix_memalign((void **)&arena, 4096, 2 * n + 4096) != 0) return luaL_error(L, "not enough memory");
  memset(arena, 1, 2 * n + 4096);
  const unsigned char *src = arena;
  unsigned char *dst = arena + n + 2048;   /* away from page aliasing */

  uint64_t burst_ticks = ticks_of(burst_us), settle_ticks = ticks_of(settle_us);
  uint64_t window = (uint64_t)adds / AVXBUF_CHAIN_UNROLL;
  double ghz[MAX_ROWS][MAX_ROUNDS];
  int order[MAX_CLOCK_ROWS];
  uint32_t seed = (uint32_t)avxbuf_tsc() | 1;   /* each call orders its rounds afresh */
  for (int i = 0; i < nr; i++) order[i] = i;
  for (int r = 0; r < rounds; r++) {
    /* A new order each round (Fisher-Yates, an LCG), so no row always
     * follows the same one. */
    for (int i = nr - 1; i > 0; i--) {
      seed = seed * 1103515245u + 12345u;
      int j = (int)((seed >> 16) % (uint32_t)(i + 1)), t = order[i];
      order[i] = order[j], order[j] = t;
    }
    for (int j = 0; j < nr; j++) {
      int i = order[j];
      clock_row scalar = { NULL, 0 };
      burst(&scalar, dst, src, n, settle_ticks);
      burst(&rows[i], dst, src, n, burst_ticks);
      double a = imul ? imul_ghz(window) : window_ghz(window), b = imul ? imul_ghz(window) : window_ghz(window);
      ghz[i][r] = a > b ? a : b;
    }
  }
  free(arena);
  set_results(L, nr, (int)rounds, ghz);
  return 1;
}

/* Argument 1: a budget in seconds, by default dflt. */
static lua_Number check_seconds(lua_State *L, lua_Number dflt)
{
  lua_Number seconds = lua_isnoneornil(L, 1) ? dflt : lua_tonumber(L, 1);
  luaL_argcheck(L, lua_isnoneornil(L, 1) || lua_type(L, 1) == LUA_TNUMBER, 1, "seconds must be a number in (0, 600]");
  luaL_argcheck(L, seconds > 0 && seconds <= 600, 1, "seconds must be a number in (0, 600]");
  return seconds;
}

/* The compiled-in Lua module name on the stack, with the ones it requires
 * loaded first (they are not on package.path once installed). */
static void require_lua(lua_State *L, const char *name)
{
  static const char *const deps[] = { "avxbuf.stats", "avxbuf.licence" };
  for (size_t i = 0; i < sizeof deps / sizeof deps[0]; i++) {
    if (!avxbuf_require_embedded(L, deps[i])) lua_error(L);
    lua_pop(L, 1);
  }
  if (!avxbuf_require_embedded(L, name)) lua_error(L);
}

/* avxbuf.tune([seconds]) -> settings, report, options: lua/avxbuf/tune.lua
 * (compiled in) decides from what avxbuf.measure and avxbuf.licence find. */
static int l_tune(lua_State *L)
{
  lua_Number seconds = check_seconds(L, 1);
  lua_settop(L, 0);
  require_lua(L, "avxbuf.tune");
  lua_pushnumber(L, seconds);
  lua_call(L, 1, 3);
  return 3;
}

/* avxbuf.licence([seconds]) -> report: lua/avxbuf/licence.lua's run. */
static int l_licence(lua_State *L)
{
  lua_Number seconds = check_seconds(L, 0.5);
  lua_settop(L, 0);
  require_lua(L, "avxbuf.licence");
  lua_getfield(L, -1, "run");
  lua_pushnumber(L, seconds);
  lua_call(L, 1, 1);
  return 1;
}

const luaL_Reg avxbuf_measure_funcs[] = {
  { "measure", l_measure }, { "tune", l_tune }, { "coreclock", l_coreclock },
  { "measure_clock", l_measure_clock }, { "licence", l_licence },
  { NULL, NULL }
};
