-- The clock verdict of bench/transform.lua, a pure function of readings
-- (spec/transform_spec.lua tries it on synthetic ones). A reading is the
-- best of k windows of the probe (avxbuf.coreclock(adds, k)), taken after
-- each document of a row's work in each round; transform runs its rows
-- document by document in turn (a block per document), so that the rows'
-- readings of one block lie milliseconds apart. Each row's clock is
-- compared with the first row's block by block: a round's ratio is the
-- median of the ratios of the two rows' readings of the same block, and
-- the rounds' ratios give the interval, as the times' do
-- (lua/avxbuf/stats.lua). A host's clock that moves during a round then
-- moves both sides of most pairs alike.
-- Plain Lua 5.1 syntax, as stats.lua.
local stats = require "avxbuf.stats"
local licence = require "avxbuf.licence"

local M = {}

-- A positive, finite number: a reading the probe could time.
local function usable(v) return type(v) == "number" and v > 0 and v < math.huge end

-- The median of the usable values, or 0 when there is none: a round's
-- clock from its readings (so that a reading an interrupt sank in every
-- window moves it by one rank, not by its depth), and a row's from its
-- rounds.
function M.median(values)
  local ok = {}
  for _, v in ipairs(values) do
    if usable(v) then ok[#ok + 1] = v end
  end
  return stats.median(ok) or 0
end

-- The ratios of row to base, one per round: the median over blocks of
-- row / base where both have readings of that round (blocks where either
-- is not usable left out), else rounds[k] / base.rounds[k]; a round with
-- neither usable is left out.
function M.round_ratios(base, row)
  local out = {}
  for k = 1, math.min(#base.rounds, #row.rounds) do
    local a, b = base.readings and base.readings[k], row.readings and row.readings[k]
    local q = {}
    if a and b then
      for j = 1, math.min(#a, #b) do
        if usable(a[j]) and usable(b[j]) then q[#q + 1] = b[j] / a[j] end
      end
    elseif usable(base.rounds[k]) and usable(row.rounds[k]) then
      q[1] = row.rounds[k] / base.rounds[k]
    end
    if #q > 0 then out[#out + 1] = stats.median(q) end
  end
  return out
end

-- rows: {{name = ..., rounds = {clock of each round}, readings = {[k] =
-- {clock of each block}} or nil}, ...}, the first the baseline; each row
-- against it by round_ratios. A row is named where its 95% interval
-- excludes 1 and its ratio lies below 1 - licence.FLOOR (the probe's own
-- resolution, with room for a bias between rows: docs/clock.md); the
-- bound is the farthest any other row's interval reaches from 1, and at
-- least that floor.
-- -> {rows = {[i] = {ratio, ci, drop, rounds}} (i >= 2), named = {row
-- texts}, bound = fraction or nil (too few rounds), text}
function M.decide(rows)
  local base, out, named, bound = rows[1], { rows = {} }, {}, licence.FLOOR
  for i = 2, #rows do
    local q = M.round_ratios(base, rows[i])
    local ones = {}
    for k = 1, #q do ones[k] = 1 end
    local r = stats.ratio(ones, q)
    local v = { ratio = r.ratio, ci = r.ci, rounds = #q, drop = false }
    out.rows[i] = v
    if not r.ci then
      bound = nil
    else
      v.drop = r.ci[2] < 1 and r.ratio < 1 - licence.FLOOR
      if v.drop then
        named[#named + 1] = string.format("%s: the core ran at %.3fx the clock of %s [%.3f-%.3f]", rows[i].name,
                                          r.ratio, base.name, r.ci[1], r.ci[2])
      elseif bound then
        bound = math.max(bound, 1 - r.ci[1], r.ci[2] - 1)
      end
    end
  end
  out.named, out.bound = named, bound
  if #named > 0 then
    out.text = table.concat(named, "; ")
  elseif #rows < 2 then
    out.text = "one row: nothing to compare"
  elseif not bound then
    out.text = "too few rounds for a clock interval (at least 6 are needed)"
  else
    out.text = string.format("no clock difference beyond +-%.1f%%", 100 * bound)
  end
  return out
end

return M
