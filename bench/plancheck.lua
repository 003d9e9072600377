-- The default judged by C sweeps (build/bench/csweep --json): for every cell
-- from 256 B, the default against the best row of the cell (any kernel, the
-- string instructions, or the C library), that row picked on half the runs
-- and both judged on the other half (medians), and against the C library;
-- beside it, a twin control. No timing is taken here. Two rows are compared
-- round by round (each run's median of their per-round time ratios, csweep's
-- ns; the median over runs), not by GB/s: a stretch of slow rounds (the other
-- core, another tenant) moves every row's time in those rounds alike, but
-- could move one row's median GB/s and not its neighbour's. Nor through
-- their ratios to the C library, which pair each with a third row: where
-- that row's own time has two modes (memmem from 8 KiB on the Zen 5 VM),
-- rows of equal times had medians of 2.4x and 3.1x it in one run
-- (docs/runs/zen5-vm-2026-12-06.md). So the best row is the fastest against
-- the sweep's default row in the same rounds. Sweeps made before csweep gave
-- the rounds' times are paired through those ratios.
--   lua5.4 bench/plancheck.lua SWEEP.json...
-- judges the sweeps' own "default" row (make check-default: this machine);
--   lua5.4 bench/plancheck.lua --dump CPUID.txt [--xcr0 N] [--rep-movsb-as ROW:FROM:TO]
--                              [--rep-stosb-as ROW:FROM:TO] [--rep-stosb-ratio R] SWEEP.json...
-- judges what this avxbuf's policy picks for the machine of that CPUID dump
-- (avxbuf.decide{leaves}.picks), by that machine's own sweeps, with each
-- pick's figures from its kernel's row.
-- A sweep made before the rep_movsb kernel had a row of its own has no
-- figures for it: --rep-movsb-as libc:2112:1048576 reads them from the C
-- library's row where glibc itself ran rep movsb (its rep_movsb_threshold and
-- rep_movsb_stop_threshold there, from ld.so --list-diagnostics); other such
-- cells are counted as unjudged. --rep-stosb-as does the same for rep stosb
-- (glibc 2.36's memset runs it above rep_stosb_threshold, with no end).
--   lua5.4 bench/plancheck.lua --before DEFAULT.json... -- TUNED.json...
-- also compares the default row cell by cell with the one in sweeps made
-- before (make check-default: with avxbuf.tune's settings against without),
-- against the earlier sweeps' own A/A (below, "Before and after").
-- In every mode: the dispatch tax, the sweeps' default row against the row
-- of the kernel it runs in each cell (csweep's default_row), beside the
-- twin control's noise (bench/lib/taxverdict.lua). The exit status is 3
-- where that tax exceeds the noise in more than 5% of the cells, 4 where
-- the cells judged miss the targets (none below 0.85x the best row, at most
-- 5% below 0.95x, at least 95% at 0.98x the C library or above), 5 both;
-- 2 where the sweeps given differ in their cells or rows (load, below).
local cli = dofile "bench/lib/cli.lua"
local cjson = require "cjson"
local avxbuf = require "avxbuf"
local bench = require "harness"
local cpuid_dump = require "cpuid_dump"
local taxverdict = require "taxverdict"

local parser = cli.argparse("plancheck.lua", "the policy's picks for a recorded machine against its sweeps")
parser:option("--dump", "judge the picks for the machine of this CPUID dump (cpuid -r)")
parser:option("--xcr0", "its XCR0", "0xE7")
parser:option("--rep-movsb-as", "ROW:FROM:TO: rep_movsb's figures from this row at sizes FROM <= n < TO")
parser:option("--rep-stosb-as", "ROW:FROM:TO: the same for rep_stosb")
parser:option("--rep-stosb-ratio", "what the policy is told it measured there (decide{}'s rep_stosb_ratio; "
              .. "default: from the sweeps' fill of that size)")
parser:option("--from", "smallest size judged", "256")
parser:option("--row", "judge this row instead of the default (a kernel row judged so shows the floor "
              .. "the machine's noise sets: the best of many noisy rows beats any one of them)", "default")
parser:option("--before", "compare the default row with these sweeps' (made before a change)"):args("+")
parser:argument("sweeps", "csweep --json files from that machine"):args("+")
local args = parser:parse()

-- (decided below, once the sweeps are read: they say what the policy
-- measures on the machine itself)
local decision

-- The row that stands for the default in a cell.
local function picked(op, n)
  if not decision then return args.row end   -- (judge() passes it directly)
  local k
  for _, p in ipairs(decision.picks[op]) do if n >= p.from then k = p.kernel end end
  return k
end

-- Copies a kernel hands to another (avxbuf.kernels()'s skew32: dst - src 32
-- mod 64, more than 8 vectors up to a bound, but for those its loop takes
-- with the loads aligned: up to loads_aligned_upto with dst off a line,
-- forward-safe and not aliasing a page) run that kernel's code, so its row
-- stands for them. In csweep's cells dst - src is 2048 plus the offsets'
-- difference (disjoint, no page aliasing), or the distance modulo 4096
-- where one is given: of those only 32 is skew 32, and it aliases a page.
local skew32 = {}
for _, k in ipairs(avxbuf.kernels()) do
  -- (8 vectors of vector_bits / 8 bytes: vector_bits bytes)
  if k.skew32 then
    skew32[k.name] = { kernel = k.skew32.kernel, from = k.vector_bits + 1, upto = k.skew32.upto,
                       loads_aligned_upto = k.loads_aligned_upto or 0 }
  end
end

-- The rows that time no way of their own, only controls: the default's
-- twin, and the kernel the default runs from a loop one nop longer than a
-- kernel row's (csweep's kernel_nop: how far the call site alone moves it).
local control = { default_twin = true, kernel_nop = true }
-- A vector kernel's own row (not the default's, the C library's, the
-- string instructions', a streaming one or a control).
local function vector_row(name)
  return name ~= "default" and not control[name] and name ~= "libc" and name ~= "rep" and not name:find("_nt$")
end
local function skewed_row(k, c)
  local s = skew32[k]
  if not s or c.op ~= "copy" or c.size < s.from or c.size > s.upto then return nil end
  if c.distance_mod_4096 < 0 and c.dst_offset % 64 ~= 0 and c.size <= s.loads_aligned_upto then return nil end
  local diff = c.distance_mod_4096 >= 0 and c.distance_mod_4096 or c.dst_offset - c.src_offset
  return diff % 64 == 32 and s.kernel or nil
end

-- The row standing for a string kernel in a sweep without a row of its own.
local stands_for = {}
for kernel, opt in pairs { rep_movsb = args.rep_movsb_as, rep_stosb = args.rep_stosb_as } do
  local row, from, to = (opt or ""):match("^([%w_]+):(%d+):(%d+)$")
  assert(row or not opt, "--" .. kernel:gsub("_", "-") .. "-as takes ROW:FROM:TO")
  if row then stands_for[kernel] = { row = row, from = tonumber(from), to = tonumber(to) } end
end

local PICK, JUDGE = 1, 2   -- (the parity of the runs each is taken from: runs_of, below)

-- Cells by key, each row's ratio to the C library over the runs and its
-- rounds' times in each run (ns; nil where the sweep has none), and the
-- row timing the default's kernel in each run (false: none does; nil: the
-- sweep does not say, made before csweep did).
local function load(paths)
  local cells, order = {}, {}
  for run, path in ipairs(paths) do
    for _, c in ipairs(cjson.decode(bench.read_file(path)).cells) do
      local key = string.format("%s %d %d/%d %d", c.op, c.size, c.dst_offset, c.src_offset, c.distance_mod_4096)
      if not cells[key] then
        cells[key] = { cell = c, rows = {}, ns = {}, kernel_rows = {} }
        order[#order + 1] = key
      end
      if c.default_kernel then cells[key].kernel_rows[run] = c.default_row ~= cjson.null and c.default_row end
      for name, r in pairs(c.rows) do
        local t = cells[key].rows[name] or {}
        t[#t + 1] = r.ratio_to_libc
        cells[key].rows[name] = t
        cells[key].ns[name] = cells[key].ns[name] or {}
        cells[key].ns[name][#t] = r.ns
      end
    end
  end
  -- A row's values are its runs in order, which pair with another row's only
  -- where every sweep has every cell and row: sweeps of csweeps with other
  -- rows (kernel_nop came on 2026-12-06) or other --sizes would pair one
  -- run's figures with another's.
  for _, key in ipairs(order) do
    for name, t in pairs(cells[key].rows) do
      if #t ~= #paths then
        io.stderr:write(string.format("plancheck: %s: the %s row is in %d of the %d sweeps; judge sweeps of one "
          .. "csweep, with the same --sizes\n", key, name, #t, #paths))
        os.exit(2)
      end
    end
  end
  return cells, order
end
local cells, order = load(args.sweeps)

-- Row a's speed over row b's in a cell on the runs of that parity: in each
-- run the median of their per-round ratios, then the median over the runs.
local function paired(cell, a, b, parity)
  local ra, rb, na, nb = cell.rows[a], cell.rows[b], cell.ns[a], cell.ns[b]
  local t = {}
  for run = #ra < 2 and 1 or parity, #ra, #ra < 2 and 1 or 2 do
    local ta, tb = na[run], nb[run]
    if ta and tb then
      local q = {}
      for i = 1, #ta do q[i] = tb[i] / ta[i] end
      t[#t + 1] = bench.median(q)
    else
      t[#t + 1] = ra[run] / rb[run]
    end
  end
  return bench.median(t)
end

-- What avxbuf measures on a machine before it fills 4 times the L2 or more
-- (decide{}'s rep_stosb_ratio): here from the recording's own fill of that
-- size, rep stosb's time over the vector kernel's on the pick runs.
local function stosb_ratio(d)
  if args.rep_stosb_ratio then return tonumber(args.rep_stosb_ratio) end
  local size = d.rep_stosb_probe_size
  local cell = size > 0 and cells[string.format("fill %d 0/0 -1", size)]
  if not cell then return nil end
  local vector
  for _, p in ipairs(d.picks.fill) do if size >= p.from then vector = p.kernel end end
  local as = stands_for.rep_stosb
  local rep = cell.rows.rep and "rep" or as and size >= as.from and size < as.to and cell.rows[as.row] and as.row
  if not (rep and cell.rows[vector]) then return nil end
  return paired(cell, vector, rep, PICK)
end
if args.dump then
  local machine = { leaves = cpuid_dump(bench.read_file(args.dump)), xcr0 = math.tointeger(tonumber(args.xcr0)) }
  machine.rep_stosb_ratio = stosb_ratio(avxbuf.decide(machine))
  decision = avxbuf.decide(machine)
end

-- Held out: each cell's best row is picked on the odd runs and judged, with
-- the row under test, on the even ones. (The best of a dozen noisy rows'
-- medians, judged on the runs it was picked on, is biased upwards: the
-- winner's curse, which had two identical kernels fail each other.) With
-- one run, both are that run.
local function runs_of(v, parity)
  if #v < 2 then return v end
  local t = {}
  for k = parity, #v, 2 do t[#t + 1] = v[k] end
  return t
end

-- Judges the row that stands for `who` (a row name, or nil: the picks) in
-- every cell: the best of the other rows (the sweep's default row is a plan
-- dispatching to those same kernels, not a candidate) against it.
local function judge(who)
  local r = { judged = 0, below = {}, below_libc = 0, unjudged = 0, was_below = 0, below_90 = 0, below_85 = 0,
              ratios = {}, small = 0, small_libc = 0, small_below = {} }
  for _, key in ipairs(order) do
    local c, rows = cells[key].cell, cells[key].rows
    if c.size >= tonumber(args.from) then
      local med, best_name, picked_best = {}, nil, 0
      for name, v in pairs(rows) do
        med[name] = bench.median(runs_of(v, JUDGE))
        local on_pick = paired(cells[key], name, rows.default and "default" or "libc", PICK)
        -- (a tie, as between rows that run the same code, goes to the first name in
        -- order, not to whichever pairs() visits first: the same sweeps, the same judgement)
        if name ~= "default" and not control[name] and name ~= who
           and (on_pick > picked_best or on_pick == picked_best and best_name and name < best_name) then
          picked_best, best_name = on_pick, name
        end
      end
      local k = who or picked(c.op, c.size)
      local row = k
      if (k == "rep_movsb" or k == "rep_stosb") and med.rep then row = "rep" end   -- the sweep's row for both
      local as = stands_for[k]
      if as and c.size >= as.from and c.size < as.to then row = as.row end
      if not who then row = skewed_row(k, c) or row end
      if not med[row] then
        r.unjudged = r.unjudged + 1
      else
        r.judged = r.judged + 1
        local ratio = paired(cells[key], row, best_name, JUDGE)
        r.ratios[#r.ratios + 1] = ratio
        if ratio < 0.95 then r.below[#r.below + 1] = { key = key, kernel = k, ratio = ratio, best = best_name } end
        if ratio < 0.90 then r.below_90 = r.below_90 + 1 end
        if ratio < 0.85 then r.below_85 = r.below_85 + 1 end
        if med[row] < 0.98 then r.below_libc = r.below_libc + 1 end   -- libc's own ratio is 1
        if c.size <= 2048 and c.op ~= "find" then   -- the issue's 256 B-2 KiB copies, zero and fill
          r.small = r.small + 1
          if med[row] >= 0.98 then r.small_libc = r.small_libc + 1
          else r.small_below[#r.small_below + 1] = string.format("%s %.2fx", key, med[row]) end
        end
        if med.default and paired(cells[key], "default", best_name, JUDGE) < 0.95 then r.was_below = r.was_below + 1 end
      end
    end
  end
  return r
end

local nruns = #args.sweeps
local res = judge(not decision and args.row or nil)
local judged, below, below_libc, unjudged, was_below, below_85 =
  res.judged, res.below, res.below_libc, res.unjudged, res.was_below, res.below_85
print(string.format("# %d runs: each cell's best row picked on runs %s, judged on runs %s", nruns,
  nruns < 2 and "1" or (nruns == 2 and "1" or "1, 3, ..."), nruns < 2 and "1 (the same: biased)" or
  (nruns == 2 and "2" or "2, 4, ...")))

if decision then
  print(string.format("# %s\n# picks for that CPU (%s):", decision.reason, decision.thresholds_source or ""))
  if decision.rep_stosb_probe_size > 0 then
    print(string.format("# rep stosb at %d bytes: %s (rep_stosb_ratio %s)", decision.rep_stosb_probe_size,
                        decision.rep_stosb_beyond_l2, args.rep_stosb_ratio or "from the pick runs"))
  end
  for _, op in ipairs { "copy", "zero", "fill", "find" } do
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
print(string.format("cells from %s B: %d judged%s; below 0.85x the best row: %d; below 0.95x: %d (%.1f%%); "
  .. "at or above 0.98x the C library: %d (%.1f%%)%s", args.from, judged,
  unjudged > 0 and string.format(", %d unjudged (no row for the kernel picked)", unjudged) or "",
  below_85, #below, 100 * #below / n, judged - below_libc, 100 * (judged - below_libc) / n,
  decision and string.format("; the sweeps' own default row: %d below 0.95x", was_below) or ""))
print(string.format("copies, zero and fill of %s B-2 KiB at or above 0.98x the C library: %d of %d%s",
                    args.from, res.small_libc, res.small,
                    #res.small_below > 0 and " (below: " .. table.concat(res.small_below, ", ") .. ")" or ""))
-- Which of the three targets fail, each with its figure.
local missed = {}
if below_85 > 0 then missed[#missed + 1] = string.format("%d cells below 0.85x, where none may be", below_85) end
if #below > 0.05 * judged then
  missed[#missed + 1] = string.format("%d cells below 0.95x (%.1f%%), where at most 5%% may be", #below,
                                      100 * #below / n)
end
if judged - below_libc < 0.95 * judged then
  missed[#missed + 1] = string.format("%.1f%% of cells at 0.98x the C library or above, where at least 95%% must be",
                                      100 * (judged - below_libc) / n)
end
local met = #missed == 0
print(string.format("target (none below 0.85x, at most 5%% below 0.95x, at least 95%% at 0.98x libc or above): %s",
                    met and "met" or "not met: " .. table.concat(missed, "; ")))

-- The twin controls: two rows of identical code judged against each other
-- as the default is: the floor this run's noise and code placement set.
-- The kernels' twin: the avx and avx2 copies, the same instructions; the
-- default's: its dispatch reading a copy of the plan that lies elsewhere
-- (csweep's default_twin row), in every cell.
local function twin_ratios(a, b, copies_only, runs)
  local twins = {}
  for _, key in ipairs(order) do
    local c, rows = cells[key].cell, cells[key].rows
    if (c.op == "copy" or not copies_only) and c.size >= tonumber(args.from) and rows[a] and rows[b] then
      twins[#twins + 1] = paired(cells[key], a, b, runs)
    end
  end
  table.sort(twins)
  return twins
end
-- Each also counted by the plan targets' marks, on either side: a plan's
-- row is judged against another row, and where identical code already
-- strays past 0.85x, or past 0.95x in more than 5% of its cells on one
-- side, these runs cannot tell a plan's cell past that mark from noise.
local function twin_control(a, b, copies_only, label)
  local twins = twin_ratios(a, b, copies_only, JUDGE)
  if #twins == 0 then return end
  local within, c = 0, { lo85 = 0, hi85 = 0, lo95 = 0, hi95 = 0 }
  for _, t in ipairs(twins) do
    if t >= 0.95 and t <= 1.05 then within = within + 1 end
    if t < 0.85 then c.lo85 = c.lo85 + 1 elseif t > 1 / 0.85 then c.hi85 = c.hi85 + 1 end
    if t < 0.95 then c.lo95 = c.lo95 + 1 elseif t > 1 / 0.95 then c.hi95 = c.hi95 + 1 end
  end
  local strays = c.lo85 + c.hi85 > 0 or math.max(c.lo95, c.hi95) > 0.05 * #twins
  print(string.format("# %s, on the judged runs: %d cells, 5th-95th percentile %.2f-%.2f, within +-5%%: %d (%.1f%%); "
    .. "below 0.85x / above 1/0.85x: %d / %d, below 0.95x / above 1/0.95x: %d / %d (%.1f%% / %.1f%%)%s", label,
    #twins, bench.quantile(twins, 0.05), bench.quantile(twins, 0.95), within, 100 * within / #twins, c.lo85, c.hi85,
    c.lo95, c.hi95, 100 * c.lo95 / #twins, 100 * c.hi95 / #twins,
    strays and ": identical code strays past the targets' marks, so these runs cannot resolve them" or ""))
end
twin_control("avx2", "avx", true, "twin control (avx2 copy / avx copy, identical code)")
twin_control("default_twin", "default", false, "the default's twin (its code, its plan elsewhere) / the default")

-- The dispatch tax: in each cell the default's ratio to the C library over
-- that of the row calling the kernel the default runs there, from a loop
-- of its own (the same function: what differs is the dispatch and where it
-- reads the plan, which cost the default a fifth at 4 KiB copies on the Zen
-- 5 VM: issue 46). Judged on the judged runs; the noise band set by the
-- kernels' twin on the pick runs (bench/lib/taxverdict.lua). A cell is
-- judged where every run names the same row for the default's kernel.
local function tax_readout()
  local taxes, lacking, no_row = {}, nil, 0
  for _, key in ipairs(order) do
    local c, rows, kr = cells[key].cell, cells[key].rows, cells[key].kernel_rows
    if c.size >= tonumber(args.from) then
      local row = kr[1]
      for run = 1, nruns do
        if kr[run] == nil then lacking = "the kernel the default runs in each cell (csweep's default_kernel)" end
        if kr[run] ~= row then row = false end
      end
      if not rows.default then lacking = "the default row" end
      if row and rows[row] then
        taxes[#taxes + 1] = { key = key, row = row, ratio = paired(cells[key], "default", row, JUDGE) }
      else
        no_row = no_row + 1
      end
    end
  end
  if lacking then
    print("no tax readout: the recording lacks " .. lacking)
    return true
  end
  local twins = twin_ratios("avx2", "avx", true, PICK)
  if #twins == 0 or #taxes == 0 then
    print("no tax readout: " .. (#taxes == 0 and "no row runs the default's kernel in any cell"
                                 or "the recording lacks a twin control (the avx and avx2 rows)"))
    return true
  end
  local v = taxverdict.decide(taxes, twins)
  -- The kernel_nop control in each cell: the same kernel from a loop one nop
  -- longer than its row's, against that row (nil where the sweep has none).
  local shifts = {}
  for _, t in ipairs(taxes) do
    t.nop = cells[t.key].rows.kernel_nop and paired(cells[t.key], "kernel_nop", t.row, JUDGE)
    shifts[#shifts + 1] = t.nop
  end
  local as_far = 0
  for _, b in ipairs(v.beyond) do
    local twin, nop = cells[b.key].rows.default_twin, b.nop
    if nop and taxverdict.as_far(b.ratio, nop, v.floor) then as_far = as_far + 1 end
    print(string.format("%-28s default %.2fx the %s row, the kernel it runs%s%s", b.key, b.ratio, b.row,
      twin and string.format(" (the default's twin there: %.2fx the default)",
                             paired(cells[b.key], "default_twin", "default", JUDGE)) or "",
      nop and string.format("; the kernel from a loop one nop longer: %.2fx its row", nop) or ""))
  end
  local sorted = {}
  for i, t in ipairs(taxes) do sorted[i] = t.ratio end
  table.sort(sorted)
  print(string.format("dispatch tax (the default / the row of the kernel it runs, judged runs): %d cells%s, "
    .. "5th-95th percentile %.2f-%.2f; the noise (95%% of the kernels' twin on the pick runs within %.3f-%.3f): "
    .. "%d cells below %.3fx (%.1f%%)", #taxes,
    no_row > 0 and string.format(", %d unjudged (no row runs the default's kernel, or the runs differ)", no_row)
    or "", bench.quantile(sorted, 0.05), bench.quantile(sorted, 0.95), v.floor, 1 / v.floor, #v.beyond, v.floor,
    100 * #v.beyond / #taxes))
  if #shifts == #taxes then
    table.sort(shifts)
    print(string.format("the call site alone (the kernel from a loop one nop longer / its row, judged runs): "
      .. "5th-95th percentile %.2f-%.2f; of the %d cells beyond the noise, %d where it slowed as far as the default "
      .. "(less the noise)",
      bench.quantile(shifts, 0.05), bench.quantile(shifts, 0.95), #v.beyond, as_far))
  end
  print(string.format("target (the tax within the twin's noise in at least 95%% of cells): %s",
                      v.met and "met" or "not met"))
  return v.met
end
local tax_met = tax_readout()

-- The floor the noise sets: each kernel row judged the same way (the best
-- of a dozen noisy rows beats any one of them in many cells).
if not decision then
  local counts = {}
  for name in pairs(cells[order[1]].rows) do
    if vector_row(name) or name == "default_twin" then
      local r = judge(name)
      counts[#counts + 1] = string.format("%s %d", name, #r.below)
    end
  end
  table.sort(counts)
  print("# the same judgement of each vector kernel's own row, cells below 0.95x: " .. table.concat(counts, ", "))
end

-- Before and after: in each cell, the default row's median over these
-- sweeps against its median over the sweeps before, taken relative to the
-- median change of the vector kernels' rows there (their code is the same
-- in both sets: what moves them is the machine, which moves the default
-- alike). A cell is worse where the default's relative change is below
-- 0.95x and below each of those rows' own there. The same comparison
-- between the before sweeps' odd and even runs (the same settings: an A/A)
-- counts the cells that noise alone makes worse so; the change passes when
-- it makes no more, none by more than the A/A's worst.
local function worse_cells(after, before, keys)
  local function change(key, name)
    local a, b = after[key] and after[key].rows[name], before[key] and before[key].rows[name]
    return a and b and bench.median(a) / bench.median(b)
  end
  local worse = {}
  for _, key in ipairs(keys) do
    if after[key] and after[key].cell.size >= tonumber(args.from) then
      local unchanged = {}
      for name in pairs(after[key].rows) do
        if vector_row(name) then
          unchanged[#unchanged + 1] = change(key, name)
        end
      end
      local d = #unchanged > 0 and change(key, "default")
      if d then
        local drift, lowest = bench.median(unchanged), math.huge
        for _, v in ipairs(unchanged) do lowest = math.min(lowest, v) end
        if d / drift < 0.95 and d < lowest then worse[#worse + 1] = { key = key, ratio = d / drift } end
      end
    end
  end
  table.sort(worse, function(a, b) return a.ratio < b.ratio end)
  return worse
end

if args.before then
  local before = load(args.before)
  local worse = worse_cells(cells, before, order)
  for _, w in ipairs(worse) do print(string.format("%-28s default %.2fx of before (relative)", w.key, w.ratio)) end
  local odd, even = {}, {}
  for i, path in ipairs(args.before) do table.insert(i % 2 == 1 and odd or even, path) end
  local aa = #even > 0 and worse_cells(load(even), load(odd), order) or {}
  local function worst(t) return t[1] and string.format("%.2fx", t[1].ratio) or "none" end
  print(string.format("default against before (%d runs against %d; each cell relative to the vector kernels' "
    .. "median change there): %d cells worse (below 0.95x and below each of those rows), the worst %s; "
    .. "the before runs' A/A (even against odd): %d, the worst %s", #args.sweeps, #args.before, #worse,
    worst(worse), #aa, worst(aa)))
  print(string.format("target (no cell worse beyond what the A/A shows): %s",
                      #worse <= #aa and (not worse[1] or worse[1].ratio >= aa[1].ratio) and "met" or "not met"))
end

-- make check-default tells these failures from an error (status 1): 3 the
-- tax exceeds the noise, 4 the cells miss the targets above, 5 both.
if not tax_met or not met then os.exit(met and 3 or tax_met and 4 or 5) end
