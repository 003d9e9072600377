-- The one seeded generator of spec/ and bench/: the same sequence from a
-- seed on every Lua version (the suite runs on 5.1-5.4 and LuaJIT, and
-- some cases are rebuilt in a lua5.4 child), because every product stays
-- below 2^53 and so is exact in doubles as in 5.4's integers.
-- Plain Lua 5.1 syntax.
local M = {}

-- A generator: r(n) is an integer in [0, n), from the state's high bits
-- (an LCG's low bits have short periods). The multiplier is 69069
-- (Marsaglia's), with increment 1: a full period of 2^32.
function M.new(seed)
  local x = seed % 4294967296
  return function(n)
    x = (x * 69069 + 1) % 4294967296
    return math.floor(x / 4294967296 * n)
  end
end

-- n bytes from r, as a string (no_zero: 1..255 only).
function M.bytes(r, n, no_zero)
  local t = {}
  for i = 1, n do t[i] = string.char(no_zero and 1 + r(255) or r(256)) end
  return table.concat(t)
end

return M
