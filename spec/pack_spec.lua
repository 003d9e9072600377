-- buf:pack and buf:unpack against string.pack and string.unpack as the
-- oracle: random formats and values (spec/pack_cases.lua), byte for byte
-- and value for value, with guard bytes around what pack writes. Where this
-- Lua has no string.pack (5.1, 5.2, LuaJIT), a lua5.4 child is the oracle.
local lu = require "luaunit"
local h = require "helpers"
local cases = require "pack_cases"
local avxbuf = h.avxbuf

local N = h.LIGHT and 300 or 2000
local SIZE_T_BYTES = string.pack and #string.pack("T", 0) or 8   -- of the oracle in this process
local GUARD = 16

-- For each case: the bytes string.pack gives (or the error), and what
-- string.unpack reads back from them at the case's index.
local function oracle_here(k)
  local c = cases.case(k)
  local ok, packed = pcall(string.pack, c.fmt, (table.unpack or unpack)(c.values))
  if not ok then return { error = packed } end
  local data = ("\0"):rep(c.index - 1) .. packed
  local r = { pcall(string.unpack, c.fmt, data, c.index) }
  return { hex = cases.hex(packed), unpacked = r[1] and cases.serialise(select(2, (table.unpack or unpack)(r)))
                                               or "error" }
end

local function oracle_all()
  if string.pack then
    local t = {}
    for k = 1, N do t[k] = oracle_here(k) end
    return t
  end
  h.needs_children()
  local out, status = h.run_child({ LUA_PATH = "spec/?.lua;bench/lib/?.lua;;" }, string.format([[
    local cases = require "pack_cases"
    for k = 1, %d do
      local c = cases.case(k)
      local ok, packed = pcall(string.pack, c.fmt, table.unpack(c.values))
      if not ok then print(k, "error") else
        local data = ("\0"):rep(c.index - 1) .. packed
        local r = { pcall(string.unpack, c.fmt, data, c.index) }
        print(k, "=" .. cases.hex(packed), r[1] and cases.serialise(select(2, table.unpack(r))) or "error")
      end
    end]], N), "lua5.4")
  lu.assertEquals(status, 0, out)
  local t = {}
  for k, hex, unpacked in out:gmatch("(%d+)\t=?(%S*)\t?([^\n]*)") do   -- "=": hex, maybe empty
    t[tonumber(k)] = hex == "error" and { error = "(in the lua5.4 child)" } or { hex = hex, unpacked = unpacked }
  end
  return t
end

TestPack = {}

function TestPack.test_random_formats_against_string_pack()
  local oracle = oracle_all()
  local packed_ok = 0
  for k = 1, N do
    local c, want = cases.case(k), oracle[k]
    lu.assertNotNil(want, "case " .. k)
    local width = want.hex and #want.hex / 2 or 64
    local b = avxbuf.new(c.index - 1 + width + GUARD, 0xEE)
    local before = b:tostring()
    local ok, next_index = pcall(b.pack, b, c.index, c.fmt, h.unpack(c.values))
    if want.error then
      lu.assertFalse(ok, string.format("case %d: %q packed, string.pack refused it (%s)", k, c.fmt, want.error))
      lu.assertEquals(b:tostring(), before, "a failed pack writes nothing")
    else
      lu.assertTrue(ok, string.format("case %d: %q: %s", k, c.fmt, tostring(next_index)))
      lu.assertEquals(next_index, c.index + width, c.fmt)
      local got = b:tostring()
      lu.assertEquals(cases.hex(got:sub(c.index, c.index + width - 1)), want.hex,
                      string.format("case %d: %q", k, c.fmt))
      h.assert_bytes(got:sub(1, c.index - 1) .. got:sub(c.index + width), before:sub(1, c.index - 1)
                     .. before:sub(c.index + width), "guard bytes, case " .. k)
      -- unpack at the same index, over the same bytes (zeros before them)
      b:zero(1, c.index - 1)
      local r = { pcall(b.unpack, b, c.index, c.fmt) }
      local got_unpacked = r[1] and cases.serialise(select(2, h.unpack(r))) or "error"
      -- (string.unpack with a 32-bit size_t reads a length prefix of more
      -- than 4 bytes into a size_t, dropping its high bytes; avxbuf reports
      -- such a length as too long, so the two part ways there.)
      if want.unpacked ~= "error" and not (SIZE_T_BYTES < 8 and (c.fmt:find("s[5-9]") or c.fmt:find("s1[0-6]"))) then
        -- string.unpack's values, then the next index (over data that ends
        -- at the packed bytes; the guard after them does not change it)
        lu.assertEquals(got_unpacked, want.unpacked, string.format("case %d: unpack %q", k, c.fmt))
      end
      packed_ok = packed_ok + 1
    end
    -- the append form (its own code per format under LuaJIT: lua/avxbuf/ffi_format.lua)
    local a = avxbuf.from("\238\238\238")   -- (decimal: 5.1 has no \x escapes)
    local ok_a, next_a = pcall(a.pack, a, c.fmt, h.unpack(c.values))
    if want.error then
      lu.assertFalse(ok_a, string.format("case %d: %q appended, string.pack refused it", k, c.fmt))
      lu.assertEquals(a:tostring(), "\238\238\238", "a failed append writes nothing")
    else
      lu.assertTrue(ok_a, string.format("case %d: %q appended: %s", k, c.fmt, tostring(next_a)))
      lu.assertEquals(next_a, 4 + width, c.fmt)
      lu.assertEquals(cases.hex(a:tostring()), "eeeeee" .. want.hex, string.format("case %d: %q appended", k, c.fmt))
    end
  end
  lu.assertTrue(packed_ok > N / 2, "most random cases should be valid formats: " .. packed_ok)
