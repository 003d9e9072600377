/* avxbuf: the Lua binding. Buffers, argument checks and the knobs' Lua face;
 * kernels, dispatch and CPU policy live in their own files.
 *
 * Every function shares two upvalues: the state's settings (1) and the
 * buffer metatable (2), so that a Lua state's knobs are its own and a
 * buffer is recognised by comparing its metatable by identity, without a
 * registry lookup on the hot path. */
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compat.h"
#include "dispatch.h"

#define BUFFER_NAME "avxbuf.buffer"
#define BUFFER_ALIGN 64
/* Largest buffer: lengths, indices and their sums stay exact in lua_Integer. */
#define MAX_LENGTH ((size_t)1 << 48)

typedef struct buffer {
  size_t len;
  unsigned char *data;   /* 64-byte aligned, inside the same userdata */
} buffer;

#define STATE(L) ((avxbuf_state *)lua_touserdata(L, lua_upvalueindex(1)))

/* lua_pushfstring with the C library's formats (%lld on every Lua version). */
static const char *pushf(lua_State *L, const char *fmt, ...)
{
  char buf[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  lua_pushstring(L, buf);
  return lua_tostring(L, -1);
}

/* The hot path's type check: the metatable by identity, no registry lookup. */
static buffer *testbuffer(lua_State *L, int arg)
{
  buffer *b = lua_touserdata(L, arg);
  if (b == NULL || !lua_getmetatable(L, arg)) return NULL;
  int same = lua_rawequal(L, -1, lua_upvalueindex(2));
  lua_pop(L, 1);
  return same ? b : NULL;
}

/* luaL_checkinteger and luaL_optinteger with the common case (an integer is
 * there) first: one API call instead of two or three on the hot path. */
static lua_Integer checkint(lua_State *L, int arg)
{
  int isint;
  lua_Integer v = lua_tointegerx(L, arg, &isint);
  return isint ? v : luaL_checkinteger(L, arg);
}

static lua_Integer optint(lua_State *L, int arg, lua_Integer dflt)
{
  int isint;
  lua_Integer v = lua_tointegerx(L, arg, &isint);
  if (isint) return v;
  return lua_isnoneornil(L, arg) ? dflt : luaL_checkinteger(L, arg);
}

static buffer *checkbuffer(lua_State *L, int arg)
{
  buffer *b = testbuffer(L, arg);
  if (b == NULL) luaL_typeerror(L, arg, BUFFER_NAME);
  return b;
}

/* A buffer or a Lua string (not a number: no silent coercion). */
static const unsigned char *checkbytes(lua_State *L, int arg, size_t *len, buffer **as_buffer)
{
  buffer *b = testbuffer(L, arg);
  *as_buffer = b;
  if (b) { *len = b->len; return b->data; }
  if (lua_type(L, arg) != LUA_TSTRING)
    luaL_typeerror(L, arg, "string or " BUFFER_NAME);
  return (const unsigned char *)lua_tolstring(L, arg, len);
}

static buffer *newbuffer(lua_State *L, size_t n)
{
  buffer *b = lua_newuserdatauv(L, sizeof(buffer) + n + BUFFER_ALIGN - 1, 0);
  uintptr_t p = (uintptr_t)(b + 1);
  b->len = n;
  b->data = (unsigned char *)((p + BUFFER_ALIGN - 1) & ~(uintptr_t)(BUFFER_ALIGN - 1));
  lua_pushvalue(L, lua_upvalueindex(2));
  lua_setmetatable(L, -2);
  return b;
}

static int checkbyte(lua_State *L, int arg)
{
  lua_Integer c = luaL_checkinteger(L, arg);
  luaL_argcheck(L, 0 <= c && c <= 255, arg, "byte must be from 0 to 255");
  return (int)c;
}

/* ---- ranges ------------------------------------------------------------ */

/* string.sub's rules: negative from the end, then clipped to 1..len. */
static size_t sub_start(lua_Integer i, size_t len)
{
  if (i > 0) return (size_t)i;
  if (i == 0 || i < -(lua_Integer)len) return 1;
  return len + (size_t)i + 1;
}

static size_t sub_end(lua_Integer j, size_t len)
{
  if (j > (lua_Integer)len) return len;
  if (j >= 0) return (size_t)j;
  if (j < -(lua_Integer)len) return 0;
  return len + (size_t)j + 1;
}

/* [*start, *start + count) for string.sub-style arguments i (default 1) and
 * j (default -1, or i itself as string.byte has it). */
static size_t sub_range(lua_State *L, int arg_i, int j_defaults_to_i, size_t len, size_t *start)
{
  lua_Integer i = optint(L, arg_i, 1);
  size_t s = sub_start(i, len);
  size_t e = sub_end(optint(L, arg_i + 1, j_defaults_to_i ? i : -1), len);
  *start = s > e ? 0 : s - 1;
  return s > e ? 0 : e - s + 1;
}

/* A write (or read) position: 1 <= i <= len + 1. Returns the 0-based offset. */
static size_t checkindex(lua_State *L, int arg, lua_Integer i, size_t len)
{
  if (i < 1 || (unsigned long long)i > (unsigned long long)len + 1)
    luaL_argerror(L, arg, pushf(L, "index %lld out of range 1..%lld", (long long)i, (long long)len + 1));
  return (size_t)(i - 1);
}

/* A length n at offset off of a len-byte object: 0 <= n <= len - off.
 * The default is everything from off to the end. */
static size_t checkcount(lua_State *L, int arg, size_t off, size_t len, const char *what)
{
  size_t room = len - off;
  lua_Integer n = optint(L, arg, (lua_Integer)room);
  if (n < 0)
    luaL_argerror(L, arg, pushf(L, "length %lld is negative", (long long)n));
  if ((unsigned long long)n > room)
    luaL_argerror(L, arg, pushf(L, "length %lld exceeds the %lld bytes of %s from index %lld",
                                (long long)n, (long long)room, what, (long long)off + 1));
  return (size_t)n;
}

/* ---- constructors and reads -------------------------------------------- */

static int l_new(lua_State *L)
{
  lua_Integer n = luaL_checkinteger(L, 1);
  int c = lua_isnoneornil(L, 2) ? 0 : checkbyte(L, 2);
  luaL_argcheck(L, n >= 0, 1, "size must not be negative");
  luaL_argcheck(L, (unsigned long long)n <= MAX_LENGTH, 1, "size too large");
  buffer *b = newbuffer(L, (size_t)n);
  avxbuf_pick_fill(&STATE(L)->plan, b->len)->fill(b->data, c, b->len);
  return 1;
}

static int l_from(lua_State *L)
{
  size_t len, start;
  buffer *src_buffer;
  const unsigned char *s = checkbytes(L, 1, &len, &src_buffer);
  size_t n = sub_range(L, 2, 0, len, &start);
  buffer *b = newbuffer(L, n);   /* the source is anchored at index 1, and nothing moves */
  avxbuf_pick_copy(&STATE(L)->plan, n, OV_NONE)->copy(b->data, s + start, n);
  return 1;
}

static int l_len(lua_State *L)
{
  lua_pushinteger(L, (lua_Integer)checkbuffer(L, 1)->len);
  return 1;
}

static int l_tostring(lua_State *L)
{
  buffer *b = checkbuffer(L, 1);
  size_t start, n = sub_range(L, 2, 0, b->len, &start);
  lua_pushlstring(L, (const char *)b->data + start, n);
  return 1;
}

static int l_byte(lua_State *L)
{
  buffer *b = checkbuffer(L, 1);
  size_t start, n = sub_range(L, 2, 1, b->len, &start);
  luaL_argcheck(L, n <= INT_MAX, 2, "string slice too long");
  luaL_checkstack(L, (int)n, "string slice too long");
  for (size_t k = 0; k < n; k++) lua_pushinteger(L, b->data[start + k]);
  return (int)n;
}

static int l_display(lua_State *L)
{
  buffer *b = checkbuffer(L, 1);
  pushf(L, BUFFER_NAME " (%lld bytes): %p", (long long)b->len, (void *)b->data);
  return 1;
}

/* ---- copy, zero, fill ---------------------------------------------------- */

/* avxbuf.copy(dst, di, src [, si [, n]]) */
static int l_copy(lua_State *L)
{
  buffer *dst = checkbuffer(L, 1);
  lua_Integer di = checkint(L, 2);
  size_t slen;
  buffer *src_buffer;
  const unsigned char *src = checkbytes(L, 3, &slen, &src_buffer);
  size_t doff = checkindex(L, 2, di, dst->len);
  size_t soff = checkindex(L, 4, optint(L, 4, 1), slen);
  size_t n = checkcount(L, 5, soff, slen, "the source");
  if (n > dst->len - doff) {
    /* An explicit length is to blame; a defaulted one means the source is too long. */
    int arg = lua_isnoneornil(L, 5) ? 3 : 5;
    luaL_argerror(L, arg, pushf(L, "%lld bytes do not fit at index %lld of a %lld-byte buffer",
                                (long long)n, (long long)di, (long long)dst->len));
  }
  unsigned char *d = dst->data + doff;
  const unsigned char *s = src + soff;
  avxbuf_overlap ov = OV_NONE;
  if (src_buffer == dst && d != s && (size_t)(d > s ? d - s : s - d) < n)
    ov = d > s ? OV_BACKWARD : OV_FORWARD;
  avxbuf_pick_copy(&STATE(L)->plan, n, ov)->copy(d, s, n);
  return 0;
}

static void fill_range(lua_State *L, buffer *b, int c, int arg_i)
{
  size_t off = checkindex(L, arg_i, optint(L, arg_i, 1), b->len);
  size_t n = checkcount(L, arg_i + 1, off, b->len, "the buffer");
  avxbuf_pick_fill(&STATE(L)->plan, n)->fill(b->data + off, c, n);
}

/* avxbuf.zero(buf [, i [, n]]) */
static int l_zero(lua_State *L)
{
  fill_range(L, checkbuffer(L, 1), 0, 2);
  return 0;
}

/* avxbuf.fill(buf, byte [, i [, n]]) */
static int l_fill(lua_State *L)
{
  buffer *b = checkbuffer(L, 1);   /* argument 1 is checked before argument 2 */
  fill_range(L, b, checkbyte(L, 2), 3);
  return 0;
}

/* ---- kernels and knobs --------------------------------------------------- */

static const char *const ops[] = { "copy", "zero", "fill", NULL };

static int l_kernel(lua_State *L)
{
  int op = luaL_checkoption(L, 1, NULL, ops);
  lua_Integer n = luaL_checkinteger(L, 2);
  luaL_argcheck(L, n >= 0, 2, "size must not be negative");
  const avxbuf_plan *p = &STATE(L)->plan;
  lua_pushstring(L, op == 0 ? avxbuf_pick_copy(p, (size_t)n, OV_NONE)->name
                            : avxbuf_pick_fill(p, (size_t)n)->name);
  return 1;
}

/* avxbuf.kernels(): every kernel in this binary, what its code may execute
 * (make audit checks the compiled instructions against these fields) and
 * whether this CPU and OS can run it. */
static int l_kernels(lua_State *L)
{
  lua_newtable(L);
  for (int i = 0; avxbuf_kernel_list[i]; i++) {
    const avxbuf_kernel *k = avxbuf_kernel_list[i];
    lua_createtable(L, 0, 5);
    lua_pushstring(L, k->name);
    lua_setfield(L, -2, "name");
    lua_newtable(L);
    for (int w = 0; k->isa[w]; w++) {
      lua_pushstring(L, k->isa[w]);
      lua_rawseti(L, -2, w + 1);
    }
    lua_setfield(L, -2, "isa");
    if (k->vector_bits >= 0) {   /* absent: the C library decides */
      lua_pushinteger(L, k->vector_bits);
      lua_setfield(L, -2, "vector_bits");
    }
    if (avxbuf_kernel_level(k) >= 0) {   /* absent: not a vector family */
      lua_pushinteger(L, avxbuf_kernel_level(k));
      lua_setfield(L, -2, "use_avx");
    }
    lua_pushboolean(L, k->streaming);
    lua_setfield(L, -2, "streaming");
    lua_pushboolean(L, avxbuf_kernel_available(k));
    lua_setfield(L, -2, "available");
    lua_rawseti(L, -2, i + 1);
  }
  return 1;
}

static void push_settings(lua_State *L, const avxbuf_settings *s)
{
  lua_createtable(L, 0, K_COUNT);
  for (int k = 0; k < K_COUNT; k++) {
    long long v = s->v[k];
    switch (avxbuf_knobs[k].type) {
    case KT_BOOL: lua_pushboolean(L, (int)v); break;
    case KT_KERNEL: lua_pushstring(L, avxbuf_kernel_modes[v]); break;
    default: lua_pushinteger(L, (lua_Integer)v); break;
    }
    lua_setfield(L, -2, avxbuf_knobs[k].name);
  }
}

static int l_config(lua_State *L)
{
  push_settings(L, &STATE(L)->effective);
  return 1;
}

static void knob_error(lua_State *L, const char *name, const char *what)
{
  luaL_argerror(L, 1, lua_pushfstring(L, "knob '%s' %s", name, what));
}

/* The value at the top of the stack, for knob k. */
static long long knob_value(lua_State *L, int k)
{
  const char *name = avxbuf_knobs[k].name;
  long long v = 0;
  const char *err = NULL;
  switch (avxbuf_knobs[k].type) {
  case KT_BOOL:
    if (lua_type(L, -1) != LUA_TBOOLEAN) knob_error(L, name, "must be true or false");
    return lua_toboolean(L, -1);
  case KT_KERNEL: {
    size_t len;
    const char *s = lua_type(L, -1) == LUA_TSTRING ? lua_tolstring(L, -1, &len) : NULL;
    err = s ? avxbuf_knob_parse(k, s, len, &v) : "must be \"auto\" or \"libc\"";
    break;
  }
  default: {
    int isint;
    lua_Integer i = lua_tointegerx(L, -1, &isint);
    if (lua_type(L, -1) != LUA_TNUMBER || !isint) knob_error(L, name, "must be an integer");
    v = (long long)i;
    err = avxbuf_knob_check(k, v);
  }
  }
  if (err) knob_error(L, name, err);
  return v;
}

static const char *knob_list(lua_State *L)
{
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  for (int k = 0; k < K_COUNT; k++) {
    if (k) luaL_addstring(&b, ", ");
    luaL_addstring(&b, avxbuf_knobs[k].name);
  }
  luaL_pushresult(&b);
  return lua_tostring(L, -1);
}

static int unknown_knob(lua_State *L, int key)
{
  const char *known = knob_list(L);
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
  st->requested = req;
  avxbuf_state_resolve(st);
  return l_config(L);
}

static int l_reset(lua_State *L)
{
  avxbuf_state_reset(STATE(L));
  return l_config(L);
}

/* ---- CPU and policy ----------------------------------------------------- */

static void push_decision(lua_State *L, const avxbuf_cpu *cpu, const avxbuf_defaults *d)
{
  lua_pushinteger(L, d->use_avx);
  lua_setfield(L, -2, "use_avx");
  lua_pushinteger(L, avxbuf_level_width(d->use_avx));
  lua_setfield(L, -2, "max_vector_size");
  lua_pushboolean(L, d->vector_zeroing);
  lua_setfield(L, -2, "vector_zeroing");
  lua_pushinteger(L, d->avx3_threshold);
  lua_setfield(L, -2, "avx3_threshold");
  lua_pushinteger(L, d->rep_movsb_threshold);
  lua_setfield(L, -2, "rep_movsb_threshold");
  lua_pushinteger(L, d->rep_stosb_threshold);
  lua_setfield(L, -2, "rep_stosb_threshold");
  lua_pushinteger(L, d->nontemporal_threshold);
  lua_setfield(L, -2, "nontemporal_threshold");
  lua_pushinteger(L, cpu->max_use_avx);
  lua_setfield(L, -2, "max_use_avx");
  lua_pushstring(L, d->uarch);
  lua_setfield(L, -2, "uarch");
  lua_pushstring(L, d->rule);
  lua_setfield(L, -2, "rule");
  lua_pushstring(L, d->source);
  lua_setfield(L, -2, "source");
  lua_pushstring(L, d->reason);
  lua_setfield(L, -2, "reason");
}

static void push_cpu(lua_State *L, const avxbuf_cpu *cpu)
{
  lua_pushboolean(L, cpu->x86);
  lua_setfield(L, -2, "x86");
  lua_pushstring(L, cpu->arch);
  lua_setfield(L, -2, "arch");
  lua_pushstring(L, cpu->vendor);
  lua_setfield(L, -2, "vendor");
  lua_pushinteger(L, cpu->family);
  lua_setfield(L, -2, "family");
  lua_pushinteger(L, cpu->model);
  lua_setfield(L, -2, "model");
  lua_pushinteger(L, cpu->stepping);
  lua_setfield(L, -2, "stepping");
  lua_pushboolean(L, cpu->has[F_HYPERVISOR]);
  lua_setfield(L, -2, "hypervisor");
  lua_pushinteger(L, (lua_Integer)cpu->xcr0);
  lua_setfield(L, -2, "xcr0");
  lua_createtable(L, 0, F_COUNT);
  for (int f = 0; f < F_COUNT; f++) {
    lua_pushboolean(L, cpu->has[f]);
    lua_setfield(L, -2, avxbuf_feature_names[f]);
  }
  lua_setfield(L, -2, "features");
}

static int l_cpu(lua_State *L)
{
  const avxbuf_machine *m = avxbuf_machine_get();
  lua_newtable(L);
  push_cpu(L, m->cpu);
  push_decision(L, m->cpu, &m->defaults);
  lua_pushstring(L, m->cpu->brand);
  lua_setfield(L, -2, "brand");
  lua_createtable(L, 0, 3);
  lua_pushinteger(L, (lua_Integer)m->cpu->l1d);
  lua_setfield(L, -2, "l1d");
  lua_pushinteger(L, (lua_Integer)m->cpu->l2);
  lua_setfield(L, -2, "l2");
  lua_pushinteger(L, (lua_Integer)m->cpu->l3);
  lua_setfield(L, -2, "l3");
  lua_setfield(L, -2, "cache");
  /* The decision alone, as the issue's `default = {...}` asks. */
  lua_newtable(L);
  push_decision(L, m->cpu, &m->defaults);
  lua_setfield(L, -2, "default");
  return 1;
}

static uint32_t reg_field(lua_State *L, const char *name)
{
  lua_Integer v = 0;
  int t = lua_getfield(L, 1, name);
  if (t != LUA_TNIL) {
    int isint;
    v = lua_tointegerx(L, -1, &isint);
    if (t != LUA_TNUMBER || !isint || v < 0 || v > 0xFFFFFFFF)
      luaL_argerror(L, 1, lua_pushfstring(L, "field '%s' must be an integer from 0 to 0xFFFFFFFF", name));
  }
  lua_pop(L, 1);
  return (uint32_t)v;
}

/* avxbuf.decide{vendor=, leaf1_eax=, ...}: the policy for any processor. */
static int l_decide(lua_State *L)
{
  avxbuf_cpuid_raw raw;
  avxbuf_cpu cpu;
  avxbuf_defaults d;
  memset(&raw, 0, sizeof raw);
  luaL_checktype(L, 1, LUA_TTABLE);
  int t = lua_getfield(L, 1, "vendor");
  if (t != LUA_TNIL) {
    size_t len = 0;
    const char *v = lua_type(L, -1) == LUA_TSTRING ? lua_tolstring(L, -1, &len) : NULL;
    if (v == NULL || len > 12)
      luaL_argerror(L, 1, "field 'vendor' must be a string of at most 12 characters");
    memcpy(raw.vendor, v, len);
  }
  lua_pop(L, 1);
  raw.leaf1_eax = reg_field(L, "leaf1_eax");
  raw.leaf1_ecx = reg_field(L, "leaf1_ecx");
  raw.leaf7_ebx = reg_field(L, "leaf7_ebx");
  raw.leaf7_ecx = reg_field(L, "leaf7_ecx");
  raw.leaf7_edx = reg_field(L, "leaf7_edx");
  raw.leaf7_1_eax = reg_field(L, "leaf7_1_eax");
  lua_Integer xcr0 = 0;
  if (lua_getfield(L, 1, "xcr0") != LUA_TNIL) {
    int isint;
    xcr0 = lua_tointegerx(L, -1, &isint);
    if (lua_type(L, -1) != LUA_TNUMBER || !isint)
      luaL_argerror(L, 1, "field 'xcr0' must be an integer");
  }
  lua_pop(L, 1);
  raw.xcr0 = (uint64_t)xcr0;
  avxbuf_cpu_decode(&raw, &cpu);
  avxbuf_policy(&cpu, &d);
  lua_newtable(L);
  push_cpu(L, &cpu);
  push_decision(L, &cpu, &d);
  return 1;
}

/* ---- registration -------------------------------------------------------- */

static const luaL_Reg module_funcs[] = {
  { "new", l_new }, { "from", l_from },
  { "copy", l_copy }, { "zero", l_zero }, { "fill", l_fill },
  { "kernel", l_kernel }, { "kernels", l_kernels }, { "configure", l_configure }, { "config", l_config },
  { "reset", l_reset }, { "cpu", l_cpu }, { "decide", l_decide },
  { NULL, NULL }
};

static const luaL_Reg buffer_methods[] = {
  { "tostring", l_tostring }, { "byte", l_byte },
  { NULL, NULL }
};

/* Methods that are the module's own closures: buf:copy == avxbuf.copy. */
static const char *const shared_methods[] = { "copy", "zero", "fill", NULL };

static const luaL_Reg buffer_meta[] = {
  { "__len", l_len }, { "__tostring", l_display },
  { NULL, NULL }
};

/* ---- LuaJIT ---------------------------------------------------------------- */

/* Under LuaJIT, hands the module to require("avxbuf.ffi") with this state's
 * plan and the string-instruction kernels, so that Lua code the JIT compiles
 * can check the arguments, pick the kernel and call it through the FFI;
 * avxbuf.ffi says whether that path is in use. Anything missing (no FFI, the
 * Lua file not installed, a layout it does not recognise) leaves the C
 * functions. */
static void install_ffi_path(lua_State *L, avxbuf_state *st)
{
  int on = 0;
  lua_getglobal(L, "jit");
  int luajit = !lua_isnil(L, -1);
  lua_pop(L, 1);
  if (luajit) {
    lua_getglobal(L, "pcall");
    lua_getglobal(L, "require");
    lua_pushliteral(L, "avxbuf.ffi");
    lua_call(L, 2, 2);
    if (lua_toboolean(L, -2) && lua_isfunction(L, -1)) {
      lua_pushvalue(L, -3);                       /* the module */
      lua_pushlightuserdata(L, &st->plan);
      lua_pushlightuserdata(L, (void *)&avxbuf_k_rep_movsb);
      lua_pushlightuserdata(L, (void *)&avxbuf_k_rep_stosb);
      on = lua_pcall(L, 4, 0, 0) == LUA_OK;
      if (!on) lua_pop(L, 1);                     /* the error: keep the C path */
      lua_pop(L, 1);
    } else {
      lua_pop(L, 2);
    }
  }
  lua_pushboolean(L, on);
  lua_setfield(L, -2, "ffi");
}

static void warn_stderr(void *ud, const char *message)
{
  (void)ud;
  fprintf(stderr, "%s\n", message);
}

__attribute__((visibility("default"))) int luaopen_avxbuf(lua_State *L)
{
  avxbuf_state *st = lua_newuserdatauv(L, sizeof *st, 0);   /* upvalue 1 */
  avxbuf_state_init(st, getenv("AVXBUF_OPTIONS"), warn_stderr, NULL);

  luaL_newmetatable(L, BUFFER_NAME);                          /* upvalue 2 */
  lua_pushvalue(L, -2);
  lua_pushvalue(L, -2);
  luaL_setfuncs(L, buffer_meta, 2);
  luaL_newlibtable(L, module_funcs);
  lua_pushvalue(L, -3);
  lua_pushvalue(L, -3);
  luaL_setfuncs(L, module_funcs, 2);

  lua_createtable(L, 0, 5);                                   /* methods */
  lua_pushvalue(L, -4);
  lua_pushvalue(L, -4);
  luaL_setfuncs(L, buffer_methods, 2);
  for (int i = 0; shared_methods[i]; i++) {
    lua_getfield(L, -2, shared_methods[i]);
    lua_setfield(L, -2, shared_methods[i]);
  }
  lua_setfield(L, -3, "__index");
  lua_pushboolean(L, avxbuf_machine_get()->emulated);
  lua_setfield(L, -2, "emulated");
  lua_pushliteral(L, "scm");
  lua_setfield(L, -2, "version");
  install_ffi_path(L, st);
  return 1;
}
