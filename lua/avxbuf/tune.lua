-- avxbuf.tune([seconds]) -> settings, report, options
-- Measures on the running machine, within a budget (default 1 s of CPU
-- time), the crossovers the plan depends on, and moves a threshold only
-- where the difference clears the noise measured in the same run:
--   rep_movsb          the vector copy against rep movsb (ERMS), 2 KiB-4 MiB
--   rep_stosb          the vector fill against rep stosb, 2 KiB-4 MiB (each
--                      a window: its threshold and stop threshold)
--   avx3               32- against 64-byte vectors, where use_avx=3 is in force
--   nontemporal        temporal against streaming copies, 1-64 MiB
--   nontemporal_zero   zero (zero_nontemporal_threshold), 2-64 MiB
--   nontemporal_fill   fill (memset_nontemporal_threshold), 2-64 MiB
-- in that order (the large sizes last: what the budget cuts is theirs),
-- after the licence probe (lua/avxbuf/licence.lua), which gets a quarter
-- of the budget (and is left out where that cannot pay for 6 rounds):
--   licence            the core clock after 512-bit zero and copy, and
--                      after 256-bit zero, against scalar code. On a CPU
--                      the policy's table does not name, a drop at 512 bits
--                      sets use_avx=2 and a drop after 256-bit zeroing sets
--                      vector_zeroing=false; on a CPU it names, the table's
--                      line stands and the report says whether the
--                      measurement agrees. It only ever lowers a level.
-- Every candidate is timed from C (avxbuf.measure) in interleaved rounds
-- against the plan's own vector kernel, which is also timed twice: the
-- spread of those two is the noise. Only the licence probe may lower
-- use_avx or vector_zeroing, and only where the policy's table has no line
-- for this CPU; tune changes no setting itself: avxbuf.configure(settings)
-- applies the result, and options is the same as an AVXBUF_OPTIONS string.
local avxbuf = require "avxbuf"
local licence = require "avxbuf.licence"
local stats = require "avxbuf.stats"

local KiB, MiB = 1024, 1024 * 1024
local log, floor = math.log, math.floor

local median = stats.median

