/* libFuzzer: buf:find, buf:match and buf:gmatch on arbitrary patterns,
 * subjects and inits, with Lua 5.4's string.find, string.match and
 * string.gmatch as the oracle: the same values (how many, their types,
 * their bytes), or the same error text. gmatch: every call of both
 * iterators up to the end (or 3 errors, or 64 calls), going on after an
 * error as 5.4's iterator does. Any difference aborts; ASan and UBSan watch
 * every read.
 *
 * Input: byte 0 picks the function (and plain for find), byte 1 is init
 * (a signed byte; 0x80: none), byte 2 the pattern's length (at most 32,
 * patterns of any bytes, NUL too), then the pattern, then the subject.
 *
 * Backtracking takes time polynomial in the subject's length with the
 * number of quantifiers as the power, in 5.4 as here (one input of nested
 * ".-" ran for minutes): subjects of at most 64 bytes, patterns with at
 * most 4 quantifier bytes. (The nesting limit of 200 is out of reach of
 * such patterns: spec/match_spec.lua tests it.) */
#include <stdint.h>
#include <string.h>
#include "lua_oracle.h"

#define MAX_PATTERN 32
#define MAX_SUBJECT 64
#define MAX_QUANTIFIERS 4

static const char check[] =
  "local avxbuf, op, p, s, init, plain = ...\n"
  "local b = avxbuf.from(s)\n"
  "local method = b[op]\n"
  "local function same(x, y, what)\n"
  "  if x.n ~= y.n then return what .. ': ' .. x.n .. ' values, avxbuf ' .. y.n end\n"
  "  for i = 1, x.n do\n"
  "    if x[i] ~= y[i] or math.type(x[i]) ~= math.type(y[i]) then\n"
  "      return what .. ': value ' .. i .. ': ' .. tostring(x[i]) .. ', avxbuf ' .. tostring(y[i])\n"
  "    end\n"
  "  end\n"
  "end\n"
  "if op ~= 'gmatch' then\n"
  "  return same(table.pack(pcall(string[op], s, p, init, plain)), table.pack(pcall(method, b, p, init, plain)), op)\n"
  "end\n"
  "local want_it, got_it = string.gmatch(s, p, init), method(b, p, init)\n"
  "local errors = 0\n"
  "for call = 1, 64 do\n"
  "  local want, got = table.pack(pcall(want_it)), table.pack(pcall(got_it))\n"
  "  local d = same(want, got, 'gmatch call ' .. call)\n"
  "  if d then return d end\n"
  "  if not want[1] then errors = errors + 1; if errors == 3 then return end\n"
  "  elseif want[2] == nil then return end\n"
  "end\n";

static const char *const ops[] = { "find", "match", "gmatch", "find" };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  if (size < 3) return 0;
  size_t plen = data[2];
  if (plen > MAX_PATTERN || size - 3 < plen || size - 3 - plen > MAX_SUBJECT) return 0;
  int quantifiers = 0;
  for (size_t k = 0; k < plen; k++) {
    uint8_t c = data[3 + k];
    quantifiers += c == '*' || c == '+' || c == '-' || c == '?';
  }
  if (quantifiers > MAX_QUANTIFIERS) return 0;
  int op = data[0] & 3;                    /* 3: find with plain = true */
  oracle_begin(check);
  lua_pushstring(L, ops[op]);
  lua_pushlstring(L, (const char *)data + 3, plen);
  lua_pushlstring(L, (const char *)data + 3 + plen, size - 3 - plen);
  if (data[1] == 0x80) lua_pushnil(L);
  else lua_pushinteger(L, (int8_t)data[1]);
  lua_pushboolean(L, op == 3);
  oracle_end(5, "fuzz_match");
  return 0;
}
