/* The knobs and the kernels as Lua sees them: kernel(), kernels(),
 * configure(), config() and reset(). (cpu() and decide(): lcpu.c.) */
#include <stddef.h>
#include <stdio.h>

#include "lua/largs.h"
#include "lua/lfuncs.h"
#include "lua/lsettings.h"
#include "core/op.h"

/* ---- kernels -------------------------------------------------------------- */

/* avxbuf.kernel(op, n [, which]): the kernel an operation of n bytes uses
 * now; with which = "vector" or "streaming", the temporal or streaming
 * kernel of the vector family the plan has for that size (what avxbuf.tune
 * weighs the other candidates against). */
static int l_kernel(lua_State *L)
{
  avxbuf_op op = (avxbuf_op)luaL_checkoption(L, 1, NULL, avxbuf_op_names);
  lua_Integer n = checkint(L, 2);
  luaL_argcheck(L, n >= 0, 2, "size must not be negative");
  static const char *const which_names[] = { "picked", "vector", "streaming", NULL };
  int which = luaL_checkoption(L, 3, "picked", which_names);
  avxbuf_state_current(STATE(L));
  const avxbuf_plan *p = &STATE(L)->plan;
  /* On a 32-bit size_t, larger sizes are the largest one; below SIZE_MAX,
   * the plan's "never" (an operation cannot be that large anyway). */
  size_t size = (unsigned long long)n >= SIZE_MAX ? SIZE_MAX - 1 : (size_t)n;
  const avxbuf_kernel *k;
  if (which == 0) {
    k = op == OP_COPY ? avxbuf_pick_copy(p, size, OV_NONE) : op == OP_FIND ? avxbuf_pick_find(p, size)
                                                           : avxbuf_pick_fill(p, size, op == OP_FILL);
  } else {
    int wide = size >= p->wide_from;
    const avxbuf_family *f = op == OP_COPY || op == OP_FIND ? (wide ? &p->copy_wide : &p->copy_narrow)
                                                            : (wide ? &p->fill_wide : &p->fill_narrow);
    k = which == 1 ? f->k : f->k_nt;
  }
  lua_pushstring(L, k->name);
  return 1;
}

/* avxbuf.kernels(): every kernel in this binary, what its code may execute
 * (make audit checks the compiled instructions against these fields),
 * whether this CPU and OS can run it, which copies it hands to another
 * kernel (skew32) and which it copies with the loads aligned. */
static int l_kernels(lua_State *L)
{
  static const char *const roles[] = {
    [KR_TEMPORAL] = "temporal", [KR_STREAMING] = "streaming", [KR_STRING_COPY] = "string",
    [KR_STRING_FILL] = "string", [KR_LIBC] = "libc",
  };
  lua_newtable(L);
  for (int i = 0; avxbuf_kernel_list[i]; i++) {
    const avxbuf_kernel *k = avxbuf_kernel_list[i];
    lua_createtable(L, 0, 8);
    lua_pushstring(L, k->name);
    lua_setfield(L, -2, "name");
    lua_newtable(L);
    for (int f = 0, w = 0; f < F_COUNT; f++) {
      if (!(k->needs & AVXBUF_FEATURE(f))) continue;
      lua_pushstring(L, avxbuf_feature_names[f]);
      lua_rawseti(L, -2, ++w);
    }
    lua_setfield(L, -2, "isa");
    if (k->vector_bits >= 0) {   /* absent: the C library decides */
      lua_pushinteger(L, k->vector_bits);
      lua_setfield(L, -2, "vector_bits");
    }
    if (k->level >= 0) {   /* absent: not a vector family */
      lua_pushinteger(L, k->level);
      lua_setfield(L, -2, "use_avx");
    }
    lua_pushstring(L, roles[k->role]);
    lua_setfield(L, -2, "role");
    if (k->role == KR_STRING_COPY || k->role == KR_STRING_FILL) {
      lua_pushstring(L, k->role == KR_STRING_COPY ? "copy" : "fill");
      lua_setfield(L, -2, "op");
    }
    lua_pushboolean(L, k->role == KR_STREAMING);
    lua_setfield(L, -2, "streaming");
    lua_pushboolean(L, avxbuf_kernel_available(k));
    lua_setfield(L, -2, "available");
    if (k->skew32) {   /* copies it hands to another kernel (src/kernels/kernels.h) */
      lua_createtable(L, 0, 2);
      lua_pushstring(L, k->skew32->name);
      lua_setfield(L, -2, "kernel");
      lua_pushinteger(L, (lua_Integer)k->skew32_upto);
      lua_setfield(L, -2, "upto");
      lua_setfield(L, -2, "skew32");
    }
    if (k->loads_aligned_upto) {   /* its forward loop's own exception (src/kernels/kernels.h) */
      lua_pushinteger(L, (lua_Integer)k->loads_aligned_upto);
      lua_setfield(L, -2, "loads_aligned_upto");
    }
    lua_rawseti(L, -2, i + 1);
  }
  return 1;
}

/* ---- knobs ---------------------------------------------------------------- */

/* Pushes value v of knob k as config() gives it. */
static void push_knob(lua_State *L, int k, long long v)
{
  switch (avxbuf_knobs[k].type) {
  case KT_BOOL: lua_pushboolean(L, (int)v); break;
  case KT_KERNEL: lua_pushstring(L, avxbuf_kernel_modes[v]); break;
  default: lua_pushinteger(L, (lua_Integer)v); break;
  }
}