local function sizes(from, to)
  local t, n = {}, from
  while n <= to do t[#t + 1] = n; n = n * 2 end
  return t
end

-- The name of a kernel this CPU runs whose avxbuf.kernels() entry has these
-- fields, or nil: tune knows kernels by what they are, not by name.
local function kernel_with(fields)
  for _, k in ipairs(avxbuf.kernels()) do
    local match = k.available
    for f, v in pairs(fields) do match = match and k[f] == v end
    if match then return k.name end
  end
end
local STRING_COPY, STRING_FILL = { role = "string", op = "copy" }, { role = "string", op = "fill" }
local ZMM = { role = "temporal", use_avx = 3, vector_bits = 512 }
local YMM3 = { role = "temporal", use_avx = 3, vector_bits = 256 }   -- AVX-512's own 32-byte family

-- Whether the plan's vector family has a streaming kernel of its own.
local function has_streaming()
  return avxbuf.kernel("copy", MiB, "streaming") ~= avxbuf.kernel("copy", MiB, "vector")
end

local function fmt_size(n)
  if n == 0 then return "never" end
  if n >= MiB and n % MiB == 0 then return floor(n / MiB) .. " MiB" end
  if n >= KiB and n % KiB == 0 then return floor(n / KiB) .. " KiB" end
  return n .. " B"
end

-- One crossover: at each size, the plan's vector kernel (twice) and the
-- candidate, interleaved. Per size: the candidate's verdict against the
-- vector kernel: 1 faster beyond the noise, -1 slower beyond it, 0 neither.
local function measure(c, deadline)
  local rows = { sizes = {}, base = {}, cand = {}, verdict = {}, ratio = {} }
  local aa = {}
  for _, n in ipairs(c.sizes) do
    if os.clock() > deadline then rows.cut = n; break end
    local base = c.base or avxbuf.kernel(c.op, n, "vector")
    local cand = c.candidate(n)
    local r = avxbuf.measure { op = c.op, size = n, kernels = { base, base, cand }, rounds = c.rounds }
    local d, win = {}, 0
    for k = 1, c.rounds do
      aa[#aa + 1] = log(r[2][k] / r[1][k])
      local base_t = (r[1][k] + r[2][k]) / 2
      d[k] = log(base_t / r[3][k])   -- above 0: the candidate is faster
      if d[k] > 0 then win = win + 1 end
    end
    local i = #rows.sizes + 1
    rows.sizes[i] = n
    rows.base[i] = n / median(r[1]) / 1e9
    rows.cand[i] = n / median(r[3]) / 1e9
    rows.ratio[i] = math.exp(median(d))
    rows.d, rows.win = rows.d or {}, rows.win or {}
    rows.d[i], rows.win[i] = median(d), win / c.rounds
    rows.kernels = rows.kernels or { base, cand }
  end
  -- the noise: the robust spread of the vector kernel against itself
  rows.noise = #aa > 0 and stats.robust_sd(aa) or math.huge
  rows.margin = math.max(0.03, 2 * rows.noise)
  for i = 1, #rows.sizes do
    local d, w = rows.d[i], rows.win[i]
    rows.verdict[i] = (d > rows.margin and w >= 0.75) and 1 or (d < -rows.margin and w <= 0.25) and -1 or 0
  end
  return rows
end

-- The string instruction's window from its rows: of the runs of sizes from
-- a win to a win (two wins at least) that no end of theirs loses on
-- balance (the gain summed from either end to any size within is above 0),
-- the one whose gain, summed over the sizes with a verdict (the median log
-- ratios), is largest. A loss between larger wins stays inside: ending the
-- window at any loss cut it at one size whose wins above it were larger
-- (docs/runs/zen5-vm-2026-12-07.md, "The string window past one loss"); a
-- win that a larger loss beside it outweighs is no reason to take that
-- loss. A bound moves only across a measured win or loss: where the
-- current window (from, until; from 0: none, until 0: no end) already
-- reaches into the sizes of no verdict between the run and the nearest
-- loss outside it, it keeps them. Returns from and until (0: no end), and
-- the first and last win's indices.
local function string_window(r, cur_from, cur_until)
  local v, n = r.verdict, #r.sizes
  local function gain(a, b)
    local g = 0
    for k = a, b do if v[k] ~= 0 then g = g + r.d[k] end end
    return g
  end
  local function ends_win(a, b)
    for k = a, b - 1 do
      if gain(a, k) <= 0 or gain(k + 1, b) <= 0 then return false end
    end
    return true
  end
  local best
  for a = 1, n do
    if v[a] == 1 then
      local wins = 0
      for b = a, n do
        if v[b] == 1 then
          wins = wins + 1
          local g = gain(a, b)
          if wins >= 2 and (not best or g > best.gain) and ends_win(a, b) then best = { a = a, b = b, gain = g } end
        end
      end
    end
  end
  if not best then return nil end
  best.lo, best.hi = best.a, best.b   -- widened to the nearest loss outside the run
  while best.lo > 1 and v[best.lo - 1] ~= -1 do best.lo = best.lo - 1 end
  while best.hi < n and v[best.hi + 1] ~= -1 do best.hi = best.hi + 1 end
  local from = r.sizes[best.a]
  local loss_below = best.lo > 1 and r.sizes[best.lo - 1] or 0   -- a loss there, or nothing measured
  if cur_from > loss_below and cur_from < from then from = cur_from end
  local untl = best.b < n and r.sizes[best.b + 1] or 0
  local ceiling = best.hi < n and r.sizes[best.hi + 1] or 0   -- the next loss, 0: none
  -- (a window that is never taken, from 0, reaches nowhere: its until of 0
  -- is no end only for a window that exists)
  local reaches = cur_from > 0 and (cur_until == 0 and ceiling == 0
                                    or cur_until > untl and (ceiling == 0 or cur_until <= ceiling))
  if untl ~= 0 and reaches then untl = cur_until end
  return from, untl, best.a, best.b
end

local function any(v, x, from, to)
  for i = from or 1, to or #v do if v[i] == x then return true end end
  return false
end

-- Whether the candidate loses at a size the window from `from` to `untl`
-- (0: no end) runs it at.
local function loses_within(r, from, untl)
  for i, n in ipairs(r.sizes) do
    if r.verdict[i] == -1 and n >= from and (untl == 0 or n < untl) then return true end
  end
  return false
end

-- Whether streaming loses where the threshold cur (0: never) has it run:
-- at a size measured from cur on, and wins at none (a loss below cur is
-- where it does not run).
local function loses_from(r, cur)
  return cur ~= 0 and not any(r.verdict, 1) and loses_within(r, cur, 0)
end

-- The first size from which the candidate wins, at the next size too (or
-- there is none), and is slower at no size above it: neither beyond the
-- margin (a loss) nor beyond the noise itself: a win at one size alone,
-- the next sizes even or slower, is a reading the machine's load moved
-- (other tenants of a shared L3 can slow one size for a few runs:
-- docs/runs/zen4-vm-2026-12-04.md has a case), not a crossover.
local function lasting_win(r)
  for i = 1, #r.sizes do
    if r.verdict[i] == 1 and (i == #r.sizes or r.verdict[i + 1] == 1) then
      local slower = false
      for j = i, #r.sizes do slower = slower or r.verdict[j] == -1 or r.d[j] < -r.noise end
      if not slower then return i end
    end
  end
end

-- The step that moves a string instruction's window (its `threshold` and
-- `stop_threshold` knobs) to where it wins, from 2 KiB to 4 MiB.
local function string_step(name, op, kind, what)
  local knob, stop = name .. "_threshold", name .. "_stop_threshold"
  return {
    name = name, op = op, rounds = 7, sizes = sizes(2 * KiB, 4 * MiB), weight = 2,
    applies = function(cfg) return kernel_with(kind) and cfg.kernel ~= "libc" end,
    candidate = function() return kernel_with(kind) end,
    decide = function(r, cfg, set)
      local cur_from = cfg[knob] > 0 and cfg[knob] + 1 or 0
      local from, untl, a, b = string_window(r, cur_from, cfg[stop])
      if from then
        local said = string.format("%s faster from %s to %s", what, fmt_size(r.sizes[a]), fmt_size(r.sizes[b]))
        if any(r.verdict, -1, a, b) then said = said .. " (slower at sizes between, by less than it won)" end
        if from == cur_from and untl == cfg[stop] then return said .. ", within the window already", "kept" end
        -- the thresholds are taken above (as glibc's): from `from` itself
        set[knob], set[stop] = from - 1, untl
        return string.format("%s: from %s to %s", said, fmt_size(from), untl == 0 and "no end" or fmt_size(untl)),
               "moved"
      end
      -- closed only for a loss where it runs: a loss outside the window
      -- says nothing of the sizes in it
      if cur_from > 0 and loses_within(r, cur_from, cfg[stop]) and not any(r.verdict, 1) then
        set[knob], set[stop] = 0, 0
        return what .. " never faster, slower where it ran: never", "moved"
      end
      return "no run of sizes where " .. what .. " is faster beyond the noise", "kept"
    end,
  }
end

-- The streaming thresholds derive from one another unless set (zero's and
-- fill's from the copies'; zero's from fill's): a step that moves one pins
-- the others at their values now, which their own steps measure.
local STREAMING = { "nontemporal_threshold", "memset_nontemporal_threshold", "zero_nontemporal_threshold" }

-- The step that moves `knob` to where streaming `op` wins (from `lo` to 64
-- MiB), or past the sizes measured where it only loses.
local function streaming_step(name, op, lo, weight, knob, what)
  return {
    name = name, op = op, rounds = 5, sizes = sizes(lo, 64 * MiB), weight = weight,
    applies = function(cfg) return cfg.kernel ~= "libc" and has_streaming() end,
    candidate = function(n) return avxbuf.kernel(op, n, "streaming") end,
    decide = function(r, cfg, set)
      local function move(to)
        for _, k in ipairs(STREAMING) do if set[k] == nil then set[k] = cfg[k] end end
        set[knob] = to
      end
      local i = lasting_win(r)
      if i then
        local said = string.format("%s faster from %s, never slower above it", what, fmt_size(r.sizes[i]))
        if r.sizes[i] == cfg[knob] then return said .. ": the threshold already", "kept" end
        move(r.sizes[i])
        return said, "moved"
      end
      -- slower where it runs now, and never faster up to the largest size
      -- measured: beyond it
      local top = r.sizes[#r.sizes]
      if loses_from(r, cfg[knob]) then
        move(2 * top)
        return string.format("%s never faster up to %s, slower where it ran: from %s", what, fmt_size(top),
                             fmt_size(2 * top)), "moved"
      end
      return string.format("no size from which %s is faster beyond the noise", what), "kept"
    end,
  }
end

-- Each crossover: what it measures, and how its rows become settings.
local CROSSOVERS = {
  string_step("rep_movsb", "copy", STRING_COPY, "rep movsb"),
  -- A fill of a byte other than 0, as the default's own measurement of rep
  -- stosb (src/core/measured.c says why): the window serves zero and fill.
  string_step("rep_stosb", "fill", STRING_FILL, "rep stosb"),
  {
    name = "avx3", op = "copy", rounds = 7, sizes = sizes(256, 64 * KiB), weight = 1,
    applies = function(cfg) return cfg.use_avx == 3 and cfg.max_vector_size == 64 and kernel_with(ZMM) end,
    candidate = function() return kernel_with(ZMM) end,
    -- against the 32-byte family, whatever avx3_threshold now is
    base = kernel_with(YMM3),
    -- A split where there is none only where the 32-byte family wins below
    -- it: a split costs the dispatch a one-load way (below 2 KiB the first,
    -- up to 32 KiB the second), whose sizes then take the size classes
    -- (docs/runs/zen5-vm-2026-12-07.md, "The ways of a split plan").
    decide = function(r, cfg, set)
      local i = lasting_win(r)
      if not i then return "64-byte vectors never faster beyond the noise", "kept" end
      if i > 1 and cfg.avx3_threshold == 0 and not any(r.verdict, -1, 1, i - 1) then
        return string.format("64-byte vectors faster from %s, and slower at no size below it", fmt_size(r.sizes[i])),
               "kept"
      end
      local said = string.format("64-byte vectors faster from %s", fmt_size(r.sizes[i]))
      local to = i == 1 and 0 or r.sizes[i]
      if to == cfg.avx3_threshold then return said .. ": the threshold already", "kept" end
      set.avx3_threshold = to
      return said, "moved"
    end,
  },
  streaming_step("nontemporal", "copy", 1 * MiB, 4, "nontemporal_threshold", "streaming"),
  streaming_step("nontemporal_zero", "zero", 2 * MiB, 3, "zero_nontemporal_threshold", "streaming zero"),
  streaming_step("nontemporal_fill", "fill", 2 * MiB, 3, "memset_nontemporal_threshold", "streaming fill"),
}

-- What the policy's rule expects the probe to find: a drop at 512 bits,
-- and one after 256-bit zeroing (src/core/policy.c's rules).
local EXPECTS = {
  ["licence-severe"] = { z512 = true, z256 = true }, ["licence-mild"] = { z512 = true, z256 = false },
  ["no-licence-drop"] = { z512 = false, z256 = false }, best = { z512 = false, z256 = false },
}

-- The licence step: its report entry, with what it sets in set.
local function licence_step(cfg, seconds, set)
  local cpu = avxbuf.cpu()
  local zmm, ymm = kernel_with(ZMM), kernel_with { role = "temporal", use_avx = 2 }
  local entry = { name = "licence", op = "zero, copy", sizes = {}, ratio = {}, verdict = {}, noise = 0, margin = 0 }
  local function keep(row)
    return row.kernel == "scalar" or row.kernel == zmm or (row.kernel == ymm and row.op == "zero")
  end
  -- 6 rounds at least (the fewest an interval needs): not measured where
  -- the budget cannot pay for them
  local need = 6 * licence.round_seconds(#licence.rows(keep))
  if seconds < need then
    entry.decision = "kept"
    entry.why = string.format("not measured: 6 rounds of the licence probe take %.2f s, more than its share "
                              .. "(%.2f s) of the budget", need, seconds)
    return entry
  end
  local report = licence.run(seconds, keep, 6)
  entry.licence = report
  if not report.families then
    entry.decision, entry.why = "kept", report.conclusion
    return entry
  end
  entry.noise, entry.margin = report.noise, report.noise
  local found = { z512 = false, z256 = false }
  for _, f in ipairs(report.families) do
    if f.drop and f.bits == 512 then found.z512 = true end
    if f.drop and f.bits == 256 and f.op == "zero" then found.z256 = true end
  end
  local said = string.format("512-bit zero/copy: %s; 256-bit zero: %s",
                             found.z512 and "lower clock" or "no drop", found.z256 and "lower clock" or "no drop")
  if cpu.uarch ~= "unknown" then
    local expect = EXPECTS[cpu.rule] or EXPECTS.best
    local agrees = expect.z512 == found.z512 and (not expect.z256 or found.z256)
    entry.decision = "reported"
    entry.why = string.format("%s; the policy's line for %s (%s) stands, and the measurement %s", said, cpu.uarch,
                              cpu.rule, agrees and "agrees" or "does not agree with it")
    return entry
  end
  entry.decision, entry.why = "kept", said .. " on a CPU the policy's table does not name"
  if found.z512 and cfg.use_avx == 3 then set.use_avx, entry.decision = 2, "moved" end
  if found.z256 and cfg.vector_zeroing then set.vector_zeroing, entry.decision = false, "moved" end
  if entry.decision == "moved" then entry.why = entry.why .. ": lowered to what the measurement allows" end
  return entry
end

-- The report as text (its __tostring): per step what it measured, size by
-- size, and what it decided.
local VERDICT = { [1] = "+", [-1] = "-", [0] = "." }
local function text(report)
  local lines = { string.format("# avxbuf.tune(%s): %.2f s; ratio = the candidate's speed / the plan's vector "
                                .. "kernel's (median of interleaved rounds); + faster, - slower beyond the noise, "
                                .. ". neither", tostring(report.budget), report.seconds) }
  for _, e in ipairs(report) do
    if e.name == "licence" then
      lines[#lines + 1] = string.format("\n%s (%s):\n%s", e.name, e.op, e.licence and tostring(e.licence) or "-")
    else
      lines[#lines + 1] = string.format("\n%s (%s): %s against %s; noise +-%.1f%%, a difference counts from %.1f%%",
                                        e.name, e.op, e.kernels and e.kernels[2] or "-",
                                        e.kernels and e.kernels[1] or "-", 100 * e.noise, 100 * e.margin)
    end
    if #e.sizes > 0 then
      lines[#lines + 1] = string.format("  %10s  %12s  %12s  %5s", "size", e.kernels[1], e.kernels[2], "ratio")
    end
    for i, n in ipairs(e.sizes) do
      lines[#lines + 1] = string.format("  %10s  %7.2f GB/s  %7.2f GB/s  %5.2fx %s", fmt_size(n), e.gbs.base[i],
                                        e.gbs.candidate[i], e.ratio[i], VERDICT[e.verdict[i]])
    end
    lines[#lines + 1] = string.format("  -> %s: %s", e.decision, e.why)
  end
  return table.concat(lines, "\n")
end
local REPORT = { __tostring = text }

-- seconds: checked by the C function avxbuf.tune (src/measure/lmeasure.c), which
-- names the caller's line in its errors.
return function(seconds)
  local cfg = avxbuf.config()
  local start = os.clock()
  local deadline = start + seconds
  local set, report = {}, setmetatable({ budget = seconds }, REPORT)
  if avxbuf.cpu().max_use_avx >= 2 then report[1] = licence_step(cfg, seconds / 4, set) end
  local after = {}   -- the crossovers apply to the settings as the licence step left them
  for k, v in pairs(cfg) do after[k] = v end
  for k, v in pairs(set) do after[k] = v end
  local applicable = {}
  for _, c in ipairs(CROSSOVERS) do if c.applies(after) then applicable[#applicable + 1] = c end end
  for i, c in ipairs(applicable) do
    -- each crossover gets its share of what is left (the large sizes weigh more)
    local weights = 0
    for j = i, #applicable do weights = weights + applicable[j].weight end
    local share = (deadline - os.clock()) * c.weight / weights
    local rows = measure(c, os.clock() + share)
    local entry = { name = c.name, op = c.op, sizes = rows.sizes, kernels = rows.kernels,
                    gbs = { base = rows.base, candidate = rows.cand }, ratio = rows.ratio,
                    verdict = rows.verdict, noise = rows.noise, margin = rows.margin }
    if #rows.sizes == 0 then
      entry.decision, entry.why = "kept", "not measured: the time budget ran out"
    else
      local why, decision = c.decide(rows, after, set)
      entry.decision, entry.why = decision, why
      if rows.cut then
        entry.why = entry.why .. string.format(" (sizes from %s not measured: budget)", fmt_size(rows.cut))
      end
    end
    report[#report + 1] = entry
  end
  local settings, names = {}, {}
  for k, v in pairs(cfg) do settings[k] = v end
  for k, v in pairs(set) do settings[k] = v; names[#names + 1] = k end
  table.sort(names)
  local opts = {}
  for _, k in ipairs(names) do
    opts[#opts + 1] = k .. "=" .. (type(set[k]) == "boolean" and tostring(set[k]) or floor(set[k]))
  end
  report.seconds = os.clock() - start
  return settings, report, table.concat(opts, ",")
end
