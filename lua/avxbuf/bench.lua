-- Timing harness shared by the benchmarks: calibrated batches, medians,
-- configurations measured interleaved so that drift hits them all alike.
local M = {}

local clock = os.clock  -- process CPU time; every batch runs for >= min_time

function M.median(xs)
  local s = {}
  for i = 1, #xs do s[i] = xs[i] end
  table.sort(s)
  local m = #s // 2
  if #s % 2 == 1 then return s[m + 1] end
  return (s[m] + s[m + 1]) / 2
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
      samples[i][#samples[i] + 1] = batch(c.fn, reps[i])
    end
  end
  return samples
end

function M.size_label(n)
  if n >= 1 << 20 and n % (1 << 20) == 0 then return string.format("%d MiB", n >> 20) end
  if n >= 1 << 10 and n % (1 << 10) == 0 then return string.format("%d KiB", n >> 10) end
  return string.format("%d B", n)
end

return M
