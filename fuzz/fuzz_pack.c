/* libFuzzer: buf:unpack and buf:pack on arbitrary formats and bytes, with
 * Lua 5.4's string.unpack and string.pack as the oracle. Input: the format
 * (up to the first NUL), then the bytes. Whatever string.unpack reads from
 * the bytes, buf:unpack must read the same, and buf:pack, at an index and
 * appending, must write back what string.pack writes; where the oracle
 * refuses, avxbuf must too, and an appending pack leaves the buffer as it
 * was. Any difference aborts; ASan and UBSan watch every read and write. */
#include <stdint.h>
#include <string.h>
#include "lua_oracle.h"

static const char check[] =
  "local avxbuf, fmt, bytes = ...\n"
  "local b = avxbuf.from(bytes)\n"
  "local want = table.pack(pcall(string.unpack, fmt, bytes))\n"
  "local got = table.pack(pcall(b.unpack, b, 1, fmt))\n"
  "if want[1] ~= got[1] then return 'unpack: oracle ' .. tostring(want[2]) .. ', avxbuf ' .. tostring(got[2]) end\n"
  "if not want[1] then return nil end\n"
  "if want.n ~= got.n then return 'unpack: ' .. want.n .. ' results, avxbuf ' .. got.n end\n"
  "for i = 2, want.n do\n"
  "  local x, y = want[i], got[i]\n"
  "  if x ~= y and not (x ~= x and y ~= y) then return 'unpack: result ' .. i .. ' differs' end\n"
  "end\n"
  "local values = table.pack(table.unpack(want, 2, want.n - 1))\n"
  "local ok, packed = pcall(string.pack, fmt, table.unpack(values, 1, values.n))\n"
  "local out = avxbuf.new(ok and #packed or 64)\n"
  "local pok, nexti = pcall(out.pack, out, 1, fmt, table.unpack(values, 1, values.n))\n"
  "if ok ~= pok then return 'pack: oracle ' .. tostring(packed) .. ', avxbuf ' .. tostring(nexti) end\n"
  "if ok and (out:tostring() ~= packed or nexti ~= #packed + 1) then return 'pack: bytes differ' end\n"
  "local app = avxbuf.from('ab')\n"
  "local aok = pcall(app.pack, app, fmt, table.unpack(values, 1, values.n))\n"
  "if aok ~= ok then return 'appending pack: oracle ' .. tostring(ok) .. ', avxbuf ' .. tostring(aok) end\n"
  "if app:tostring() ~= (ok and 'ab' .. packed or 'ab') then return 'appending pack: bytes differ' end\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  const uint8_t *nul = memchr(data, 0, size);
  size_t flen = nul ? (size_t)(nul - data) : size;
  if (flen > 64) return 0;   /* formats, not essays */
  oracle_begin(check);
  lua_pushlstring(L, (const char *)data, flen);
  lua_pushlstring(L, nul ? (const char *)nul + 1 : "", nul ? size - flen - 1 : 0);
  oracle_end(2, "fuzz_pack");
  return 0;
}
