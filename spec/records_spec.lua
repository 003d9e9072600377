-- Records: buf:pack appending and at an index, put of numbers, putf,
-- reserve/capacity/reset, and read at an index. Each against an oracle that
-- does not go through avxbuf:
--   pack   string.pack (on 5.1, 5.2 and LuaJIT, which have none, a lua5.4
--          child packs the same records: its string.pack is the oracle)
--   put    tostring of the same number in this Lua
--   putf   string.format of this Lua (same bytes, or the same argument error)
--   read   the file's bytes read back with file:read into a Lua string model
-- with the bytes around what is written (guards) compared too.
local lu = require "luaunit"
local h = require "helpers"
local avxbuf = h.avxbuf

local TORTURE = h.TORTURE
local LIGHT = h.LIGHT or TORTURE
local unpack_ = h.unpack

local rng, bytes = h.rng, h.random_bytes

local pack_cases = require "pack_cases"
local hex = pack_cases.hex

-- ---- records and their oracle -----------------------------------------------

-- Formats from the brief, and others whose alignment depends on where the
-- record starts (string.pack aligns from the start of its own result).
local FIXED = {
  { "<I4s1d", function(r) return { r(65536) * 65536 + r(65536), bytes(r, r(20)), 2.5 } end },
  { "!8 b i8", function(r) return { r(256) - 128, r(2 ^ 20) - 2 ^ 19 } end },
  { "z", function(r) return { bytes(r, r(12), true) } end },
  { "xX i4", function(r) return { r(100) } end },   -- string.pack refuses it: X before a space
  { "!4 xXi4 i4", function(r) return { r(100) } end },
  { "!8 b Xd d", function(r) return { 3, r(1000) / 8 } end },
  { ">!2 B h x i3", function(r) return { r(256), r(60000) - 30000, r(2 ^ 23) - 2 ^ 22 } end },
  { "=c5 B", function(r) return { bytes(r, r(6)), r(256) } end },
  { "!16 b i16", function(r) return { -1, -(r(2 ^ 20)) } end },
  { "<s2 z Xi8", function(r) return { bytes(r, r(30)), bytes(r, r(5), true) } end },
  { "<j n f", function(r) return { r(2 ^ 31) - 2 ^ 30, 1 / 3, 0.1 } end },
}

-- The mix of the random records: pack_spec's, with fewer options, smaller
-- strings, infinities and "!8X" (alignment from a fixed maximum).
local SHAPE = {
  most = 5, aligns = { "", "2", "4", "8" }, small_int = 2 ^ 16,
  floats = { 0, 1, -1, 0.5, -2.25, 1e10, 3.14159, 2 ^ -20, 65504, 1 / 3, 1e300, math.huge, -math.huge },
  s_sizes = { "", "1", "2", "4", "8" }, s_len = 40, s1_len = 40, z_len = 20, c_most = 12, x_align = "!8",
}

