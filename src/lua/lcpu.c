/* The CPU and the policy as Lua sees them: cpu() for this machine, and
 * decide() for any CPUID registers or dump. Struct fields go to Lua
 * through tables of field descriptions, not rows of push/setfield pairs. */
#include <stddef.h>
#include <string.h>

#include "lua/largs.h"
#include "lua/lfuncs.h"
#include "lua/lsettings.h"
#include "core/op.h"

/* ---- struct fields as table fields ------------------------------------------ */

typedef enum { FT_INT, FT_BOOL, FT_UCHAR_BOOL, FT_UINT, FT_LLONG, FT_SIZE, FT_U64, FT_DOUBLE, FT_STR, FT_CHARS } ftype;
typedef struct field { const char *name; ftype type; size_t offset; } field;
#define FIELD(T, type, member) { #member, type, offsetof(T, member) }
#define FIELD_AS(T, type, member, name) { name, type, offsetof(T, member) }
#define NFIELDS(a) (sizeof(a) / sizeof((a)[0]))

/* Sets the fields f[0..n) of obj in the table at the top of the stack. */
static void set_fields(lua_State *L, const void *obj, const field *f, size_t n)
{
  for (size_t i = 0; i < n; i++) {
    const void *p = (const char *)obj + f[i].offset;
    switch (f[i].type) {
    case FT_INT: lua_pushinteger(L, *(const int *)p); break;
    case FT_BOOL: lua_pushboolean(L, *(const int *)p); break;
    case FT_UCHAR_BOOL: lua_pushboolean(L, *(const unsigned char *)p); break;
    case FT_UINT: lua_pushinteger(L, (lua_Integer)*(const unsigned *)p); break;
    case FT_LLONG: lua_pushinteger(L, (lua_Integer)*(const long long *)p); break;
    case FT_SIZE: lua_pushinteger(L, (lua_Integer)*(const size_t *)p); break;
    case FT_U64: lua_pushinteger(L, (lua_Integer)*(const uint64_t *)p); break;
    case FT_DOUBLE: lua_pushnumber(L, (lua_Number)*(const double *)p); break;
    case FT_STR: lua_pushstring(L, *(const char *const *)p); break;
    case FT_CHARS: lua_pushstring(L, (const char *)p); break;
    }
    lua_setfield(L, -2, f[i].name);
  }
}

static const field cpu_fields[] = {
  FIELD(avxbuf_cpu, FT_BOOL, x86), FIELD(avxbuf_cpu, FT_STR, arch), FIELD(avxbuf_cpu, FT_CHARS, vendor),
  FIELD(avxbuf_cpu, FT_UINT, family), FIELD(avxbuf_cpu, FT_UINT, model), FIELD(avxbuf_cpu, FT_UINT, stepping),
  FIELD_AS(avxbuf_cpu, FT_UCHAR_BOOL, has[F_HYPERVISOR], "hypervisor"), FIELD(avxbuf_cpu, FT_U64, xcr0),
  FIELD(avxbuf_cpu, FT_INT, max_use_avx),
};

static const field cache_fields[] = {
  FIELD(avxbuf_cpu, FT_SIZE, l1d), FIELD(avxbuf_cpu, FT_SIZE, l2), FIELD(avxbuf_cpu, FT_SIZE, l3),
  FIELD(avxbuf_cpu, FT_UINT, l3_threads), FIELD(avxbuf_cpu, FT_BOOL, l3_capped), FIELD(avxbuf_cpu, FT_BOOL, invariant_tsc),
};

static const field cache_leaf_fields[] = {
  FIELD_AS(avxbuf_cpu, FT_STR, l1d_leaf, "l1d"), FIELD_AS(avxbuf_cpu, FT_STR, l2_leaf, "l2"),
  FIELD_AS(avxbuf_cpu, FT_STR, l3_leaf, "l3"),
};

static const field decision_fields[] = {
  FIELD(avxbuf_defaults, FT_INT, use_avx), FIELD(avxbuf_defaults, FT_BOOL, vector_zeroing),
  FIELD(avxbuf_defaults, FT_LLONG, avx3_threshold), FIELD(avxbuf_defaults, FT_LLONG, rep_movsb_threshold),
  FIELD(avxbuf_defaults, FT_LLONG, rep_movsb_stop_threshold), FIELD(avxbuf_defaults, FT_STR, thresholds_source),
  FIELD(avxbuf_defaults, FT_LLONG, rep_stosb_threshold), FIELD(avxbuf_defaults, FT_LLONG, rep_stosb_stop_threshold),
  FIELD(avxbuf_defaults, FT_LLONG, nontemporal_threshold),
  FIELD(avxbuf_defaults, FT_BOOL, zero_streams_as_copies), FIELD(avxbuf_defaults, FT_STR, nontemporal_source),
  FIELD(avxbuf_defaults, FT_LLONG, rep_stosb_probe_size), FIELD(avxbuf_defaults, FT_INT, fill_nontemporal_factor),
  FIELD(avxbuf_defaults, FT_STR, uarch), FIELD(avxbuf_defaults, FT_STR, licence_events),
  FIELD(avxbuf_defaults, FT_STR, rule),
  FIELD(avxbuf_defaults, FT_STR, source), FIELD(avxbuf_defaults, FT_CHARS, reason),
};

