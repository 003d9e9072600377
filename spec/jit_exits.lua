-- Run by spec/gc_spec.lua on LuaJIT (its own process: a crash is a
-- status): random operations on a few buffers, each a few times in a row
-- so that traces form and exit, while finalizers keep re-arming to free,
-- shrink, grow or replace a buffer. The collector keeps its default pace,
-- so a cycle stays in its finalize phase across steps: finalizers wait
-- while a trace runs and run at its next exit (lj_trace_exit), at
-- whatever guard that is. After each operation every buffer agrees with
-- itself (length, contents, a copy of it). Prints one line per seed, then
-- "seeds N failures N".
--   LUA_PATH="spec/?.lua;bench/lib/?.lua;;" luajit spec/jit_exits.lua FIRST_SEED SEEDS ROUNDS
local avxbuf = require "avxbuf"
local rng = require "rng"
local pattern = require("helpers").pattern
local first, seeds, rounds = tonumber(arg[1]) or 1, tonumber(arg[2]) or 1, tonumber(arg[3]) or 20000
jit.opt.start("hotloop=2", "hotexit=2")   -- many traces, many exits

local total_failures = 0
for seed = first, first + seeds - 1 do
  local rand, frand = rng.new(seed), rng.new(seed + 1000)
  local pool = {}
  for i = 1, 4 do pool[i] = avxbuf.from(pattern(100 * i, i)) end
  local acting, stop, mutations = false, false, 0
  local function mutate()
    local b = pool[frand(#pool) + 1]
    local k = frand(4)
    if k == 0 then b:free()
    elseif k == 1 then b:resize(frand(200))
    elseif k == 2 then b:put(pattern(frand(3000), 2))
    else b:free(); b:put(pattern(frand(500) + 1, 5)) end
    mutations = mutations + 1
  end
  local function rearm()
    getmetatable(newproxy(true)).__gc = function()
      if stop then return end
      if acting then
        acting = false   -- (its own operations are not interrupted)
        mutate()
        acting = true
      end
      rearm()
    end
  end
  for _ = 1, 3 do rearm() end
  local ops = {
    function(b, c) avxbuf.copy(b, rand(#b + 1) + 1, c) end,
    function(b, c) if #c > 0 then avxbuf.copy(b, 1, c, 1, rand(#c) + 1) end end,
    function(b, c) if #c > 0 then avxbuf.copy(b, rand(#b) + 1, c, rand(#c) + 1, rand(70)) end end,
    function(b) avxbuf.copy(b, 1, "0123456789abcdef", rand(16) + 1) end,
    function(b) b:fill(rand(256), 1, rand(#b + 1)) end,
    function(b) if #b > 0 then b:fill(rand(256), rand(#b) + 1, rand(70)) end end,
    function(b) avxbuf.zero(b, 1, rand(#b + 1)) end,
    function(b) b:put(pattern(rand(200), 4)) end,
    function(b, c) b:put(c, "x", c) end,
    function(b) b:resize(rand(5000)) end,
    function(b) return b:tostring(rand(100) + 1, rand(200) + 1) end,
    function(b) return b:byte(rand(#b + 1) + 1) end,
    function(b) if #b >= 8 then return b:unpack(1, "<i4 c2") end end,
    function(b) if #b >= 16 then return b:unpack(rand(#b - 8) + 1, "<d") end end,
    function(b) if #b >= 16 then return b:unpack(rand(#b - 8) + 1, "<f s1") end end,
    function(b) return b:unpack("<I2 s1") end,
    function(b) return b:get(rand(50)) end,
    function(b) return b:skip(rand(20)) end,
    function(b) return b:find("x", rand(50) + 1, true) end,
    function(b) b:pack("<i4 s1 d", rand(1000), "abc", rand(4) == 0 and 0 / 0 or 1.5) end,
    function(b) b:pack(rand(#b + 1) + 1, "<i8 c3", rand(99), "zz") end,
    function(b) for _ in b:lines(rand(50) + 1) do end end,
    function(b)
      local n = 0
      for _ in b:split("\1", rand(50) + 1) do
        n = n + 1
        if n > 100 then break end
      end
    end,
    function(b) return #b end,
  }
  local failures = 0
  local function fail(what)
    failures = failures + 1
    if failures <= 5 then print(("seed %d: %s"):format(seed, what)) end
  end
  for r = 1, rounds do
    local op = ops[rand(#ops) + 1]
    local b, c = pool[rand(#pool) + 1], pool[rand(#pool) + 1]
    for _ = 1, rand(6) + 1 do
      acting = true
      local ok, err = pcall(op, b, c)
      acting = false
      -- ranges are chosen before the call and finalizers may shrink the
      -- buffer inside it: an argument error then
      if not ok and not tostring(err):find("bad argument", 1, true) then
        fail("round " .. r .. ": " .. tostring(err))
      end
    end
    for _, x in ipairs(pool) do
      local text = x:tostring()
      if #text ~= #x then fail("round " .. r .. ": tostring gave " .. #text .. " bytes of " .. #x) end
      if avxbuf.from(x):tostring() ~= text then fail("round " .. r .. ": a copy differs") end
      if #x > 100000 then x:resize(100) end
    end
  end
  stop = true
  collectgarbage()
  print(("seed %d: %d rounds, %d finalizers acted, %d failures"):format(seed, rounds, mutations, failures))
  total_failures = total_failures + failures
end
print(("seeds %d failures %d"):format(seeds, total_failures))