-- One record: {fmt, values, n = #values}. About one in ten is one
-- string.pack refuses (a value out of range or missing, a bad option).
local function record(r)
  if r(4) == 0 then
    local f = FIXED[1 + r(#FIXED)]
    local v = f[2](r)
    return { fmt = f[1], values = v, n = #v }
  end
  local parts, values = pack_cases.options(r, SHAPE, {}, {})
  if r(10) == 0 then   -- something string.pack refuses
    local k = r(5)
    if k == 0 then parts[#parts + 1] = "b"; values[#values + 1] = 128 + r(100)
    elseif k == 1 then parts[#parts + 1] = "z"; values[#values + 1] = "a\0b"
    elseif k == 2 then parts[#parts + 1] = "c2"; values[#values + 1] = "abc"
    elseif k == 3 then parts[#parts + 1] = "i4"   -- no value for it
    else parts[#parts + 1] = "q"; values[#values + 1] = 1 end
  end
  return { fmt = table.concat(parts), values = values, n = #values }
end

-- A number as Lua 5.4 source (the child's string.pack sees the same value).
local function number_source(v)
  if v == math.huge then return "(1/0)" elseif v == -math.huge then return "(-1/0)" end
  if v == math.floor(v) and math.abs(v) <= 2 ^ 53 then return string.format("%.0f", v) end
  return string.format("%.17g", v)
end

-- The bytes string.pack gives each record, or false where it refuses it.
local function oracle(records)
  local out = {}
  if string.pack then
    for k, rec in ipairs(records) do
      local ok, s = pcall(string.pack, rec.fmt, unpack_(rec.values, 1, rec.n))
      out[k] = ok and s
    end
    return out
  end
  h.needs_children()
  local path = os.tmpname()
  local src = { "local function H(x) return (x:gsub('..', function(c) return string.char(tonumber(c, 16)) end)) end",
                "return {" }
  for _, rec in ipairs(records) do
    local v = {}
    for i = 1, rec.n do
      local x = rec.values[i]
      v[i] = type(x) == "string" and string.format("H%q", hex(x)) or number_source(x)
    end
    src[#src + 1] = string.format("{ H%q, %d, %s },", hex(rec.fmt), rec.n, table.concat(v, ", "))
  end
  src[#src + 1] = "}"
  local f = assert(io.open(path, "w"))
  f:write(table.concat(src, "\n"))
  f:close()
  local text, status = h.run_child({}, string.format([[
    for _, c in ipairs(dofile(%q)) do
      local ok, s = pcall(string.pack, c[1], table.unpack(c, 3, 2 + c[2]))
      print(ok and ("=" .. s:gsub(".", function(x) return string.format("%%02x", x:byte()) end)) or "error")
    end]], path), "lua5.4")
  os.remove(path)
  lu.assertEquals(status, 0, text)
  for line in text:gmatch("[^\n]+") do
    local x = line:match("^=(%x*)$")
    out[#out + 1] = x and (x:gsub("..", function(c) return string.char(tonumber(c, 16)) end)) or false
  end
  lu.assertEquals(#out, #records, "the child packed every record")
  return out
end

local function describe(rec)
  local v = {}
  for i = 1, rec.n do v[i] = type(rec.values[i]) == "string" and string.format("%q", rec.values[i])
                            or tostring(rec.values[i]) end
  return string.format("pack(%q, %s)", rec.fmt, table.concat(v, ", "))
end

TestRecords = {}

function TestRecords.tearDown()
  avxbuf.reset()
end

-- Records appended one after another equal the concatenation of what
-- string.pack gives for each (its alignment counts from the start of each
-- record, and so must pack's); each return is the next index.
function TestRecords.test_appended_records_equal_string_pack_concatenated()
  local r = rng(4242)
  local sequences, records = {}, {}
  for s = 1, LIGHT and 40 or 200 do
    local seq = { prefix = bytes(r, r(10)), first = #records + 1 }
    for _ = 1, 1 + r(8) do records[#records + 1] = record(r) end
    seq.last = #records
    sequences[s] = seq
  end
  local want = oracle(records)
  local refused = 0
  for _, seq in ipairs(sequences) do
    local b = avxbuf.new(300, 0xEE)   -- room holding 0xEE: padding and unused bytes must be written
    b:reset()
    b:put(seq.prefix)
    local parts = { seq.prefix }
    for k = seq.first, seq.last do
      local rec = records[k]
      local before, cap_before = b:tostring(), b:capacity()
      local ok, nxt = pcall(b.pack, b, rec.fmt, unpack_(rec.values, 1, rec.n))
      if want[k] then
        lu.assertTrue(ok, describe(rec) .. ": " .. tostring(nxt))
        parts[#parts + 1] = want[k]
        lu.assertEquals(nxt, #b + 1, describe(rec) .. " returns the next index")
      else
        lu.assertFalse(ok, describe(rec) .. " packed; string.pack refuses it")
        refused = refused + 1
        h.assert_bytes(b:tostring(), before, describe(rec) .. " failed and changed the buffer")
        lu.assertTrue(b:capacity() >= cap_before)
      end
      h.assert_bytes(b:tostring(), table.concat(parts), describe(rec))
      lu.assertTrue(b:capacity() >= #b)
    end
  end
  lu.assertTrue(refused > 0 and refused < #records / 4, "refused " .. refused .. " of " .. #records)
end

-- pack at random indices 1..#buf+1 and appended, mixed, against a string
-- model: the bytes before the index and after the record stay; the buffer
-- grows to max(#buf, i - 1 + #record); a refused record changes nothing.
function TestRecords.test_pack_at_an_index_against_a_model()
  local r = rng(777)
  local ops = {}
  for k = 1, LIGHT and 300 or 1500 do ops[k] = record(r) end
  local want = oracle(ops)
  local b, s = avxbuf.new(), ""
  for k, rec in ipairs(ops) do
    if k % 97 == 0 then
      s = h.pattern(r(50), k)
      b = avxbuf.new(500, 0xEE)
      b:resize(0)
      b:put(s)
    end
    local at = r(3) > 0 and 1 + r(#s + 1) or nil
    local ok, nxt
    if at then
      ok, nxt = pcall(b.pack, b, at, rec.fmt, unpack_(rec.values, 1, rec.n))
    else
      ok, nxt = pcall(b.pack, b, rec.fmt, unpack_(rec.values, 1, rec.n))
    end
    local what = string.format("op %d: at %s of %d bytes: %s", k, tostring(at), #s, describe(rec))
    if want[k] then
      lu.assertTrue(ok, what .. ": " .. tostring(nxt))
      local i = at or #s + 1
      s = s:sub(1, i - 1) .. want[k] .. s:sub(i + #want[k])
      lu.assertEquals(nxt, i + #want[k], what .. ": the next index")
    else
      lu.assertFalse(ok, what .. " packed; string.pack refuses it")
    end
    lu.assertEquals(#b, #s, what)
    h.assert_bytes(b:tostring(), s, what)
    if #s > 4000 then b:resize(100); s = s:sub(1, 100) end
  end
end

-- Every check comes before the first byte moves: a bad value after good
-- ones, at an index inside the buffer, past it, appended.
function TestRecords.test_a_refused_pack_changes_nothing()
  local text = h.pattern(40, 3)
  local cases = {
    { 1, "i4 i4 b", 1, 2, 300 }, { 5, "<I4 c2", 7, "abc" }, { 30, "c20 b", "x", 1000 }, { 41, "i8 z", 1, "a\0" },
    { 41, "c50 B", "", -1 }, { 20, "s1", ("x"):rep(256) }, { 1, "d d", 1.5 }, { 1, "!8 b i3", 1, 2 },
    { 1, "i4 q", 1 }, { 38, "c10 b", "y", {} }, { 0, "b", 1 }, { 42, "b", 1 }, { -1, "b", 1 }, { 1.5, "b", 1 },
    { 2 ^ 53, "b", 1 }, { 10, {}, 1 }, { 10, nil, 1 },
    { "i4 i4 b", 1, 2, 300 }, { "c40 b", "", 999 }, { "z", "a\0b" }, { "j", "x" }, { "i17", 1 }, { "X" },
  }
  for k, args in ipairs(cases) do
    local b = avxbuf.from(text)
    local cap = b:capacity()
    local ok, err = pcall(function() return (b:pack(unpack_(args, 1, 5))) end)   -- (no tail call: LuaJIT
    -- would lose the name)
    lu.assertFalse(ok, "case " .. k)
    lu.assertStrContains(tostring(err), "bad argument #")
    lu.assertStrContains(tostring(err), "to 'pack'")
    lu.assertEquals(#b, 40, "case " .. k)
    h.assert_bytes(b:tostring(), text, "case " .. k)
    lu.assertEquals(b:capacity() >= cap, true)
    -- and the buffer works on
    lu.assertEquals(b:pack("<i2", 258), 43)
    h.assert_bytes(b:tostring(), text .. "\2\1", "case " .. k .. ", then a good pack")
  end
end

-- Hand-checked bytes (independent of string.pack): growth at the end,
-- padding that counts from the start of the record and is zero, the index
-- returned.
function TestRecords.test_known_bytes()
  local b = avxbuf.from("ABC")
  lu.assertEquals(b:pack("!4 b i4", 1, 2), 12)
  h.assert_bytes(b:tostring(), "ABC\1\0\0\0\2\0\0\0", "aligned from the record, not the buffer")
  lu.assertEquals(b:pack(2, "<i2", 0x4142), 4)
  h.assert_bytes(b:tostring(), "ABA\1\0\0\0\2\0\0\0", "in place")
  lu.assertEquals(b:pack(11, ">I4", 0x01020304), 15)
  h.assert_bytes(b:tostring(), "ABA\1\0\0\0\2\0\0\1\2\3\4", "over the end: grows")
  lu.assertEquals(b:pack(#b + 1, "z", "end"), #b + 1)
  h.assert_bytes(b:tostring(), "ABA\1\0\0\0\2\0\0\1\2\3\4end\0", "at #buf + 1")
  local c = avxbuf.new(8, 0xEE)
  c:resize(0)   -- capacity holding 0xEE: padding must still be zero
  lu.assertEquals(c:pack("b !8 Xi8 b", 7, 9), 10)
  h.assert_bytes(c:tostring(), "\7\0\0\0\0\0\0\0\9", "padding bytes are zero")
  lu.assertEquals(c:pack(1, ""), 1, "an empty format at index 1 returns 1")
  lu.assertEquals(c:pack(""), 10, "an empty format appended returns #buf + 1")
  lu.assertEquals(#c, 9)
end

-- ---- put of numbers -----------------------------------------------------------

local function numbers()
  local zero = tonumber("0.0")   -- (5.1 folds a literal -0.0 into the constant 0)
  local list = { 0, 1, -1, 7, 42, 255, 65536, 2 ^ 31, -2 ^ 31, 2 ^ 32, 2 ^ 53, -2 ^ 53, 2 ^ 63, -2 ^ 63,
                 2 ^ 64, 1e15, 1e16, 1e17, 123456789012, 0.5, 1.5, -2.25, 0.1, 1 / 3, 2 / 3, math.pi, 1e100,
                 1e300, 1.7976931348623157e308, 5e-324, 2.2250738585072014e-308, 1e-300, 1e-5, 1e-4,
                 123.456, 100000000000000, 1e14 + 0.5, -zero, math.huge, -math.huge, zero / zero,
                 -(zero / zero), h.MININT, h.MAXINT, 3.0 }
  if math.type then   -- integers and floats apart (5.3, 5.4)
    for _, v in ipairs { load("return 3.0, -0.0, 2^53 // 1, math.mininteger, math.maxinteger, "
                              .. "math.mininteger + 1, 1 // 1, 7.0 // 1, 9007199254740993, -1.0")() } do
      list[#list + 1] = v
    end
  end
  return list
end

function TestRecords.test_put_numbers_as_tostring()
  local list = numbers()
  local b = avxbuf.from("[")
  local want = { "[" }
  for _, v in ipairs(list) do
    lu.assertIs(b:put(v), b)
    want[#want + 1] = tostring(v)
    h.assert_bytes(b:tostring(), table.concat(want), "put(" .. tostring(v) .. ")")
    -- between strings and buffers, in one call
    local c = avxbuf.from("<")
    c:put(v, "|", avxbuf.from("x"), v, v)
    h.assert_bytes(c:tostring(), "<" .. tostring(v) .. "|x" .. tostring(v) .. tostring(v), "put of " .. tostring(v))
  end
  -- all of them in one call (more pieces than put keeps at hand)
  local all = avxbuf.from("start:")
  all:put(unpack_(list))
  h.assert_bytes(all:tostring(), "start:" .. table.concat(want, "", 2), "every number in one put")
end

-- ---- putf ------------------------------------------------------------------------

-- string.format on 5.1 takes no buffer for %s (5.2 on call __tostring):
-- there the bytes of a zero-free buffer are what a string gives.
local FORMAT_TAKES_BUFFERS = pcall(string.format, "%s", avxbuf.from("x"))

-- A case: the arguments, with their count (nil holes and trailing nils).
local function P(...) return { n = select("#", ...), ... } end

local function putf_cases()
  local zero = tonumber("0.0")
  local cases = {
    P "", P "plain text", P "100%%", P "%%%%%%", P "a\0b", P("%s", "abc"), P("%s|%s|", "", "x"),
    P("%s", ("long"):rep(300)), P("%s", "a\0b"), P("[%s]", ("z\0"):rep(100)), P("%s%s%s", "a", "b", "c"),
    P("%s", 42), P("%s", 1.5), P("%s", -zero), P("%s", 2 ^ 63), P("%s", h.MININT), P("%s", 1e100),
    P("%d", 42), P("%d", -7), P("%i", 123), P("%d", 0), P("%d", h.MAXINT), P("%d", h.MININT), P("%d", 3.0),
    P("%d", 2 ^ 53), P("%d", -2 ^ 40), P("%i|%d", 1e15, -1e15), P("%d", -zero), P("%d", "10"),
    P("%5.2f", 3.14159), P("%x", 255), P("%X", 3054), P("%x", -1), P("%q", "a\n\0\"\\z\r\1\2553"),
    P("%q", 1 / 3), P("%q", 7), P("%-10s|", "left"), P("%10s|", "right"), P("%c", 65),
    P("%c%c%c", 76, 117, 97), P("%c", 0), P("%g", 1e20), P("%g", 0.1), P("%g", 100000), P("%a", 1),
    P("%a", 0.5), P("%e", 12345.678), P("%o", 8), P("%.3s", "abcdef"), P("%5d|%-5d|%05d", 42, 42, 42),
    P("%+d % d", 5, 5), P("%#x", 255), P("%.0f", 0.5), P("%.20f", 0.1), P("%s %d %s", "a", 1, "b"),
    P("a\0b%sc\0", "x"), P("%s", true), P("%s", nil), P("%s"), P("%10.3s|", "abcdef"), P("%f", math.huge),
    P("%d %s", 1), P("%d", "x"), P("%d", {}), P("%s %d", "ok", true), P("%c", "A"),
    P("%y", 1), P("%", 1), P "abc%", P("%5", 1), P("%0000000000000000000000000000000005d", 1),
    P("%d%d%d%d%d%d%d%d%d%d%d%d%d%d%d%d%d%d", 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18),
    P("%s", "x", "extra", {}), P("%s%d", "a", nil), P("%s", "x", nil),
  }
  for n = 0, 130, 13 do cases[#cases + 1] = P("%s", ("q"):rep(n)) end
  return cases
end

function TestRecords.test_putf_against_string_format()
  local prefix = "prefix\0"
  for k, c in ipairs(putf_cases()) do
    local ok_ref, want = pcall(string.format, unpack_(c, 1, c.n))
    local b = avxbuf.from(prefix)
    local ok, err = pcall(function() return (b:putf(unpack_(c, 1, c.n))) end)
    local what = string.format("case %d: putf(%q, ...)", k, c[1])
    if ok_ref then
      lu.assertTrue(ok, what .. ": " .. tostring(err))
      lu.assertIs(err, b, what .. " returns the buffer")
      h.assert_bytes(b:tostring(), prefix .. want, what)
    else
      lu.assertFalse(ok, what .. ": string.format refuses it (" .. tostring(want) .. ")")
      h.assert_bytes(b:tostring(), prefix, what .. " failed and changed the buffer")
      local arg = tostring(want):match("bad argument #(%d+)")
      if arg then
        -- method call: fmt is #1, as in string.format, and so is every value
        lu.assertStrContains(tostring(err), string.format("bad argument #%s to 'putf' (", arg), false)
        lu.assertStrContains(tostring(err), "records_spec.lua:")
      end
    end
  end
end

function TestRecords.test_putf_of_buffers()
  local samples = { "", "abc", ("long"):rep(100), "a\0b", ("\0"):rep(3), h.pattern(300, 4) }
  for _, s in ipairs(samples) do
    for _, fmt in ipairs { "%s", "[%s]", "%s%s", "%5s|", "%-4s|", "%.2s|" } do
      local v = avxbuf.from(s)
      local b = avxbuf.from("<")
      local ok_ref, want
      if FORMAT_TAKES_BUFFERS then
        ok_ref, want = pcall(string.format, fmt, v, v)
      elseif not s:find("\0", 1, true) and (fmt == "%s" or fmt == "[%s]" or fmt == "%s%s") then
        ok_ref, want = pcall(string.format, fmt, s, s)   -- the fast path's documented result
      end
      if ok_ref ~= nil then
        local ok, err = pcall(b.putf, b, fmt, v, v)
        local what = string.format("putf(%q) of a %d-byte buffer", fmt, #s)
        if ok_ref then
          lu.assertTrue(ok, what .. ": " .. tostring(err))
          h.assert_bytes(b:tostring(), "<" .. want, what)
        else
          lu.assertFalse(ok, what)
          h.assert_bytes(b:tostring(), "<", what)
        end
        h.assert_bytes(v:tostring(), s, "the argument buffer")
      end
    end
  end
  -- the buffer itself: its bytes before the call, twice (it grows in between)
  for _, s in ipairs { "xy", ("0123456789"):rep(100), "a\0b" } do
    local b = avxbuf.from(s)
    if FORMAT_TAKES_BUFFERS or not s:find("\0", 1, true) then
      b:putf("%s-%s", b, b)
      h.assert_bytes(b:tostring(), s .. string.format("%s-%s", s, s), "putf of the buffer into itself")
    end
  end
end

function TestRecords.test_putf_checks_the_format_argument()
  local b = avxbuf.from("keep")
  for _, bad in ipairs { 5, true, {}, avxbuf.from("%d") } do
    local ok, err = pcall(function() b:putf(bad, 1) end)
    lu.assertFalse(ok, tostring(bad))
    lu.assertStrContains(tostring(err), "bad argument #1 to 'putf' (string expected, got ")
    -- a real buffer is named as one, not as a forgery of one
    lu.assertNil(tostring(err):find("with the buffer metatable", 1, true), err)
    lu.assertEquals(b:tostring(), "keep")
  end
  local ok, err = pcall(function() b:putf() end)
  lu.assertFalse(ok)
  lu.assertStrContains(tostring(err), "bad argument #1 to 'putf'")
end

-- A fraction given to an integer conversion is refused on every Lua, as
-- 5.3's and 5.4's string.format refuse it (5.1's, 5.2's and LuaJIT's
-- truncate it); the number named is that argument's, the buffer unchanged.
function TestRecords.test_putf_refuses_fractions_on_every_lua()
  local b = avxbuf.from("keep")
  local cases = { P("%d", 1.5), P("%i", -0.5), P("%x", 2.5), P("%X", 1e-3), P("%o", 7.25), P("%c", 65.5),
                  P("%5d|", 1.5), P("%-3i", 0.5), P("%d", "1.5"), P("%d", 0 / 0), P("%d", math.huge),
                  P("%d", 2 ^ 63), P("%s %d", "a", 1.5), P("%d %x", 1, 2.5), P("%%%d", 1.5) }
  for _, c in ipairs(cases) do
    local what = string.format("putf(%q, %s)", c[1], tostring(c[c.n]))
    local ok, err = pcall(function() return (b:putf(unpack_(c, 1, c.n))) end)
    lu.assertFalse(ok, what)
    lu.assertStrContains(tostring(err), string.format("bad argument #%d to 'putf' (", c.n), false, what)
    -- 5.2's own string.format refuses NaN, inf and 2^63 first, in its words
    if not (_VERSION == "Lua 5.2" and tostring(err):find("(not a number in proper range)", 1, true)) then
      lu.assertStrContains(tostring(err), "(number has no integer representation)", false, what)
    end
    lu.assertEquals(b:tostring(), "keep", what)
    if math.type then   -- 5.3 and 5.4: their own string.format says the same
      lu.assertStrContains(select(2, pcall(string.format, unpack_(c, 1, c.n))),
                           string.format("bad argument #%d to ", c.n), false, what)
    end
  end
  -- integer values in any form stay accepted
  h.assert_bytes(b:putf("%d|%x|%c|%d", 3.0, 2 ^ 52, 65.0, "12"):tostring(), "keep3|10000000000000|A|12", "integers")
end

-- A format string.format refuses names putf and the format argument
-- (string.format's words without "to 'format'").
function TestRecords.test_putf_names_itself_for_a_bad_format()
  local b = avxbuf.from("keep")
  for _, fmt in ipairs { "%z", "%5", "%y %d", "%10.123d", "abc%", "%#-+ 0#d" } do
    local ok_ref, want = pcall(string.format, fmt, 1, 1)
    local ok, err = pcall(function() return (b:putf(fmt, 1, 1)) end)
    lu.assertEquals(ok, ok_ref, fmt)
    if not ok then
      lu.assertStrContains(tostring(err), "records_spec.lua:", false, fmt)
      -- (5.2 quotes the format's end as '%\0': an error message ends at its first zero byte)
      local reason = want:gsub(" to 'format'$", ""):gsub("%z.*$", "")
      lu.assertStrContains(tostring(err), "bad argument #1 to 'putf' (" .. reason .. ")", false, fmt)
      lu.assertNil(tostring(err):find("to 'format'", 1, true), err)
    end
    lu.assertEquals(b:tostring(), ok and "keep" .. want or "keep", fmt)
    b = avxbuf.from("keep")
  end
end

-- ---- reserve, capacity, reset ----------------------------------------------------

function TestRecords.test_reserve_capacity_reset()
  for _, start in ipairs { "", "abc", h.pattern(1000, 2) } do
    local b = avxbuf.from(start)
    lu.assertTrue(b:capacity() >= #b)
    for _, n in ipairs { 0, 1, 63, 64, 65, 1000, TORTURE and 1500 or 70000 } do
      lu.assertIs(b:reserve(n), b)
      lu.assertEquals(#b, #start, "reserve keeps the length")
      h.assert_bytes(b:tostring(), start, "reserve keeps the bytes")
      lu.assertTrue(b:capacity() >= #start + n, string.format("reserve(%d) of %d bytes: %d", n, #start, b:capacity()))
    end
    -- puts within the capacity allocate nothing
    local cap, at = b:capacity(), h.address(b)
    local want = { start }
    local room = cap - #start
    local piece = h.pattern(100, 5)
    while room >= #piece do
      b:put(piece)
      want[#want + 1] = piece
      room = room - #piece
      lu.assertEquals(b:capacity(), cap, "a put that fits changes the capacity")
      lu.assertEquals(h.address(b), at, "a put that fits moves the data")
    end
    b:put(("r"):rep(room))
    want[#want + 1] = ("r"):rep(room)
    lu.assertEquals(#b, cap)
    lu.assertEquals(b:capacity(), cap)
    h.assert_bytes(b:tostring(), table.concat(want), "filled to the capacity")
    b:put("!")
    lu.assertTrue(b:capacity() > cap, "past it, the capacity grows")
    h.assert_bytes(b:tostring(), table.concat(want) .. "!", "after growth")
    -- reserve(0) and a reserve that fits change nothing
    cap = b:capacity()
    b:reserve(0)
    b:reserve(cap - #b)
    lu.assertEquals(b:capacity(), cap)
    -- reset: empty, the capacity kept; puts up to it allocate nothing
    lu.assertIs(b:reset(), b)
    lu.assertEquals(#b, 0)
    lu.assertEquals(b:tostring(), "")
    lu.assertEquals(b:capacity(), cap)
    at = h.address(b)
    local refill = h.long_pattern(cap, 8):gsub(".", function(x) if x == "\0" then return "z" end end)
    b:put(refill:sub(1, 7), refill:sub(8, cap - 1))
    b:putf("%s", refill:sub(cap))
    lu.assertEquals(b:capacity(), cap)
    lu.assertEquals(h.address(b), at)
    h.assert_bytes(b:tostring(), refill, "refilled after reset")
    -- what reset dropped does not come back: resize zeroes
    b:reset()
    b:resize(100)
    h.assert_bytes(b:tostring(), ("\0"):rep(100), "resize after reset")
    lu.assertEquals(b:capacity(), cap)
    -- resize(0) keeps the capacity; free gives it back
    b:resize(0)
    lu.assertEquals(b:capacity(), cap)
    b:free()
    lu.assertEquals(b:capacity(), 0)
    lu.assertEquals(#b, 0)
    b:put("again")
    lu.assertTrue(b:capacity() >= 5)
    lu.assertEquals(b:tostring(), "again")
  end
end

function TestRecords.test_reserve_then_pack_putf_and_numbers_stay_in_place()
  local b = avxbuf.new()
  b:reserve(4096)
  local cap, at = b:capacity(), h.address(b)
  local want = {}
  for i = 1, 100 do
    b:pack("<i4", i)
    b:put(i)
    b:putf("%d,", i)
    want[#want + 1] = string.char(i, 0, 0, 0) .. tostring(i) .. i .. ","
  end
  lu.assertEquals(b:capacity(), cap)
  lu.assertEquals(h.address(b), at)
  h.assert_bytes(b:tostring(), table.concat(want), "records in the reserved room")
end

function TestRecords.test_reserve_refuses_and_changes_nothing()
  local b = avxbuf.from("keep")
  local cap = b:capacity()
  for _, bad in ipairs { -1, 1.5, "x", true, h.MININT, h.MAXINT, 2 ^ 62 } do
    local ok, err = pcall(function() b:reserve(bad) end)
    lu.assertFalse(ok, tostring(bad))
    lu.assertStrContains(tostring(err), "bad argument #1 to 'reserve'")
    lu.assertEquals(b:tostring(), "keep")
    lu.assertEquals(b:capacity(), cap)
  end
end

-- ---- read at an index --------------------------------------------------------------

-- buf:read(f, n, i) against a model: the file's next min(n, rest) bytes
-- (file:read of the same file tells which) replace the buffer's from i on.
local function check_read(b, s, data, pos, n, i, what)
  local f = io.tmpfile()
  f:write(data)
  f:seek("set", pos)
  local got = b:read(f, n, i)
  local expected_bytes = data:sub(pos + 1, n and pos + n or #data)
  lu.assertEquals(got, #expected_bytes, what .. ": bytes read")
  lu.assertEquals(f:seek("cur"), pos + got, what .. ": file position")
  f:close()
  local at = i or #s + 1
  local model = s:sub(1, at - 1) .. expected_bytes .. s:sub(at + #expected_bytes)
  lu.assertEquals(#b, #model, what)
  h.assert_bytes(b:tostring(), model, what)
  return model
end

function TestRecords.test_read_at_an_index()
  local s, data = h.pattern(100, 2), h.pattern(300, 3)
  local function case(n, i, pos, what, file)
    check_read(avxbuf.from(s), s, file or data, pos or 0, n, i, what)
  end
  case(nil, 1, 0, "whole file over the whole buffer")
  case(10, 1, 0, "10 bytes at 1: overwrite")
  case(nil, 101, 0, "at #buf + 1: append")
  case(nil, nil, 0, "no index: append")
  case(20, 50, 0, "20 bytes in the middle")
  case(nil, 50, 0, "fewer bytes than the rest of the buffer", "12345")
  case(nil, 50, 0, "an empty file", "")
  case(0, 1, 0, "n = 0")
  case(0, 101, 0, "n = 0 at #buf + 1")
  case(nil, 30, 300, "at end of file")
  case(5, 98, 0, "over the end")
  case(nil, 95, 280, "the file's last 20 bytes, over the end")
  case(1000, 1, 0, "n beyond the file")
  -- an empty buffer, a reset buffer whose capacity holds old bytes
  check_read(avxbuf.new(), "", data, 0, nil, 1, "into an empty buffer")
  local b = avxbuf.from(h.pattern(5000, 9))
  b:reset()
  check_read(b, "", data, 0, 17, 1, "into a reset buffer")
end

-- Random cases, with reads larger than a chunk (64 KiB) and overlapping the
-- room past the length, under every kernel (the move to i is a copy).
function TestRecords.test_read_at_an_index_random()
  local r = rng(99)
  local big = h.long_pattern(300000, 6)
  local configs = h.kernel_configs()
  for round = 1, LIGHT and 40 or 160 do
    local cfg = configs[1 + round % #configs]
    h.use(cfg.knobs)
    local len = ({ 0, 1, 63, 64, 100, 4096, 70000, 150000 })[1 + r(8)]
    local flen = ({ 0, 1, 10, 100, 65536, 65537, 200000 })[1 + r(7)]
    local s = h.long_pattern(len, round)
    local data = big:sub(1 + r(100), flen + r(100))
    local pos = r(#data + 2)
    if pos > #data then pos = #data end
    local i = r(4) == 0 and nil or 1 + r(len + 1)
    local n = r(3) == 0 and nil or r(flen + 10)
    local b = avxbuf.from(s)
    if r(2) == 0 then b:reserve(r(100000)) end
    check_read(b, s, data, pos, n, i, string.format("%s: round %d: %d-byte buffer, %d-byte file from %d, n %s, i %s",
                                                    cfg.name, round, len, #data, pos, tostring(n), tostring(i)))
  end
  avxbuf.reset()
end

function TestRecords.test_read_failure_changes_nothing()
  local path = os.tmpname()
  local w = assert(io.open(path, "w"))
  for _, i in ipairs { false, 1, 3, 5 } do
    local b = avxbuf.from("keep")
    local count, msg, code
    if i then count, msg, code = b:read(w, 10, i) else count, msg, code = b:read(w) end
    lu.assertNil(count)
    lu.assertEquals(type(msg), "string")
    lu.assertEquals(type(code), "number")
    lu.assertEquals(#b, 4)
    lu.assertEquals(b:tostring(), "keep")
  end
  w:close()
  os.remove(path)
  local dir = io.open("/", "r")   -- (Linux opens a directory; reading it fails)
  if dir then
    local b = avxbuf.from("keep")
    local count, msg, code = b:read(dir, 10, 2)
    dir:close()
    lu.assertNil(count)
    lu.assertEquals(type(msg), "string")
    lu.assertEquals(type(code), "number")
    lu.assertEquals(b:tostring(), "keep")
  end
  -- bad indices are argument errors, before anything is read
  local f = io.tmpfile()
  f:write("data")
  f:seek("set")
  local b = avxbuf.from("keep")
  for _, i in ipairs { 0, -1, 6, 1.5, "x", true } do
    local ok, err = pcall(function() return (b:read(f, 2, i)) end)
    lu.assertFalse(ok, tostring(i))
    lu.assertStrContains(tostring(err), "bad argument #3 to 'read'")
    lu.assertEquals(b:tostring(), "keep")
    lu.assertEquals(f:seek("cur"), 0, "nothing read")
  end
  f:close()
end
