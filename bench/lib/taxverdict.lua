-- The dispatch tax's verdict in bench/plancheck.lua, a pure function of
-- per-cell ratios (spec/taxverdict_spec.lua tries it on synthetic ones).
-- The plan check judges a kernel's row as if the default cost what it
-- does; on the Zen 5 VM the default ran 4 KiB copies at 0.81-0.85x the row
-- of the very function it called (issue 46), so the premise is tested on
-- every machine: per cell the default's ratio to the C library over that
-- of the row timing the kernel it runs, against the noise a twin control
-- (two rows of identical code) shows in the same sweeps. The row calls the
-- kernel's copy, the row the plan check reads; from 2 KiB the default
-- enters it past the size tests (copy_large, src/kernels/kernels.h).
-- Plain Lua 5.1 syntax: the specs run on every Lua.
local harness = require "harness"

local M = {}

-- The noise band: the twins' deviation from 1 that 95% of them stay within.
-- A tax counts where the default is slower than its kernel beyond it (one
-- side: a default faster than its kernel costs nothing), so with no tax
-- about 2.5% of cells cross it by noise alone, under the 5% allowed.
M.QUANTILE = 0.95
M.SHARE = 0.05

-- taxes: {{key = cell, row = the kernel's row, ratio = default / that row}, ...}
-- on the judged runs; twins: {twin ratio, ...}, one a cell, on runs the
-- taxes were not judged on (the band is set on some runs and the taxes
-- judged on others, as plancheck picks and judges the best row).
-- -> {judged, floor = the ratio below which a tax exceeds the noise,
--     beyond = the taxed cells, worst first, met = true or false; floor
--     and met nil with no twin or no tax to judge}
function M.decide(taxes, twins)
  local r = { judged = #taxes, beyond = {} }
  if #twins == 0 or #taxes == 0 then return r end
  local dev = {}
  for i, t in ipairs(twins) do dev[i] = math.abs(math.log(t)) end
  table.sort(dev)
  r.floor = math.exp(-harness.quantile(dev, M.QUANTILE))
  for _, t in ipairs(taxes) do
    if t.ratio < r.floor then r.beyond[#r.beyond + 1] = t end
  end
  table.sort(r.beyond, function(a, b) return a.ratio < b.ratio end)
  r.met = #r.beyond <= M.SHARE * #taxes
  return r
end

-- Whether the call site alone explains a tax (tax < 1: the default slower
-- than its kernel's row): the same kernel, timed from a loop one nop longer
-- than its row's (csweep's kernel_nop), slowed as far, less the noise band
-- (floor, from decide). A nop that sped the kernel up says the row's own
-- loop is a slow one, and the default slower still: no explanation. The
-- default's loop decides before it calls, so it is never the row's; on the
-- Zen 5 VM one nop there slowed unaligned 1 KiB copies about as far as the
-- default (docs/runs/zen5-vm-2026-12-06.md, "The night"). Said beside the
-- verdict, not in it: a dispatch pays what its decision costs.
function M.as_far(tax, nop, floor)
  return nop < 1 and math.log(nop) <= math.log(tax) - math.log(floor)
end

return M