static void set_cpu(lua_State *L, const avxbuf_cpu *cpu)
{
  set_fields(L, cpu, cpu_fields, NFIELDS(cpu_fields));
  lua_createtable(L, 0, F_COUNT);
  for (int f = 0; f < F_COUNT; f++) {
    lua_pushboolean(L, cpu->has[f]);
    lua_setfield(L, -2, avxbuf_feature_names[f]);
  }
  lua_setfield(L, -2, "features");
  lua_pushstring(L, cpu->brand);
  lua_setfield(L, -2, "brand");
  lua_createtable(L, 0, NFIELDS(cache_fields) + 1);
  set_fields(L, cpu, cache_fields, NFIELDS(cache_fields));
  lua_createtable(L, 0, NFIELDS(cache_leaf_fields));
  set_fields(L, cpu, cache_leaf_fields, NFIELDS(cache_leaf_fields));
  lua_setfield(L, -2, "leaf");
  lua_setfield(L, -2, "cache");
}

static void set_decision(lua_State *L, const avxbuf_defaults *d)
{
  set_fields(L, d, decision_fields, NFIELDS(decision_fields));
  lua_pushinteger(L, d->max_vector_size);
  lua_setfield(L, -2, "max_vector_size");
  lua_pushstring(L, avxbuf_stosb_fact_names[d->rep_stosb]);
  lua_setfield(L, -2, "rep_stosb_beyond_l2");
}

static const field probe_fields[] = {
  FIELD(avxbuf_stosb_probe, FT_SIZE, size), FIELD(avxbuf_stosb_probe, FT_INT, rounds),
  FIELD(avxbuf_stosb_probe, FT_DOUBLE, rep_ns), FIELD(avxbuf_stosb_probe, FT_DOUBLE, vector_ns),
  FIELD(avxbuf_stosb_probe, FT_DOUBLE, ratio), FIELD(avxbuf_stosb_probe, FT_DOUBLE, aa),
  FIELD(avxbuf_stosb_probe, FT_STR, vector),
};

/* The measurement this process made, as cpu().rep_stosb_probe (nil before). */
static void set_probe(lua_State *L, const avxbuf_stosb_probe *r)
{
  if (r == NULL) return;
  lua_createtable(L, 0, NFIELDS(probe_fields) + 1);
  set_fields(L, r, probe_fields, NFIELDS(probe_fields));
  lua_pushstring(L, avxbuf_stosb_fact_names[r->fact]);
  lua_setfield(L, -2, "fact");
  lua_setfield(L, -2, "rep_stosb_probe");
}

/* ---- cpu() and decide() ----------------------------------------------------- */

static int l_cpu(lua_State *L)
{
  const avxbuf_machine *m = avxbuf_machine_get();
  /* The measurement read once, and the decision of what it says: another
   * thread may finish one meanwhile. */
  const avxbuf_stosb_probe *probe = avxbuf_stosb_probe_get();
  const avxbuf_defaults *d = &m->defaults[probe ? probe->fact : STOSB_UNMEASURED];
  avxbuf_state_current(STATE(L));
  lua_newtable(L);
  set_cpu(L, m->cpu);
  set_decision(L, d);
  set_probe(L, probe);
  avxbuf_set_overrides(L, &STATE(L)->effective);
  lua_newtable(L);   /* the decision alone */
  set_decision(L, d);
  lua_setfield(L, -2, "default");
  return 1;
}

/* What the plan picks for an operation at every size, as
 * {{from = 0, kernel = name}, {from = n, kernel = name}, ...}: the kernel
 * changes only at the plan's thresholds. */
