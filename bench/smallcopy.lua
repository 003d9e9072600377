-- LuaJIT: small copies through the FFI path's entries, 1..64 bytes, with
-- each build's module loaded into one process (issue 45; bench/smallcopy.c
-- times the same entry shape from C).
--   luajit bench/smallcopy.lua [--sizes LO:HI] [--rounds R] [--n N] [--layouts K] [--reads|--fills]
--   AVXBUF_BUILDS=dirA,dirB,...  (default build/luajit) loads avxbuf.so from
--   each dir into this one process, so that builds are timed interleaved,
--   round by round, under the same load: on a VM whose other vCPU is busy,
--   the same loop's time moved by up to 2x from one run to the next, more
--   than the builds differ.
-- Rows for each build (each loop compiled from its own source text with the
-- size a literal, as bench/ffi.lua's):
--   str     d:copy(1, str): a Lua string of n bytes (copy_from_string)
--   buf     d:copy(1, s, 1, n): from another buffer (copy_from_buffer)
--   rd      d:copy(1, str) then x = d:tostring(1, n): the bytes just
--           written read back (tostring stages them with memcpy and LuaJIT
--           makes, or finds, the string), as a program that builds a
--           record and then takes it does
-- and last LuaJIT's own: ffi.copy(cd, cs, n).
-- --reads: b:tostring(i, i + n - 1) with i moving over 4000 offsets
-- ("moving") and b:tostring(1, n) ("fixed"), then string.sub's moving row.
-- --fills: d:fill(7, 1, n), d:zero(1, n) and d:fill(7, 1, n) then
-- x = d:tostring(1, n) ("frd"), then ffi.fill(cd, n, 7).
-- --layouts K makes K sets of buffers (and traces) per size, so that no one
-- placement of data and code decides. ns per operation: the median over
-- rounds and layouts, each the best of 2; then, for each build after the
-- first, the median of its paired differences from the first build's rows
-- (round by round: a drift in the machine's load moves both alike).
-- luacheck: std luajit, globals x
package.path = "lua/?.lua;lua/?/init.lua;bench/lib/?.lua;" .. package.path
local ffi = require "ffi"
local harness = require "harness"
assert(jit, "run this with luajit")

local lo, hi, ROUNDS, N, LAYOUTS, READS, FILLS = 1, 64, 5, 1000000, 1, false, false
for i = 1, #arg do
  if arg[i] == "--sizes" then lo, hi = arg[i + 1]:match("(%d+):(%d+)"); lo, hi = tonumber(lo), tonumber(hi)
  elseif arg[i] == "--rounds" then ROUNDS = tonumber(arg[i + 1])
  elseif arg[i] == "--n" then N = tonumber(arg[i + 1])
  elseif arg[i] == "--layouts" then LAYOUTS = tonumber(arg[i + 1])
  elseif arg[i] == "--reads" then READS = true
  elseif arg[i] == "--fills" then FILLS = true end
end

-- Each build's module, loaded apart: its own anchor, metatables and FFI
-- path (the registry's names are cleared before the next load).
local builds, mods = {}, {}
for dir in (os.getenv("AVXBUF_BUILDS") or os.getenv("AVXBUF_BUILD") or "build/luajit"):gmatch("[^,]+") do
  local reg = debug.getregistry()
  for _, k in ipairs { "avxbuf.api", "avxbuf.module", "avxbuf.buffer" } do reg[k] = nil end
  for k in pairs(package.loaded) do if k:match("^avxbuf") then package.loaded[k] = nil end end
  local m = assert(package.loadlib(dir .. "/avxbuf.so", "luaopen_avxbuf"))()
  assert(m.ffi, dir .. ": avxbuf's FFI path is not active")
  builds[#builds + 1], mods[#mods + 1] = dir, m
end

-- The rows of one build: name, source of the loop's body (%d: n), env.
local ROWS = FILLS and {
  { "fill", "d:fill(7, 1, %d)", function(m) return { d = m.new(64) } end },
  { "zero", "d:zero(1, %d)", function(m) return { d = m.new(64) } end },
  { "frd", "d:fill(7, 1, %d); x = d:tostring(1, %d)", function(m) return { d = m.new(64) } end },
} or READS and {
  { "moving", "local i = _ %% 4000 + 1; x = b:tostring(i, i + %d - 1)", function(m) return { b = m.new(4160, 7) } end },
  { "fixed", "x = b:tostring(1, %d)", function(m) return { b = m.new(4160, 7) } end },
} or {
  { "str", "d:copy(1, str)", function(m, n) return { d = m.new(64), str = ("x"):rep(n) } end },
  { "buf", "d:copy(1, s, 1, %d)", function(m) return { d = m.new(64), s = m.new(64, 1) } end },
  { "rd", "d:copy(1, str); x = d:tostring(1, %d)", function(m, n) return { d = m.new(64), str = ("x"):rep(n) } end },
}
local OWN = FILLS
  and { "ffi.fill", "ffill(cd, %d, 7)", function() return { cd = ffi.new("uint8_t[?]", 64), ffill = ffi.fill } end }
  or READS
  and { "string.sub", "local i = _ %% 4000 + 1; x = str:sub(i, i + %d - 1)",
        function() return { str = ("\7"):rep(4160) } end }
  or { "ffi.copy", "fcopy(cd, cs, %d)",
       function() return { cd = ffi.new("uint8_t[?]", 64), cs = ffi.new("uint8_t[?]", 64, 1), fcopy = ffi.copy } end }

x = nil   -- the reads' sink: a global, as in the loops issue 45 timed
local function loop(body, env)
  local names, values = {}, {}
  for k, v in pairs(env) do names[#names + 1] = k; values[#values + 1] = v end
  local list = table.concat(names, ", ")
  local src = string.format("local %s = ...\nreturn function() local %s = %s for _ = 1, %d do %s end end",
                            list, list, list, N, body)
  return assert(load(src))(unpack(values))
end

print(string.format("# %s; ns per operation, median of %d rounds x %d layouts of the best of 2 loops of %d",
                    jit.version, ROUNDS, LAYOUTS, N))
for i, b in ipairs(builds) do print(string.format("# build %d: %s", i, b)) end
local head = { "n" }
for i = 1, #builds do for _, r in ipairs(ROWS) do head[#head + 1] = r[1] .. i end end
head[#head + 1] = OWN[1]
for i = 2, #builds do for _, r in ipairs(ROWS) do head[#head + 1] = r[1] .. i .. "-" .. r[1] .. "1" end end
print(table.concat(head, "\t"))
for n = lo, hi do
  -- Fresh traces for each size: hundreds of loops' traces fill LuaJIT's
  -- trace and machine-code limits, and a loop then ran interpreted.
  jit.flush()
  local samples, keep = {}, {}
  for _ = 1, LAYOUTS do
    local cases = {}
    for _, m in ipairs(mods) do
      for _, r in ipairs(ROWS) do
        local env = r[3](m, n)
        cases[#cases + 1] = loop(r[2]:format(n, n), env)
        keep[#keep + 1] = env
      end
    end
    local env = OWN[3]()
    cases[#cases + 1] = loop(OWN[2]:format(n), env)
    keep[#keep + 1] = env
    for _ = 1, ROUNDS do
      for i, c in ipairs(cases) do
        samples[i] = samples[i] or {}
        samples[i][#samples[i] + 1] = harness.best_of(c, N, 2)
      end
    end
  end
  assert(#keep > 0)   -- the loops' buffers, kept alive until they have been timed
  local row = { tostring(n) }
  for i = 1, #samples do row[#row + 1] = string.format("%.2f", harness.median(samples[i])) end
  for i = #ROWS + 1, #ROWS * #builds do
    local d, base = {}, samples[(i - 1) % #ROWS + 1]
    for k = 1, #samples[i] do d[k] = samples[i][k] - base[k] end
    row[#row + 1] = string.format("%+.2f", harness.median(d))
  end
  print(table.concat(row, "\t"))
end
