-- Timing harness shared by the benchmarks: calibrated batches, medians,
-- configurations measured interleaved so that drift hits them all alike.
-- Plain Lua 5.1 syntax: bench/ffi.lua runs it under LuaJIT.
local M = {}

local clock = os.clock  -- process CPU time; every batch runs for >= min_time

M.median = require("avxbuf.stats").median   -- (nil for an empty list)

-- The p-quantile (0 < p <= 1) of an ascending list, by nearest rank: the
-- smallest element with at least a share p of the list at or below it.
function M.quantile(sorted, p)
  return sorted[math.max(1, math.ceil(p * #sorted))]
end

-- Seconds per call of fn(), from a batch sized to take about min_time.
local function batch(fn, reps)
  local t0 = clock()
  for _ = 1, reps do fn() end
  return (clock() - t0) / reps
end

function M.calibrate(fn, min_time)
  local reps = 1
  while true do
    local t0 = clock()
    for _ = 1, reps do fn() end
    local dt = clock() - t0
    if dt >= min_time then return reps end
    reps = reps * (dt > 0 and math.min(16, math.max(2, math.ceil(min_time / dt))) or 16)
  end
end

-- cases: list of {name = ..., setup = function() end, fn = function() end}.
-- Each round runs every case once (setup, then a timed batch), in turn;
-- returns per case the list of seconds-per-call samples.
function M.interleave(cases, rounds, min_time)
  local reps, samples = {}, {}
  for i, c in ipairs(cases) do
    if c.setup then c.setup() end
    reps[i] = M.calibrate(c.fn, min_time)
    samples[i] = {}
  end
  for _ = 1, rounds do
    for i, c in ipairs(cases) do
      if c.setup then c.setup() end
      -- One untimed call first: a case before this one may have left the
      -- caches cold for it (a streaming kernel evicts its destination).
      c.fn()
      samples[i][#samples[i] + 1] = batch(c.fn, reps[i])
    end
  end
  return samples
end

-- Nanoseconds per call: the best of `tries` runs of loop(), which makes
-- `calls` calls (the loop is the caller's, so nothing sits between it and
-- the function measured).
function M.best_of(loop, calls, tries)
  local best = math.huge
  for _ = 1, tries or 7 do
    local t = clock()
    loop()
    best = math.min(best, (clock() - t) / calls * 1e9)
  end
  return best
end

function M.read_file(path)
  local f = assert(io.open(path, "rb"))
  local text = f:read("*a")
  f:close()
  return text
end

-- JSON has no NaN or infinity (cjson refuses them): a value that is one,
-- such as the noise of a step avxbuf.tune did not measure (+-inf), is
-- written as null, "no number", rather than a number it is not. The copy
-- keeps each table's metatable (cjson's array and object marks).
local function finite_or_null(v, null, seen)
  if type(v) == "number" then
    return (v ~= v or v == math.huge or v == -math.huge) and null or v
  end
  if type(v) ~= "table" or v == null then return v end
  if seen[v] then return seen[v] end
  local t = {}
  seen[v] = t
  for k, x in pairs(v) do t[k] = finite_or_null(x, null, seen) end
  return setmetatable(t, getmetatable(v))
end

function M.write_json(path, value)
  local cjson = require("cjson")
  local text = cjson.encode(finite_or_null(value, cjson.null, {}))
  local f = assert(io.open(path, "w"))
  f:write(text)
  f:close()
end
M.finite_or_null = function(v) return finite_or_null(v, require("cjson").null, {}) end

function M.size_label(n)
  local KiB, MiB = 1024, 1024 * 1024
  if n >= MiB and n % MiB == 0 then return string.format("%d MiB", n / MiB) end
  if n >= KiB and n % KiB == 0 then return string.format("%d KiB", n / KiB) end
  return string.format("%d B", n)
end

-- The one seeded generator (rng.lua), so that every run and every row sees
-- the same data on every Lua: rng(seed) returns r, r(n) in [0, n).
M.rng = require("rng").new

return M