/* Value v of knob k as AVXBUF_OPTIONS spells it (in out, or a constant). */
static const char *knob_text(int k, long long v, char out[24])
{
  switch (avxbuf_knobs[k].type) {
  case KT_BOOL: return v ? "true" : "false";
  case KT_KERNEL: return avxbuf_kernel_modes[v];
  default: snprintf(out, 24, "%lld", v); return out;
  }
}

static void push_settings(lua_State *L, const avxbuf_settings *s)
{
  lua_createtable(L, 0, K_COUNT);
  for (int k = 0; k < K_COUNT; k++) {
    push_knob(L, k, s->v[k]);
    lua_setfield(L, -2, avxbuf_knobs[k].name);
  }
}

static int l_config(lua_State *L)
{
  avxbuf_state_current(STATE(L));
  push_settings(L, &STATE(L)->effective);
  return 1;
}

/* The value at the top of the stack as settings.h's kinds: a number with
 * an integer value is an integer (as luaL_checkinteger takes 2.0), a string
 * is a word whatever it spells, so that AVXBUF_OPTIONS's judge rules here. */
static avxbuf_value read_knob_value(lua_State *L)
{
  avxbuf_value v = { KV_OTHER, 0, NULL, 0 };
  lua_Integer i;
  switch (lua_type(L, -1)) {
  case LUA_TBOOLEAN: v.kind = KV_BOOLEAN; v.integer = lua_toboolean(L, -1); break;
  case LUA_TSTRING: v.kind = KV_WORD; v.word = lua_tolstring(L, -1, &v.len); break;
  case LUA_TNUMBER:
    if (testint(L, -1, &i)) v.kind = KV_INTEGER, v.integer = (long long)i;
    break;
  }
  return v;
}

/* The value at the top of the stack, for knob k. */
static long long knob_value(lua_State *L, int k)
{
  avxbuf_value v = read_knob_value(L);
  long long x;
  const char *err = avxbuf_knob_value(k, &v, &x);
  if (err) luaL_argerror(L, 1, lua_pushfstring(L, "knob '%s' %s", avxbuf_knobs[k].name, err));
  return x;
}

static int unknown_knob(lua_State *L, int key)
{
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  for (int k = 0; k < K_COUNT; k++) {
    if (k) luaL_addstring(&b, ", ");
    luaL_addstring(&b, avxbuf_knobs[k].name);
  }
  luaL_pushresult(&b);
  const char *known = lua_tostring(L, -1);
  return luaL_argerror(L, 1, lua_pushfstring(L, "unknown knob '%s' (knobs: %s)",
                                             luaL_tolstring(L, key, NULL), known));
}

/* avxbuf.configure{knob = value, ...}: all or nothing. */
static int l_configure(lua_State *L)
{
  avxbuf_state *st = STATE(L);
  avxbuf_settings req = st->requested;
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_settop(L, 1);
  lua_pushnil(L);
  while (lua_next(L, 1)) {
    size_t len;
    const char *name = lua_type(L, -2) == LUA_TSTRING ? lua_tolstring(L, -2, &len) : NULL;
    int k = name ? avxbuf_knob_find(name, len) : -1;
    if (k < 0) return unknown_knob(L, lua_gettop(L) - 1);
    req.v[k] = knob_value(L, k);
    lua_pop(L, 1);
  }
  /* The result made before the settings change: making it can fail for
   * lack of memory, and configure is all or nothing. */
  avxbuf_state next = *st;
  next.requested = req;
  avxbuf_state_resolve(&next);
  push_settings(L, &next.effective);
  *st = next;
  return 1;
}

static int l_reset(lua_State *L)
{
  avxbuf_state_reset(STATE(L));
  return l_config(L);
}

/* ---- what cpu() reports of the knobs ----------------------------------------- */

/* (lsettings.h: here, because it speaks the knobs' words, push_knob's and
 * knob_text's.) */
void avxbuf_set_overrides(lua_State *L, const avxbuf_settings *in_force)
{
  avxbuf_state def;
  avxbuf_state_default_on(&def, avxbuf_machine_get());
  int t = lua_gettop(L), n = 0;
  lua_newtable(L);
  lua_getfield(L, t, "reason");
  for (int k = 0; k < K_COUNT; k++) {
    long long v = in_force->v[k], d = def.effective.v[k];
    if (v == d) continue;
    char vs[24], ds[24];
    push_knob(L, k, v);
    lua_setfield(L, t + 1, avxbuf_knobs[k].name);
    lua_pushstring(L, n++ ? ", " : "; overridden by the knobs in force: ");
    lua_pushfstring(L, "%s=%s (default %s)", avxbuf_knobs[k].name, knob_text(k, v, vs), knob_text(k, d, ds));
    lua_concat(L, 3);
  }
  lua_setfield(L, t, "reason");
  lua_setfield(L, t, "overrides");
}

const luaL_Reg avxbuf_settings_funcs[] = {
  { "kernel", l_kernel }, { "kernels", l_kernels }, { "configure", l_configure },
  { "config", l_config }, { "reset", l_reset },
  { NULL, NULL }
};
