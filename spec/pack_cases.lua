-- Random string.pack formats with values that fit them, deterministic from
-- a seed, for spec/pack_spec.lua: the same cases on every Lua version, and
-- in a lua5.4 child where this Lua has no string.pack to be the oracle.
-- Plain Lua 5.1 syntax.
local M = {}

-- The suite's one seeded generator (bench/lib/rng.lua).
local seeded = require "rng"
local rng, bytes = seeded.new, seeded.bytes

-- An integer that fits `size` bytes (signed or not), within +-2^53 so that
-- every Lua version holds it exactly; `small` bounds the typical magnitude.
local function int_for(r, size, signed, small)
  local bits = math.min(size * 8, 53)
  local mag = r(4) == 0 and (2 ^ (bits - (signed and 1 or 0)) - 1) or r(1 + math.min(small, 2 ^ bits - 1))
  if bits < 53 and r(8) == 0 then mag = 2 ^ (bits - (signed and 1 or 0)) - 1 end
  if signed and r(2) == 0 then return -mag - (r(6) == 0 and mag < 2 ^ (bits - 1) - 1 and 1 or 0) end
  return mag
end

-- An integer option: opt (with a size for some "i" and "I"), its size in
-- bytes, and whether it is signed.
function M.int_option(r)
  local opt = ({ "b", "B", "h", "H", "l", "L", "j", "J", "T", "i", "I" })[1 + r(11)]
  local size = ({ b = 1, B = 1, h = 2, H = 2, l = 8, L = 8, j = 8, J = 8, T = 8, i = 4, I = 4 })[opt]
  if (opt == "i" or opt == "I") and r(2) == 0 then
    size = 1 + r(16)
    opt = opt .. size
  end
  return opt, size, opt:match("^[bhlji]") ~= nil
end

-- The mix of a random format: how many options at most, and the choices of
-- each kind. pack_spec's cases use M.SHAPE; records_spec passes its own.
M.SHAPE = {
  most = 7, aligns = { "", "1", "2", "4", "8", "16" }, small_int = 2 ^ 20,
  floats = { 0, 1, -1, 0.5, -2.25, 1e10, 3.14159, 2 ^ -20, 65504, 1 / 3 },
  s_sizes = { "", "", "", "1", "2", "3", "4", "5", "6", "7", "8" }, s_len = 40, s1_len = 200,
  z_len = 30, c_most = 20, x_align = "",
}

-- Random options and values that fit them, appended to parts and values.
function M.options(r, shape, parts, values)
  for _ = 1, 1 + r(shape.most) do
    local pick = r(20)
    if pick == 0 then
      parts[#parts + 1] = ({ "<", ">", "=", " " })[1 + r(4)]
    elseif pick == 1 then
      parts[#parts + 1] = "!" .. shape.aligns[1 + r(#shape.aligns)]
    elseif pick <= 6 then
      local opt, size, signed = M.int_option(r)
      parts[#parts + 1] = opt
      values[#values + 1] = int_for(r, size, signed, shape.small_int)
    elseif pick <= 8 then
      parts[#parts + 1] = ({ "f", "d", "n" })[1 + r(3)]
      values[#values + 1] = shape.floats[1 + r(#shape.floats)]
    elseif pick <= 10 then
      local n = shape.s_sizes[1 + r(#shape.s_sizes)]
      parts[#parts + 1] = "s" .. n
      values[#values + 1] = bytes(r, r(n == "1" and shape.s1_len or shape.s_len))
    elseif pick == 11 then
      parts[#parts + 1] = "z"
      values[#values + 1] = bytes(r, r(shape.z_len), true)
    elseif pick == 12 then
      local n = r(shape.c_most)
      parts[#parts + 1] = "c" .. n
      values[#values + 1] = bytes(r, r(n + 1))
    elseif pick == 13 then
      parts[#parts + 1] = "x"
    elseif pick == 14 then
      parts[#parts + 1] = shape.x_align .. "X" .. ({ "i2", "i4", "i8", "d", "h", "j" })[1 + r(6)]
    else
      parts[#parts + 1] = "B"
      values[#values + 1] = r(256)
    end
  end
  return parts, values
end

-- {fmt = ..., values = {...}} for case number k.
function M.case(k)
  local r = rng(k * 7919 + 17)
  local parts, values = M.options(r, M.SHAPE, {}, {})
  return { fmt = table.concat(parts), values = values, index = 1 + r(12) }
end

-- A printable form of unpacked values, the same on every Lua version.
function M.serialise(...)
  local out = {}
  for i = 1, select("#", ...) do
    local v = select(i, ...)
    if type(v) == "string" then
      out[i] = "s:" .. v:gsub(".", function(c) return string.format("%02x", c:byte()) end)
    elseif v == math.floor(v) and math.abs(v) < 2 ^ 53 then
      out[i] = string.format("i:%.0f", v)
    else
      out[i] = string.format("f:%.17g", v)
    end
  end
  return table.concat(out, ",")
end

function M.hex(s)
  return (s:gsub(".", function(c) return string.format("%02x", c:byte()) end))
end

return M
