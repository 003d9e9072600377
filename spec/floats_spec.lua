-- buf:unpack of f, d and n over every class of bits: signs, zeros,
-- subnormals, normals, infinities and NaNs with every pattern of their
-- high payload bits (where LuaJIT keeps its object tags), and random bytes.
-- Each value must be a number, a NaN exactly where the bits are one, and
-- otherwise the value a decoding in plain Lua arithmetic gives. On LuaJIT
-- the FFI path (compiled and interpreted) must give the C path's bits; on
-- 5.3+ avxbuf's bits are string.unpack's.
local lu = require "luaunit"
local h = require "helpers"
local avxbuf = h.avxbuf
local jit = rawget(_G, "jit")

-- The words of the cases, as 32-bit unsigned numbers: { hi } for a float,
-- { hi, lo } for a double. exp_bits and frac_bits describe the hi word.
local function word_cases(exp_bits, frac_bits, with_lo)
  local exp_max = 2 ^ exp_bits - 1
  local top = 2 ^ (frac_bits - 5)   -- the high five bits of the fraction: LuaJIT's tags
  local lows = { 0, 1, top / 2 - 1, top - 1 }
  local los = with_lo and { 0, 1, 4294967295 } or { false }
  local t = {}
  local function add(sign, exp, frac)
    local hi = sign * 2 ^ 31 + exp * 2 ^ frac_bits + frac
    for _, lo in ipairs(los) do t[#t + 1] = { hi, lo or nil } end
  end
  for sign = 0, 1 do
    for _, exp in ipairs { 0, 1, 2 ^ (exp_bits - 1) - 1, exp_max - 1, exp_max } do
      for p = 0, 31 do
        for _, low in ipairs(lows) do add(sign, exp, p * top + low) end
      end
    end
  end
  local bytes = h.pattern(4 * (with_lo and 2 or 1) * (h.LIGHT and 200 or 2000), 34)
  local function word(k) local a, b, c, d = bytes:byte(k, k + 3); return ((d * 256 + c) * 256 + b) * 256 + a end
  for k = 1, #bytes, with_lo and 8 or 4 do t[#t + 1] = { word(k), with_lo and word(k + 4) or nil } end
  return t
end
local FLOAT_CASES = word_cases(8, 23, false)
local DOUBLE_CASES = word_cases(11, 20, true)

local function le32(w)
  return string.char(w % 256, math.floor(w / 256) % 256, math.floor(w / 65536) % 256, math.floor(w / 16777216))
end
-- The case's bytes, little-endian (the double's low word first).
local function le_bytes(c) return c[2] and le32(c[2]) .. le32(c[1]) or le32(c[1]) end

-- The value of the bits by arithmetic, or "nan".
local function decode(c)
  local hi, lo = c[1], c[2]
  local frac_bits, exp_bits = lo and 20 or 23, lo and 11 or 8
  local sign = hi >= 2 ^ 31 and -1 or 1
  local rest = hi % 2 ^ 31
  local exp = math.floor(rest / 2 ^ frac_bits)
  local frac = rest % 2 ^ frac_bits
  local mant_bits = frac_bits
  if lo then frac, mant_bits = frac * 2 ^ 32 + lo, 52 end
  local bias = 2 ^ (exp_bits - 1) - 1
  if exp == 2 ^ exp_bits - 1 then return frac == 0 and sign * math.huge or "nan" end
  if exp == 0 then return sign * frac * 2 ^ (1 - bias - mant_bits) end
  return sign * (2 ^ mant_bits + frac) * 2 ^ (exp - bias - mant_bits)
end

local function check_value(v, want, what)
  lu.assertEquals(type(v), "number", what)
  if want == "nan" then
    lu.assertTrue(v ~= v, what .. ": a NaN")
  else
    lu.assertEquals(v, want, what)
    if want == 0 then lu.assertEquals(1 / v, 1 / want, what .. ": the sign of zero") end
  end
end

