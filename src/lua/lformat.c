/* buf:putf(fmt, ...): string.format straight into a buffer. The formats
 * whose output is plain (literal text, %%, %s of a string or buffer, %d
 * and %i of an integer) are written in place, with no string made; any
 * other goes through the running Lua's own string.format, so the bytes
 * appended are always what it gives. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lua/largs.h"
#include "lua/lbuffer.h"
#include "lua/lfuncs.h"

/* The decimal digits of an integer, as %d writes it. */
static size_t format_int(char out[32], lua_Integer v)
{
  return (size_t)snprintf(out, 32, "%lld", (long long)v);
}

/* Argument arg as the bytes %s writes without a string made: a string or
 * a buffer without zero bytes (5.1 and 5.2 stop at a zero, and a number
 * goes through tostring). NULL: let string.format do it. */
static const unsigned char *plain_bytes(lua_State *L, int arg, size_t *len)
{
  const unsigned char *p;
  buffer *v = testbuffer(L, arg);
  if (v) { p = v->data; *len = v->len; }
  else if (lua_type(L, arg) == LUA_TSTRING) p = (const unsigned char *)lua_tolstring(L, arg, len);
  else return NULL;
  return memchr(p, 0, *len) ? NULL : p;
}

/* Appends len bytes to the pass's output (out may be NULL: measuring). */
static int emit(unsigned char *out, size_t *n, const void *p, size_t len)
{
  if (len > MAX_LENGTH - *n) return 0;
  if (out) memcpy(out + *n, p, len);
  *n += len;
  return 1;
}

/* One pass over the format with values from argument 3: with out == NULL
 * it measures (0: not plain, string.format's job), with out it writes. It
 * runs no Lua code, so buffer pointers stay valid between the passes. */
static int plain_pass(lua_State *L, const char *fmt, size_t flen, unsigned char *out, size_t *total)
{
  int arg = 3, top = lua_gettop(L);
  size_t n = 0;
  for (size_t k = 0; k < flen; k++) {
    int ok;
    if (fmt[k] != '%' || (k + 1 < flen && fmt[k + 1] == '%')) {
      ok = emit(out, &n, fmt + k, 1);
      k += fmt[k] == '%';
    } else if (++k >= flen || arg > top) {
      return 0;
    } else if (fmt[k] == 's') {
      size_t len;
      const unsigned char *p = plain_bytes(L, arg++, &len);
      ok = p && emit(out, &n, p, len);
    } else if (fmt[k] == 'd' || fmt[k] == 'i') {
      lua_Integer v;
      char digits[32];
      ok = lua_type(L, arg) == LUA_TNUMBER && testint(L, arg++, &v) && emit(out, &n, digits, format_int(digits, v));
    } else {
      return 0;   /* flags, widths, other conversions */
    }
    if (!ok) return 0;
  }
  *total = n;
  return 1;
}

/* string.format's "bad argument #k to 'format' (...)" (5.4 says
 * 'string.format') renumbered as putf's own argument k + 1, and its errors
 * in the format itself ("invalid option '%z' to 'format'", 5.4's "invalid
 * conversion", "invalid format (...)"), which name no argument, as
 * argument 2's; any other error (a __tostring's) unchanged. */
static int format_error(lua_State *L)
{
  const char *msg = lua_tostring(L, -1);
  int k, at = 0;
  if (msg && sscanf(msg, "bad argument #%d to '%*[^']' (%n", &k, &at) == 1 && at > 0) {
    size_t len = strlen(msg + at);
    if (len > 0 && msg[at + len - 1] == ')') {
      lua_pushlstring(L, msg + at, len - 1);
      return luaL_argerror(L, k + 1, lua_tostring(L, -1));
    }
  }
  static const char *const format_errors[] = { "invalid option", "invalid conversion", "invalid format" };
  static const char to_format[] = " to 'format'";
  for (size_t i = 0; msg && i < sizeof format_errors / sizeof format_errors[0]; i++) {
    if (strncmp(msg, format_errors[i], strlen(format_errors[i])) != 0) continue;
    size_t len = strlen(msg), tail = sizeof to_format - 1;
    if (len > tail && !strcmp(msg + len - tail, to_format)) len -= tail;
    lua_pushlstring(L, msg, len);
    return luaL_argerror(L, 2, lua_tostring(L, -1));
  }
  return lua_error(L);
}

/* Whether argument arg (a number, or a string that converts to one) has an
 * integer value that fits 64 bits, as 5.3's luaL_checkinteger asks. */
