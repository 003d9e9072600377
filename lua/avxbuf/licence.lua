-- avxbuf.licence([seconds]) -> report
-- Does wide vector code lower this core's clock? For every vector family
-- this CPU runs (zero and copy of each, and the string instructions), a
-- burst on an L1-resident buffer long enough for a turbo-licence change,
-- then at once the clock probe (avxbuf.measure_clock: the dependent-add
-- chain timed by the TSC, src/core/clock.h); interleaved in every round with
-- two scalar bursts, the baseline and its A/A control. No performance
-- counter is needed. decide() is the verdict, a pure function of readings.
local stats = require "avxbuf.stats"

local M = {}

local median = stats.median

-- avxbuf.coreclock's self-check, up to three times: a busy sibling of
-- this core can disturb one call. -> what coreclock returns.
function M.selfcheck(avxbuf)
  local ghz, check
  for _ = 1, 3 do
    ghz, check = avxbuf.coreclock()
    if not ghz or check.agree then break end
  end
  return ghz, check
end

local function pct(x) return 100 * x end

-- The smallest difference a verdict names: the probe's own resolution
-- (how far two readings of the same state differ: docs/clock.md),
-- with room for a small bias between rows.
M.FLOOR = 0.005

-- The verdict on one family from per-round clock readings (the same
-- rounds in each list): a and b, the two baselines; f, the family. Rounds
-- with a reading that is not a positive number (a window the probe could
-- not time) are left out and counted. The A/A pair (b against a) bounds the
-- noise, as the farthest its 95% interval strays from 1 (at least FLOOR):
-- a drop is said only where the family's 95% interval against the
-- baselines' mean excludes 1 and its estimate lies below 1 - noise. (Why
-- not ask the whole interval to clear the noise: docs/clock.md.)
-- -> {ratio, ci = {lo, hi} or nil, noise, drop, bound, text, dropped}
function M.decide(a, b, f)
  local ga, gb, gf = {}, {}, {}
  local dropped = 0
  for k = 1, math.min(#a, #b, #f) do
    local x, y, z = a[k], b[k], f[k]
    if x > 0 and y > 0 and z > 0 and x < math.huge and y < math.huge and z < math.huge then
      ga[#ga + 1], gb[#gb + 1], gf[#gf + 1] = x, y, z
    else
      dropped = dropped + 1
    end
  end
  local aa = stats.ratio(ga, gb)
  local noise = aa.ci and math.max(1 - aa.ci[1], aa.ci[2] - 1, M.FLOOR) or math.huge
  local base = {}
  for k = 1, #ga do base[k] = (ga[k] + gb[k]) / 2 end
  local r = stats.ratio(base, gf)
  local v = { ratio = r.ratio, ci = r.ci, noise = noise, aa = aa, dropped = dropped }
  if not r.ci or noise == math.huge then
    v.drop, v.text = false, string.format("too few rounds for an interval (%d usable; at least 6 are needed)", #ga)
    return v
  end
  v.drop = r.ci[2] < 1 and r.ratio < 1 - noise
  if v.drop then
    v.text = string.format("lowers this core's clock by %.1f%% [%.1f-%.1f]", pct(1 - r.ratio),
                           pct(1 - r.ci[2]), pct(1 - r.ci[1]))
  else
    v.bound = math.max(1 - r.ci[1], r.ci[2] - 1, noise)
    v.text = string.format("no drop beyond +-%.2f%%", pct(v.bound))
  end
  return v
end

-- The rows this CPU can run: every temporal vector family's zero and copy,
-- and the string instructions (kernels known by what they are, as tune
-- knows them).
local function family_rows(avxbuf)
  local rows = { { kernel = "scalar", name = "scalar (A)" }, { kernel = "scalar", name = "scalar (B)" } }
  for _, k in ipairs(avxbuf.kernels()) do
    if k.available and k.role == "temporal" then
      rows[#rows + 1] = { kernel = k.name, op = "zero", bits = k.vector_bits, use_avx = k.use_avx }
      rows[#rows + 1] = { kernel = k.name, op = "copy", bits = k.vector_bits, use_avx = k.use_avx }
    elseif k.available and k.role == "string" then
      rows[#rows + 1] = { kernel = k.name, op = k.op == "fill" and "zero" or "copy", bits = 0 }
    end
  end
  for _, row in ipairs(rows) do row.name = row.name or (row.kernel .. " " .. row.op) end
  return rows
end

local function text(report)
  local lines = { string.format("# licence probe: %s", report.probe_text) }
  if report.families then
    lines[#lines + 1] = string.format("# %d rounds in %.2f s; baseline %.3f GHz (TSC %.3f GHz); "
      .. "A/A %.4f [%s], noise +-%.2f%%", report.rounds, report.seconds, report.baseline_ghz, report.tsc_ghz,
      report.aa.ratio, report.aa.ci and string.format("%.4f-%.4f", report.aa.ci[1], report.aa.ci[2]) or "-",
      pct(report.noise)) .. (report.dropped > 0 and string.format("; %d rounds left out (a reading that is not a "
      .. "positive number)", report.dropped) or "")
    lines[#lines + 1] = string.format("%-20s %8s %8s %17s  %s", "family", "GHz", "ratio", "95% CI", "conclusion")
    for _, fam in ipairs(report.families) do
      lines[#lines + 1] = string.format("%-20s %8.3f %8.4f %17s  %s", fam.name, fam.ghz, fam.ratio,
        fam.ci and string.format("%.4f-%.4f", fam.ci[1], fam.ci[2]) or "-", fam.text)
    end
  end
  lines[#lines + 1] = "# " .. report.conclusion
  return table.concat(lines, "\n")
end
local REPORT = { __tostring = text }

-- What one round of n rows costs, in seconds: measure_clock's settle and
-- burst, and two windows, per row.
function M.round_seconds(n) return n * (5000 + 200 + 60) * 1e-6 end

-- The rows run: every family's, or those keep(row) is true of.
function M.rows(keep)
  local rows = {}
  for _, row in ipairs(family_rows(require "avxbuf")) do
    if not keep or keep(row) then rows[#rows + 1] = row end
  end
  return rows
end

-- The whole probe within seconds (of CPU time): rounds of every row
-- (of the rows keep(row) is true of, when keep is given), in chunks of
-- up to four, until the budget is spent (at least min_rounds, by default
-- 8, and at most 64).
function M.run(seconds, keep, min_rounds)
  min_rounds = min_rounds or 8
  local avxbuf = require "avxbuf"
  local report = setmetatable({}, REPORT)
  local ghz, check = M.selfcheck(avxbuf)
  if not ghz then
    report.unavailable = check
    report.probe_text = "unavailable: " .. check
    report.conclusion = "no conclusion: the clock probe cannot run here"
    return report
  end
  report.probe = check
  report.probe_text = string.format("add chain %.3f GHz, imul chain %.3f GHz (ratio %.4f: %s)", check.add_ghz,
    check.imul_ghz, check.ratio, check.agree and "they agree" or "they DISAGREE, so no reading is trusted")
  report.tsc_ghz = check.tsc_ghz
  if not check.agree then
    report.conclusion = "no conclusion: the two chains disagree (an emulator, or a core that does not run "
                        .. "an add in 1 cycle and an imul in 3)"
    return report
  end
  local rows = M.rows(keep)
  if #rows < 3 then
    report.conclusion = "no conclusion: no vector family to measure"
    return report
  end
  local readings = {}
  for i = 1, #rows do readings[i] = {} end
  local start = os.clock()
  local rounds = 0
  repeat
    local chunk = math.max(1, math.min(4, min_rounds - rounds))
    local r = assert(avxbuf.measure_clock { rows = rows, rounds = chunk })
    for i = 1, #rows do
      for k = 1, chunk do readings[i][rounds + k] = r[i][k] end
    end
    rounds = rounds + chunk
  until rounds >= 64 or (rounds >= min_rounds and os.clock() - start >= seconds)
  report.seconds, report.rounds = os.clock() - start, rounds
  report.baseline_ghz = median(readings[1])
  report.families = {}
  local drops, bound = {}, 0
  for i = 3, #rows do
    local v = M.decide(readings[1], readings[2], readings[i])
    local row = rows[i]
    report.aa, report.noise, report.dropped = v.aa, v.noise, v.dropped
    local fam = { name = row.name, kernel = row.kernel, op = row.op, bits = row.bits, use_avx = row.use_avx,
                  ghz = median(readings[i]) or 0, ratio = v.ratio, ci = v.ci, drop = v.drop, text = v.text }
    report.families[#report.families + 1] = fam
    if fam.drop then drops[#drops + 1] = fam.name else bound = math.max(bound, v.bound or math.huge) end
  end
  report.conclusion = #drops > 0 and ("lower clock after: " .. table.concat(drops, ", "))
                      or string.format("no family lowers this core's clock beyond +-%.2f%%", pct(bound))
  return report
end

return M
