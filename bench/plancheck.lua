-- The default judged by C sweeps (build/bench/csweep --json): for every cell
-- from 256 B, the default's GB/s (median over the runs) against the best
-- row of the cell (any kernel, the string instructions, or the C library),
-- and against the C library. No timing is taken here.
--   lua5.4 bench/plancheck.lua SWEEP.json...
-- judges the sweeps' own "default" row (make check-default: this machine);
--   lua5.4 bench/plancheck.lua --dump CPUID.txt [--xcr0 N] [--rep-movsb-as ROW:FROM:TO] SWEEP.json...
-- judges what this avxbuf's policy picks for the machine of that CPUID dump
-- (avxbuf.decide{leaves}.picks), by that machine's own sweeps, with each
-- pick's figures from its kernel's row.
-- A sweep made before the rep_movsb kernel had a row of its own has no
-- figures for it: --rep-movsb-as libc:2112:1048576 reads them from the C
-- library's row where glibc itself ran rep movsb (its rep_movsb_threshold and
-- rep_movsb_stop_threshold there, from ld.so --list-diagnostics); other such
-- cells are counted as unjudged.
package.path = "lua/?.lua;bench/lib/?.lua;" .. package.path
package.cpath = "build/?.so;" .. package.cpath
local argparse = require "argparse"
local cjson = require "cjson"
local avxbuf = require "avxbuf"
local bench = require "harness"
local cpuid_dump = require "cpuid_dump"

local parser = argparse("plancheck.lua", "the policy's picks for a recorded machine against its sweeps")
parser:option("--dump", "judge the picks for the machine of this CPUID dump (cpuid -r)")
parser:option("--xcr0", "its XCR0", "0xE7")
parser:option("--rep-movsb-as", "ROW:FROM:TO: rep_movsb's figures from this row at sizes FROM <= n < TO")
parser:option("--from", "smallest size judged", "256")
parser:option("--row", "judge this row instead of the default (a kernel row judged so shows the floor "
              .. "the machine's noise sets: the best of many noisy rows beats any one of them)", "default")
parser:argument("sweeps", "csweep --json files from that machine"):args("+")
local args = parser:parse()

local function read(path)
  local f = assert(io.open(path, "rb"))
  local text = f:read("*a")
  f:close()
  return text
end

local decision = args.dump and avxbuf.decide { leaves = cpuid_dump(read(args.dump)),
                                                xcr0 = math.tointeger(tonumber(args.xcr0)) }

-- The row that stands for the default in a cell.
local function picked(op, n)
  if not decision then return args.row end   -- (judge() passes it directly)
  local k
  for _, p in ipairs(decision.picks[op]) do if n >= p.from then k = p.kernel end end
  return k
end

local as_row, as_from, as_to
if args.rep_movsb_as then
  as_row, as_from, as_to = args.rep_movsb_as:match("^([%w_]+):(%d+):(%d+)$")
  assert(as_row, "--rep-movsb-as takes ROW:FROM:TO")
  as_from, as_to = tonumber(as_from), tonumber(as_to)
end

-- Cells by key, each row's GB/s over the runs.
local cells, order = {}, {}
for _, path in ipairs(args.sweeps) do
  for _, c in ipairs(cjson.decode(read(path)).cells) do
    local key = string.format("%s %d %d/%d %d", c.op, c.size, c.dst_offset, c.src_offset, c.distance_mod_4096)
    if not cells[key] then cells[key] = { cell = c, rows = {} }; order[#order + 1] = key end
    for name, r in pairs(c.rows) do
      local t = cells[key].rows[name] or {}
      t[#t + 1] = r.gbs
      cells[key].rows[name] = t
    end
  end
end

-- Judges the row that stands for `who` (a row name, or nil: the picks) in
-- every cell: the best of the other rows (the sweep's default row is a plan
-- dispatching to those same kernels, not a candidate) against it.
local function judge(who)
  local r = { judged = 0, below = {}, below_libc = 0, unjudged = 0, was_below = 0, below_90 = 0 }
  for _, key in ipairs(order) do
    local c, rows = cells[key].cell, cells[key].rows
    if c.size >= tonumber(args.from) then
      local med, best, best_name = {}, 0, nil
      for name, v in pairs(rows) do
        med[name] = bench.median(v)
        if name ~= "default" and name ~= who and med[name] > best then best, best_name = med[name], name end
      end
      local k = who or picked(c.op, c.size)
      local row = k
      if (k == "rep_movsb" or k == "rep_stosb") and med.rep then row = "rep" end   -- the sweep's row for both
      if k == "rep_movsb" and as_row and c.size >= as_from and c.size < as_to then row = as_row end
      if not med[row] then
        r.unjudged = r.unjudged + 1
      else
        r.judged = r.judged + 1
        local ratio = med[row] / best
        if ratio < 0.95 then r.below[#r.below + 1] = { key = key, kernel = k, ratio = ratio, best = best_name } end
        if ratio < 0.90 then r.below_90 = r.below_90 + 1 end
        if med[row] < 0.98 * med.libc then r.below_libc = r.below_libc + 1 end
        if med.default and med.default / best < 0.95 then r.was_below = r.was_below + 1 end
      end
    end
  end
  return r
end

local res = judge(not decision and args.row or nil)
local judged, below, below_libc, unjudged, was_below, below_90 =
  res.judged, res.below, res.below_libc, res.unjudged, res.was_below, res.below_90

if decision then
  print(string.format("# %s\n# picks for that CPU (%s):", decision.reason, decision.thresholds_source or ""))
  for _, op in ipairs { "copy", "fill", "find" } do
    local t = {}
    for _, p in ipairs(decision.picks[op]) do t[#t + 1] = string.format("%s from %d", p.kernel, p.from) end
    print(string.format("#   %-5s %s", op, table.concat(t, ", ")))
  end
end
table.sort(below, function(a, b) return a.ratio < b.ratio end)
for _, b in ipairs(below) do
  print(string.format("%-28s %-12s %.2fx the best row (%s)", b.key, b.kernel, b.ratio, b.best))
end
local n = math.max(judged, 1)
print(string.format("cells from %s B: %d judged%s; below 0.90x the best row: %d; below 0.95x: %d (%.1f%%); "
  .. "at or above 0.98x the C library: %d (%.1f%%)%s", args.from, judged,
  unjudged > 0 and string.format(", %d unjudged (no row for the kernel picked)", unjudged) or "",
  below_90, #below, 100 * #below / n, judged - below_libc, 100 * (judged - below_libc) / n,
  decision and string.format("; the sweeps' own default row: %d below 0.95x", was_below) or ""))
local met = below_90 == 0 and #below <= 0.05 * judged and judged - below_libc >= 0.95 * judged
print(string.format("target (none below 0.90x, at most 5%% below 0.95x, at least 95%% at 0.98x libc or above): %s",
                    met and "met" or "not met"))

-- The floor the noise sets: each kernel row judged the same way (the best
-- of a dozen noisy rows beats any one of them in many cells).
if not decision then
  local counts = {}
  for name in pairs(cells[order[1]].rows) do
    if name ~= "default" and name ~= "libc" and name ~= "rep" and not name:find("_nt$") then
      local r = judge(name)
      counts[#counts + 1] = string.format("%s %d", name, #r.below)
    end
  end
  table.sort(counts)
  print("# the same judgement of each vector kernel's own row, cells below 0.95x: " .. table.concat(counts, ", "))
end
