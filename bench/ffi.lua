-- LuaJIT: the cost of a small copy through avxbuf's FFI path against ffi.copy,
-- in the same run. luajit bench/ffi.lua   (after `make LUA=luajit`)
package.path = "lua/?.lua;lua/?/init.lua;bench/lib/?.lua;" .. package.path
package.cpath = "build/luajit/?.so;" .. package.cpath
local ffi = require "ffi"
local avxbuf = require "avxbuf"
local bench = require "harness"
assert(jit, "run this with luajit")
assert(avxbuf.ffi, "avxbuf's FFI path is not active")

local N = 20000000
local function best(loop) return bench.best_of(loop, N, 5) end

print(string.format("# %s, %s; ns per call, best of 5 loops of %d", jit.version, avxbuf.cpu().reason, N))
for _, n in ipairs { 16, 64, 256, 4096 } do
  local d, s = avxbuf.new(n), avxbuf.new(n, 1)
  local cd, cs = ffi.new("uint8_t[?]", n), ffi.new("uint8_t[?]", n, 1)
  local copy, fcopy = avxbuf.copy, ffi.copy
  local t_ffi = best(function() for _ = 1, N do fcopy(cd, cs, n) end end)
  local t_fn = best(function() for _ = 1, N do copy(d, 1, s, 1, n) end end)
  local t_m = best(function() for _ = 1, N do d:copy(1, s, 1, n) end end)
  print(string.format("%5d B: ffi.copy %6.2f   avxbuf.copy %6.2f (%.2fx)   buf:copy %6.2f (%.2fx)",
                      n, t_ffi, t_fn, t_fn / t_ffi, t_m, t_m / t_ffi))
end