-- The formats a case is read with: alone, after a byte and between fields
-- (at an offset within one checked run of fields), and in the other byte
-- order; the value is the last but one result (the next index is last).
local function formats(size)
  local f = size == 4 and { "f" } or { "d", "n" }
  local t = {}
  for _, x in ipairs(f) do
    t[#t + 1] = { fmt = "<" .. x, bytes = function(b) return b end, at = 1 }
    t[#t + 1] = { fmt = "=" .. x, bytes = function(b) return b end, at = 1, native = true }
    t[#t + 1] = { fmt = "<B" .. x .. "B", bytes = function(b) return "\7" .. b .. "\9" end, at = 2 }
    t[#t + 1] = { fmt = ">" .. x, bytes = function(b) return b:reverse() end, at = 1 }
  end
  return t
end
-- (5.1 and 5.2 have no way to ask; the suite runs them on little-endian machines.)
local NATIVE_LE = jit and require("ffi").abi("le") or not string.pack or string.pack("=I2", 1) == "\1\0"

local function read(buf, fmt, index, at)
  local r = { buf:unpack(index, fmt) }
  return r[at], r[#r]
end

-- Every case, with every format, read from a buffer by index 1 (the FFI
-- path on LuaJIT) and by a negative index (always the C path).
local function each_read(cases, size, visit)
  for _, form in ipairs(formats(size)) do
    if not form.native or NATIVE_LE then
      for _, c in ipairs(cases) do
        local bytes = form.bytes(le_bytes(c))
        local buf = avxbuf.from(bytes)
        local v, nxt = read(buf, form.fmt, 1, form.at)
        local cv, cnxt = read(buf, form.fmt, -#bytes, form.at)
        local what = string.format("unpack %q of %08x%s", form.fmt, c[1], c[2] and string.format(" %08x", c[2]) or "")
        lu.assertEquals(nxt, #bytes + 1, what .. ": next index")
        lu.assertEquals(cnxt, #bytes + 1, what .. ": next index from a negative one")
        visit(c, v, cv, form, bytes, what)
      end
    end
  end
end

-- The bits of a number as this Lua holds it (nil where it cannot tell).
local bits_of
if jit then
  local ffi = require "ffi"
  local d = ffi.new("double[1]")
  local w = ffi.cast("uint32_t *", d)
  bits_of = function(v) d[0] = v; return string.format("%08x%08x", w[1], w[0]) end
elseif string.pack then
  local function hex(ch) return string.format("%02x", ch:byte()) end
  bits_of = function(v) return (string.pack(">d", v):gsub(".", hex)) end
end

local function check_all(cases, size)
  each_read(cases, size, function(c, v, cv, form, bytes, what)
    local want = decode(c)
    check_value(v, want, what)
    check_value(cv, want, what .. " (negative index)")
    if bits_of then lu.assertEquals(bits_of(v), bits_of(cv), what .. ": the bits of both paths") end
    if string.unpack then
      local s = select(form.at, string.unpack(form.fmt, bytes))
      lu.assertEquals(bits_of(v), bits_of(s), what .. ": the bits string.unpack gives")
    end
  end)
end

TestFloats = {}

function TestFloats.test_unpack_f_gives_every_float_as_a_number()
  check_all(FLOAT_CASES, 4)
end

function TestFloats.test_unpack_d_and_n_give_every_double_as_a_number()
  check_all(DOUBLE_CASES, 8)
end

-- LuaJIT: the same with the JIT off, so the FFI path's code runs in the
-- interpreter too (above, the loops are hot enough to be compiled).
function TestFloats.test_unpack_interpreted_gives_every_float_as_a_number()
  if not jit then lu.skip("LuaJIT only (this is " .. _VERSION .. ")") end
  jit.off()
  local ok, err = pcall(function()
    check_all(FLOAT_CASES, 4)
    check_all(DOUBLE_CASES, 8)
  end)
  jit.on()
  if not ok then error(err, 0) end
end