static void push_picks(lua_State *L, const avxbuf_plan *p, avxbuf_op op)
{
  int fill = op == OP_ZERO || op == OP_FILL, find = op == OP_FIND;
  size_t at[] = { 0, fill ? p->fill_small_below : p->copy_small_below, p->wide_from,
                  find ? SIZE_MAX : fill ? p->rep_stosb_from : p->rep_movsb_from,
                  find ? SIZE_MAX : fill ? p->rep_stosb_until : p->rep_movsb_until,
                  find ? SIZE_MAX : op == OP_ZERO ? p->nontemporal_zero_from
                                  : fill ? p->nontemporal_fill_from : p->nontemporal_copy_from };
  size_t n = sizeof at / sizeof at[0];
  for (size_t i = 1; i < n; i++)   /* sort: six values */
    for (size_t j = i; j > 0 && at[j] < at[j - 1]; j--) { size_t t = at[j]; at[j] = at[j - 1]; at[j - 1] = t; }
  const char *last = NULL;
  int k = 0;
  lua_newtable(L);
  for (size_t i = 0; i < n && at[i] < SIZE_MAX; i++) {
    const avxbuf_kernel *kern = find ? avxbuf_pick_find(p, at[i]) : fill ? avxbuf_pick_fill(p, at[i], op == OP_FILL)
                              : avxbuf_pick_copy(p, at[i], OV_NONE);
    if (last && !strcmp(last, kern->name)) continue;
    last = kern->name;
    lua_createtable(L, 0, 2);
    lua_pushinteger(L, (lua_Integer)at[i]);
    lua_setfield(L, -2, "from");
    lua_pushstring(L, kern->name);
    lua_setfield(L, -2, "kernel");
    lua_rawseti(L, -2, ++k);
  }
}

/* The largest value of a 32-bit CPUID register. */
#define REG_MAX ((lua_Integer)0xFFFFFFFF)

/* decide{leaves = ...}: leaves[leaf][subleaf] = {eax, ebx, ecx, edx}; what
 * is missing reads as zeros. */
typedef struct { lua_State *L; int idx; } leaf_table;

/* t[n] raw, for any integer n (5.1's lua_rawgeti takes an int, and leaves
 * such as 0x80000006 do not fit one); t at an absolute index. */
static int rawget_int(lua_State *L, int t, lua_Integer n)
{
  lua_pushinteger(L, n);
  lua_rawget(L, t);
  return lua_type(L, -1);
}

static void table_cpuid(void *ctx, uint32_t leaf, uint32_t sub, uint32_t r[4])
{
  const leaf_table *t = (const leaf_table *)ctx;
  lua_State *L = t->L;
  int top = lua_gettop(L);
  if (rawget_int(L, t->idx, leaf) == LUA_TTABLE && rawget_int(L, top + 1, sub) == LUA_TTABLE) {
    int regs = top + 2;
    for (int i = 0; i < 4; i++) {
      lua_Integer v;
      rawget_int(L, regs, i + 1);
      if (!avxbuf_isint(L, -1, 0, REG_MAX, &v))
        luaL_argerror(L, 1, avxbuf_pushf(L, "leaves[0x%X][%u][%d] must be an integer from 0 to %lld",
                                         (unsigned)leaf, (unsigned)sub, i + 1, (long long)REG_MAX));
      r[i] = (uint32_t)v;
      lua_pop(L, 1);
    }
  }
  lua_settop(L, top);   /* the leaf's table, and its sub-leaf's when there is one */
}

/* A dump's shape, checked before anything is read from it (what is missing
 * reads as zeros, so a mistyped dump would otherwise decide for a CPU with
 * no features): leaves[leaf][subleaf] tables only, and leaf 0, which holds
 * the vendor and the highest leaf. */
static void check_leaves(lua_State *L, int t)
{
  lua_pushnil(L);
  while (lua_next(L, t)) {
    lua_Integer leaf, sub;   /* leaf and sub-leaf numbers: register values */
    if (!avxbuf_isint(L, -2, 0, REG_MAX, &leaf))
      luaL_argerror(L, 1, lua_pushfstring(L, "field 'leaves' has key '%s', not a leaf number",
                                          luaL_tolstring(L, -2, NULL)));
    if (lua_type(L, -1) != LUA_TTABLE)
      luaL_argerror(L, 1, avxbuf_pushf(L, "leaves[0x%X] must be a table of sub-leaves", (unsigned)leaf));
    lua_pushnil(L);
    while (lua_next(L, -2)) {
      if (!avxbuf_isint(L, -2, 0, REG_MAX, &sub))
        luaL_argerror(L, 1, avxbuf_pushf(L, "leaves[0x%X] has key '%s', not a sub-leaf number", (unsigned)leaf,
                                         luaL_tolstring(L, -2, NULL)));
      if (lua_type(L, -1) != LUA_TTABLE)
        luaL_argerror(L, 1, avxbuf_pushf(L, "leaves[0x%X][%u] must be a table of 4 registers", (unsigned)leaf,
                                         (unsigned)sub));
      lua_pop(L, 1);
    }
    lua_pop(L, 1);
  }
  if (rawget_int(L, t, 0) != LUA_TTABLE)
    luaL_argerror(L, 1, "field 'leaves' has no leaf 0 (the vendor and the highest leaf)");
  lua_pop(L, 1);
}