end

function TestPack.test_every_option_round_trips()
  local b = avxbuf.new(200)
  local fmt = "<b B h H i I l L j J T f d n i3 I7 s1 s z x c5 !4 i4 Xi8 >i2 =I2"
  local values = { -128, 255, -32768, 65535, -2 ^ 31, 2 ^ 32 - 1, -5, 7, -(2 ^ 50), 2 ^ 52, 99, 0.5,
                   -1.25, 1e300, -(2 ^ 23), 2 ^ 53 - 1, "abc", "defg", "zz", "12", -3, 513, 65535 }
  local next_index = b:pack(1, fmt, h.unpack(values))
  local got = { b:unpack(1, fmt) }
  lu.assertEquals(got[#got], next_index)
  got[#got] = nil
  lu.assertEquals(got[19], "zz")
  lu.assertEquals(got[20], "12\0\0\0")
  got[20] = "12"
  lu.assertEquals(got, values)
end

function TestPack.test_errors_name_the_argument_and_write_nothing()
  local b = avxbuf.new(16, 7)
  local function refuses(expect, ...)
    local args = { ... }
    local ok, err = pcall(function() b:pack(h.unpack(args)) end)
    lu.assertFalse(ok, expect)
    lu.assertStrContains(err, expect)
    lu.assertEquals(b:tostring(), ("\7"):rep(16))
  end
  refuses("bad argument #2 to 'pack' (invalid format option 'q')", 1, "q", 1)
  refuses("integral size (17) out of limits [1,16]", 1, "i17", 1)
  refuses("missing size for format option 'c'", 1, "c", "x")
  refuses("bad argument #3 to 'pack' (integer overflow)", 1, "b", 200)
  refuses("bad argument #3 to 'pack' (unsigned overflow)", 1, "B", -1)
  refuses("bad argument #4 to 'pack' (string contains zeros)", 1, "bz", 1, "a\0b")
  refuses("bad argument #3 to 'pack' (string longer than given size)", 1, "c2", "abc")
  refuses("string length does not fit in given size", 1, "s1", ("x"):rep(300))
  refuses("bad argument #4 to 'pack' (number expected, got no value)", 1, "bb", 1)
  refuses("format asks for alignment not power of 2", 1, "!8 i3", 1)
  refuses("invalid next option for option 'X'", 1, "X", 1)
  -- (a record past the end grows the buffer, but not before every value passed)
  refuses("bad argument #4 to 'pack' (integer overflow)", 1, "c17 b", "", 200)
  refuses("bad argument #4 to 'pack' (number expected, got no value)", 9, "c9 b", "")
  refuses("bad argument #1 to 'pack' (index 0 out of range 1..17)", 0, "b", 1)
  refuses("bad argument #1 to 'pack' (index 18 out of range 1..17)", 18, "", 1)
  -- unpack: bounds and formats
  local ok, err = pcall(function() b:unpack(10, "j") end)
  lu.assertFalse(ok)
  lu.assertStrContains(err, "data too short: 8 bytes needed at index 10 of a 16-byte buffer")
  for _, case in ipairs {
    { b, 1, "z", "unfinished string for format 'z'" },
    { b, 18, "b", "initial position out of the buffer" },
    { avxbuf.from(("\1"):rep(16)), 1, "i16", "16-byte integer does not fit into Lua Integer" },
  } do
    ok, err = pcall(function() case[1]:unpack(case[2], case[3]) end)
    lu.assertFalse(ok)
    lu.assertStrContains(err, case[4])
  end
  lu.assertEquals(avxbuf.from(("\255"):rep(16)):unpack(1, "i16"), -1, "sign extension is not an overflow")
end

function TestPack.test_unpack_index_counts_from_the_end()
  local b = avxbuf.from("\1\2\3\4")
  lu.assertEquals({ b:unpack(-2, "BB") }, { 3, 4, 5 })
  lu.assertEquals({ b:unpack(-10, "B") }, { 1, 2 })
  lu.assertEquals({ b:unpack(5, "") }, { 5 })
end

-- Every integer size, signed and not, at both ends of its range (and -1,
-- which I9..I16 take as 2^64 - 1, so no sign extension past 8 bytes), byte
-- for byte against string.pack, and back with unpack.
function TestPack.test_every_integer_size_at_both_ends()
  -- 2^b - 1 exactly: integer shifts where Lua has them, else capped at
  -- 2^53 (all a double holds exactly)
  local ones = math.type and load("return function(b) return b >= 64 and -1 or (1 << b) - 1 end")()
               or function(b) return b < 54 and 2 ^ b - 1 or 2 ^ 53 end
  local list = {}
  for size = 1, 16 do
    local bits = math.min(size * 8, 64)
    local smax = ones(bits - 1)
    for _, v in ipairs { -smax - 1, smax, -1, 0, 1 } do list[#list + 1] = { "<i" .. size, v } end
    for _, v in ipairs { 0, 1, bits < 64 and ones(bits) or h.MAXINT } do list[#list + 1] = { ">I" .. size, v } end
    if size >= 8 then list[#list + 1] = { "<I" .. size, -1 } end
  end
  local want = {}
  if string.pack then
    for k, c in ipairs(list) do want[k] = cases.hex(string.pack(c[1], c[2])) end
  else
    h.needs_children()
    local code = { "local cases = require 'pack_cases'" }
    for _, c in ipairs(list) do
      code[#code + 1] = string.format("print(cases.hex(string.pack(%q, %.0f)))", c[1], c[2])
    end
    local out, status = h.run_child({ LUA_PATH = "spec/?.lua;bench/lib/?.lua;;" }, table.concat(code, "\n"), "lua5.4")
    lu.assertEquals(status, 0, out)
    for hex in out:gmatch("(%x+)\n") do want[#want + 1] = hex end
  end
  lu.assertEquals(#want, #list)
  for k, c in ipairs(list) do
    local b = avxbuf.new()
    b:resize(16)
    local n = b:pack(1, c[1], c[2])
    local got = cases.hex(b:tostring(1, n - 1))
    lu.assertEquals(got, want[k], c[1] .. " of " .. tostring(c[2]))
    local ok, v = pcall(b.unpack, b, 1, c[1])
    local fits = not (c[1]:find("I") and c[2] < 0 and #c[1] > 3 and tonumber(c[1]:sub(3)) > 8)
    if fits then lu.assertEquals(ok and v, c[2], "unpack " .. c[1]) end
    -- appended, in a loop long enough for LuaJIT to compile
    local a = avxbuf.new()
    for _ = 1, 100 do a:pack(c[1], c[2]) end
    lu.assertEquals(cases.hex(a:tostring()), want[k]:rep(100), c[1] .. " of " .. tostring(c[2]) .. ", appended")
  end
end

-- A pack at an index that fails for lack of memory writes nothing: its
-- first options' bytes are not left over the buffer (issue 34: a format of
-- more than one chunk of options grew per chunk, after writing the first).
function TestPack.test_a_failed_pack_at_an_index_writes_nothing()
  if h.LIGHT then lu.skip("valgrind's allocator takes the 200 GB request as a program error") end
  local b = avxbuf.from(("."):rep(40))
  local values = {}
  for k = 1, 16 do values[k] = 65 end
  for k = 17, 116 do values[k] = "x" end
  local ok, err = pcall(b.pack, b, 1, ("B"):rep(16) .. ("c2000000000"):rep(100), h.unpack(values))
  lu.assertFalse(ok)
  -- (a 32-bit size_t cannot hold the total: "format result too large")
  lu.assertTrue((err:find("not enough memory", 1, true) or err:find("too large", 1, true)) ~= nil, err)
  lu.assertEquals(b:tostring(), ("."):rep(40))
end