static int has_integer_value(lua_State *L, int arg)
{
#if LUA_VERSION_NUM >= 503
  if (lua_isinteger(L, arg)) return 1;
#endif
  lua_Number n = lua_tonumber(L, arg);
  return n == floor(n) && n >= -9223372036854775808.0 && n < 9223372036854775808.0;   /* -2^63 <= n < 2^63 */
}

/* string.format of 5.1, 5.2 and LuaJIT truncates a fraction given to an
 * integer conversion (%d, %i, %o, %x, %X, %c) where 5.3 and 5.4 raise:
 * after a format that succeeded, putf raises as they do on every Lua. */
static void check_integer_conversions(lua_State *L, const char *fmt, size_t flen, int top)
{
  int arg = 3;
  for (size_t k = 0; k < flen && arg <= top; k++) {
    if (fmt[k] != '%') continue;
    if (++k < flen && fmt[k] == '%') continue;
    while (k < flen && fmt[k] && strchr("-+ #0123456789.", fmt[k])) k++;
    if (k < flen && fmt[k] && strchr("dioxXc", fmt[k]) && lua_isnumber(L, arg) && !has_integer_value(L, arg))
      luaL_argerror(L, arg, "number has no integer representation");
    arg++;
  }
}

/* Pushes string.format(fmt, ...) of arguments 2..top. Buffers go as
 * strings of their bytes: string.format would call their __tostring, and
 * LuaJIT 2.1.0-beta3's crashes when a finalizer steps the collector inside
 * such a call (spec/gc_spec.lua found it; plain LuaJIT code does it too). */
static void format_string(lua_State *L, int top)
{
  lua_getfield(L, LUA_REGISTRYINDEX, "_LOADED");
  if (lua_type(L, -1) != LUA_TTABLE || lua_getfield(L, -1, "string") != LUA_TTABLE
      || lua_getfield(L, -1, "format") != LUA_TFUNCTION)
    luaL_error(L, "putf: string.format is not loaded");
  for (int i = 2; i <= top; i++) {
    buffer *v = testbuffer(L, i);
    if (v == NULL) lua_pushvalue(L, i);
    else avxbuf_pushall(L, v);
  }
  if (lua_pcall(L, top - 1, 1, 0) != LUA_OK) format_error(L);
}

#define FORMAT_TRIES 8

/* The sum of the generations of the buffers among arguments 1..top: it
 * moves whenever one of them changes (each change adds to one). */
static uint32_t generations(lua_State *L, int top)
{
  uint32_t sum = 0;
  for (int i = 1; i <= top; i++) {
    buffer *v = testbuffer(L, i);
    if (v) sum += v->gen;
  }
  return sum;
}

/* buf:putf(fmt, ...) -> buf */
static int l_putf(lua_State *L)
{
  buffer *b = checkbuffer(L, 1);
  if (lua_type(L, 2) != LUA_TSTRING) return avxbuf_argtype(L, 2, "string");
  lmodule *m = buffer_module(L, b);
  m = avxbuf_pace(L, m);   /* first: a finalizer it runs may change b */
  int top = lua_gettop(L);
  size_t flen, total;
  const char *fmt = lua_tolstring(L, 2, &flen);
  if (plain_pass(L, fmt, flen, NULL, &total)) {
    avxbuf_reserve(L, m, b, avxbuf_checkgrowth(L, 2, b->len, total), b->len);
    plain_pass(L, fmt, flen, b->data + b->len, &total);
  } else {
    /* The call runs Lua code (and makes strings, which can run a
     * finalizer): done again until no buffer involved changed meanwhile,
     * so that what is appended and where come from one moment (up to
     * FORMAT_TRIES times: finalizers that change a buffer at every
     * collection would never let it end). */
    for (int tries = 1;; tries++) {
      uint32_t before = generations(L, top);
      format_string(L, top);
      if (generations(L, top) == before || tries == FORMAT_TRIES) break;
      lua_settop(L, top);
    }
    check_integer_conversions(L, fmt, flen, top);
    const char *s = lua_tolstring(L, -1, &total);
    avxbuf_reserve(L, m, b, avxbuf_checkgrowth(L, 2, b->len, total), b->len);
    memcpy(b->data + b->len, s, total);
  }
  buffer_setlen(b, b->len + total);
  lua_settop(L, 1);
  return 1;
}

const luaL_Reg avxbuf_format_methods[] = {
  { "putf", l_putf },
  { NULL, NULL }
};