/* avxbuf.decide{vendor=, leaf1_eax=, ...} or decide{leaves=, xcr0=}: the
 * policy for any processor, from its registers or from a whole dump. */
static int l_decide(lua_State *L)
{
  avxbuf_cpuid_raw raw;
  avxbuf_cpu cpu;
  memset(&raw, 0, sizeof raw);
  luaL_checktype(L, 1, LUA_TTABLE);
  if (lua_getfield(L, 1, "vendor") != LUA_TNIL) {
    size_t len = 0;
    const char *v = lua_type(L, -1) == LUA_TSTRING ? lua_tolstring(L, -1, &len) : NULL;
    if (v == NULL || len > 12)
      luaL_argerror(L, 1, "field 'vendor' must be a string of at most 12 characters");
    memcpy(raw.vendor, v, len);
  }
  lua_pop(L, 1);
  static const struct { const char *name; size_t offset; } regs[] = {
    { "leaf1_eax", offsetof(avxbuf_cpuid_raw, leaf1_eax) }, { "leaf1_ecx", offsetof(avxbuf_cpuid_raw, leaf1_ecx) },
    { "leaf7_ebx", offsetof(avxbuf_cpuid_raw, leaf7_ebx) }, { "leaf7_ecx", offsetof(avxbuf_cpuid_raw, leaf7_ecx) },
    { "leaf7_edx", offsetof(avxbuf_cpuid_raw, leaf7_edx) }, { "leaf7_1_eax", offsetof(avxbuf_cpuid_raw, leaf7_1_eax) },
  };
  for (size_t i = 0; i < NFIELDS(regs); i++)
    *(uint32_t *)((char *)&raw + regs[i].offset) = (uint32_t)avxbuf_intfield(L, 1, regs[i].name, 0, REG_MAX, 0);
  raw.xcr0 = (uint64_t)avxbuf_intfield(L, 1, "xcr0", AVXBUF_INTEGER_MIN, AVXBUF_INTEGER_MAX, 0);
  int leaves = lua_getfield(L, 1, "leaves");
  if (leaves != LUA_TNIL && leaves != LUA_TTABLE)
    luaL_argerror(L, 1, "field 'leaves' must be a table of CPUID leaves (bench/lib/cpuid_dump.lua reads one)");
  if (leaves == LUA_TTABLE) {
    check_leaves(L, lua_gettop(L));
    leaf_table t = { L, lua_gettop(L) };
    avxbuf_cpuid_source src = { table_cpuid, raw.xcr0, &t };
    avxbuf_cpu_read(&src, &cpu);
  } else {
    avxbuf_cpu_decode(&raw, &cpu);
  }
  lua_pop(L, 1);
  /* What a measurement there found (decide{rep_stosb_ratio}): policy.h. */
  lua_Number ratio = 0;
  if (lua_getfield(L, 1, "rep_stosb_ratio") != LUA_TNIL) {
    if (lua_type(L, -1) != LUA_TNUMBER || !((ratio = lua_tonumber(L, -1)) > 0))
      luaL_argerror(L, 1, "field 'rep_stosb_ratio' must be a positive number (rep stosb's time over the vector fill's)");
  }
  lua_pop(L, 1);
  /* A machine described measures nothing: only its fact's defaults are read. */
  avxbuf_machine there = { &cpu, { { 0 } }, 0, 0, avxbuf_stosb_fact_of((double)ratio) };
  avxbuf_policy(&cpu, there.fact, &there.defaults[there.fact]);
  lua_newtable(L);
  set_cpu(L, &cpu);
  set_decision(L, avxbuf_machine_defaults(&there));
  /* The kernels that decision picks there, by size (no knobs set). */
  avxbuf_state st;
  avxbuf_state_default_on(&st, &there);
  lua_createtable(L, 0, 4);
  for (int op = 0; op < OP_COUNT; op++) {
    push_picks(L, &st.plan, (avxbuf_op)op);
    lua_setfield(L, -2, avxbuf_op_names[op]);
  }
  lua_setfield(L, -2, "picks");
  return 1;
}

const luaL_Reg avxbuf_cpu_funcs[] = {
  { "cpu", l_cpu }, { "decide", l_decide },
  { NULL, NULL }
};
