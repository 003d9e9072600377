-- What does each vector width cost a Lua program on this machine, and is the
-- core being downclocked? Runs the xml.transform analog (bench/lib/transform.lua)
-- once per configuration row, with licence counters and the core's clock
-- (counters where they exist, and the probe, read through each row's work).
-- Rows are measured in interleaved rounds and compared with the first one,
-- each with a 95% confidence interval (lua/avxbuf/stats.lua says how).
-- lua5.4 bench/transform.lua [--quick] [--rounds N] [--seconds S] [--warmup N]
--                           [--rows "knobs;knobs"] [--pin CPU|none] [--clock cpu|wall] [--json FILE]
--                           [--settle MS]
local cli = dofile "bench/lib/cli.lua"
local avxbuf = require "avxbuf"
local counters = require "avxbuf.counters"
local bench = require "harness"
local transform = require "transform"
local stats = require "avxbuf.stats"
local licence = require "avxbuf.licence"
local clockverdict = require "clockverdict"
local seed = require "seed"

local parser = cli.argparse("transform.lua", "xml.transform analog: throughput per vector width, with licence counters")
parser:option("--rounds", "measured rounds (every row once per round); default 15, 10 with --quick")
parser:option("--seconds", "measure for at least this long per row", "0")
parser:option("--warmup", "unmeasured iterations per row", "2")
parser:option("--settle", "ms of scalar work (and a full GC) before each row's document, untimed", "2")
parser:option("--rows", 'custom rows as knob strings, e.g. "use_avx=2;use_avx=3 max_vector_size=32"')
cli.pin_option(parser)
parser:option("--clock", "time by process CPU time (cpu) or elapsed time (wall)", "cpu"):choices { "cpu", "wall" }
parser:option("--json", "write the results to this file")
parser:flag("--quick", "small documents and 10 rounds: all rows in about 30 s")
local args = parser:parse()

local ROWS = {
  "default", "use_avx=2", "use_avx=3 max_vector_size=64", "use_avx=3 max_vector_size=32",
  "use_avx=3 vector_zeroing=false", "use_avx=0", "kernel=libc",
}

-- "k=v k=v" -> knobs table; values are numbers, booleans or words.
local function knobs_of(spec)
  local t = {}
  if spec == "default" then return t end
  for k, v in spec:gmatch("([%w_]+)=(%S+)") do
    if v == "true" or v == "false" then t[k] = v == "true"
    elseif math.tointeger(tonumber(v)) then t[k] = math.tointeger(tonumber(v))
    else t[k] = v end
  end
  if next(t) == nil then error("row '" .. spec .. "' sets no knob (expected name=value ...)", 0) end
  return t
end

local cpu = avxbuf.cpu()

-- Why a row cannot run here, or nil.
local function skip_reason(knobs)
  local want = knobs.use_avx or 0
  if want <= cpu.max_use_avx then return nil end
  local f = cpu.features
  if want == 3 then
    if not f.avx512f then return "needs AVX-512F/BW/VL; this CPU has none" end
    if not (f.avx512bw and f.avx512vl) then return "needs AVX-512F/BW/VL; this CPU has AVX-512F without BW/VL" end
    return string.format("needs AVX-512 state enabled by the OS; XCR0 is 0x%X", cpu.xcr0)
  end
  return string.format("needs use_avx=%d; this CPU and OS allow %d", want, cpu.max_use_avx)
end

-- One CPU, so that the process, its counters and its licence stay together.
local pin_cpu = cli.pin(parser, args.pin)

-- Licence events are asked for on every CPU: where they do not exist, they
-- come back unavailable with the reason, like any other event.
local LICENCE_COLUMNS = { "core_power.lvl0_turbo_license", "core_power.lvl1_turbo_license",
                          "core_power.lvl2_turbo_license", "core_power.throttle" }
local EVENT_NAMES = { "cycles", "ref-cycles", "instructions", "task-clock" }
for _, name in ipairs(LICENCE_COLUMNS) do EVENT_NAMES[#EVENT_NAMES + 1] = name end

-- The TSC's rate, for cycles/ref-cycles and APERF/MPERF -> GHz.
local function tsc_ghz()
  local t0, c0 = counters.tsc(), counters.clock()
  repeat until counters.clock() - c0 >= 0.05
  local t1, c1 = counters.tsc(), counters.clock()
  if not t0 then return nil end
  return (t1 - t0) / (c1 - c0) / 1e9
end

local function aperf_mperf()
  local a, why = counters.msr(pin_cpu or 0, 0xE8)
  if not a then return nil, why end
  local m, why2 = counters.msr(pin_cpu or 0, 0xE7)
  if not m then return nil, why2 end
  return { a, m }
end

-- A clock reading: the best of PROBE_WINDOWS windows of PROBE_ADDS adds
-- (and of imuls as long), ~50 us at 3.5 GHz, well inside the ~650 us a
-- lower licence is held after the last wide instruction, so that an
-- interrupt in one window does not sink it.
local PROBE_ADDS, PROBE_WINDOWS = 16000, 5

-- Where the clock comes from, best first.
local SOURCES = { "cycles/ref-cycles", "APERF/MPERF", "probe" }

local docs = transform.documents(args.quick)
local doc_bytes = 0
for _, d in ipairs(docs) do doc_bytes = doc_bytes + #d.xml end
local min_rounds = tonumber(args.rounds) or (args.quick and 10 or 15)
local seconds = tonumber(args.seconds)
local warmup = args.quick and 1 or tonumber(args.warmup)

print(string.format("# %s (%s): %s", cpu.brand, cpu.uarch, cpu.reason))
print(string.format("# workload: %d documents (%d shapes, %.0f KB), %d templates; op = all of them; "
  .. "score = ops/min by %s time, median of %d or more rounds, the rows taking turns document by document%s", #docs,
  #transform.SHAPE_NAMES, doc_bytes / 1024, transform.TEMPLATE_COUNT, args.clock, min_rounds,
  pin_cpu and string.format("; pinned to CPU %d", pin_cpu) or ""))

-- The reference checksum, from the pure-Lua path, before any timing.
local ref_crc, ref_bytes = transform.reference(docs)
print(string.format("# reference (pure Lua): checksum %08x over %d output bytes", ref_crc, ref_bytes))

-- Counter availability, said once.
local ok, why = counters.available()
print("# hardware counters: " .. (ok and "available" or ("unavailable: " .. why)))
local ghz = tsc_ghz()
print(string.format("# TSC: %s", ghz and string.format("%.3f GHz", ghz) or "unavailable"))
local am, am_why = aperf_mperf()
print("# APERF/MPERF: " .. (am and "readable" or ("unavailable: " .. am_why)))
local probe_ghz, probe = licence.selfcheck(avxbuf)
local probe_text = probe_ghz and string.format("# probe: GHz from a dependent-add chain timed by the TSC, read "
  .. "after each document of each row's work; its self-check (an imul chain) read %.4f of it before the run%s",
  probe.ratio, probe.agree and "" or ", OUTSIDE 2%: the probe's readings are not to be trusted")
  or ("# probe: unavailable: " .. probe)

-- A probe reading after a row's document (0 where the probe gave none),
-- and the seconds each took.
local reading_secs = {}
local function read_clock()
  local t0 = counters.clock()
  local v = avxbuf.coreclock(PROBE_ADDS, PROBE_WINDOWS) or 0
  reading_secs[#reading_secs + 1] = counters.clock() - t0
  return v
end

local row_specs = {}
if args.rows then
  for spec in args.rows:gmatch("[^;]+") do row_specs[#row_specs + 1] = spec:match("^%s*(.-)%s*$") end
else
  row_specs = ROWS
end

local results = { cpu = cpu, workload = { documents = #docs, bytes = doc_bytes, templates = transform.TEMPLATE_COUNT },
                  reference_checksum = string.format("%08x", ref_crc), rows = {} }
local reported = {}

local function fmt_count(v)
  if v == nil then return "n/a" end
  if v >= 1e9 then return string.format("%.2fe9", v / 1e9) end
  if v >= 1e6 then return string.format("%.1fe6", v / 1e6) end
  return tostring(v)
end

-- Prepare every runnable row: settings, checksum verified once, warm-up.
local rows = {}
for _, spec in ipairs(row_specs) do
  local knobs = knobs_of(spec)
  local row = { name = spec, settings = knobs }
  results.rows[#results.rows + 1] = row
  row.skipped = skip_reason(knobs)
  if not row.skipped then
    avxbuf.reset()
    row.settings = avxbuf.configure(knobs)
    row.kernels = { copy_1KiB = avxbuf.kernel("copy", 1024), zero_64KiB = avxbuf.kernel("zero", 65536) }
    row.knobs = knobs
    row.op, row.document = transform.with_avxbuf(avxbuf, docs)
    local crc = row.op()
    row.checksum = string.format("%08x", crc)
    if crc ~= ref_crc then
      error(string.format("row %s: checksum %08x differs from the reference %08x", spec, crc, ref_crc))
    end
    for _ = 1, warmup do row.op() end
    row.wall, row.cpu, row.counters, row.time_enabled, row.time_running = {}, {}, {}, 0, 0
    row.clock_rounds, row.clock_readings, row.reading_seconds = {}, {}, 0
    row.document_wall, row.document_cpu = {}, {}
    for _, source in ipairs(SOURCES) do row.clock_rounds[source], row.clock_readings[source] = {}, {} end
    row.probe_readings = row.clock_readings.probe
    row.group = counters.open(EVENT_NAMES)
    rows[#rows + 1] = row
  end
end

-- Measure: rounds of blocks, one block per document, in which every row
-- runs that document and reads its clock right after it; each row's
-- reading is compared with the first row's of the same block, a few
-- documents away in time. The host's clock, which moves within tens of ms
-- on a shared VM (docs/clock.md), then moves both readings of most pairs
-- alike, and the drift of the machine over a round hits every row's time
-- alike. Where a row stands in its block matters: the first to run a
-- document ran 4% slower (median) than the rows after it on the Zen 5 VM,
-- which repeat it warm. So every row holds every slot equally often, and
-- no row always follows the same one (transform.block_orders).
-- Before each row's document: its settings, a full GC (so that no row
-- pays another's collection debt) and at least --settle ms of scalar work
-- since the last document ended (a lower licence is held ~650 us after
-- the last wide instruction on Skylake-SP: the next row should not start
-- under it; a host that holds it longer needs more); none of that is
-- timed.
local SETTLE = (tonumber(args.settle) or parser:error("--settle takes a number of ms")) / 1e3
local function accumulate(row, c)
  for name, e in pairs(c.events) do
    local acc = row.counters[name] or {}
    if e.value then acc.value = (acc.value or 0) + e.value else acc.unavailable = e.unavailable end
    row.counters[name] = acc
  end
  row.time_enabled = row.time_enabled + (c.time_enabled or 0)
  row.time_running = row.time_running + (c.time_running or 0)
  row.multiplexed = row.multiplexed or c.multiplexed
end

local block_order = transform.block_orders(#rows, 47)

-- One row's document j in round k: its time, and every source's clock.
local last_end = counters.clock()
local function run_document(row, j, k)
  avxbuf.reset()
  avxbuf.configure(row.settings)
  collectgarbage("collect")
  repeat until counters.clock() - last_end >= SETTLE
  local am0 = aperf_mperf()
  local first = #reading_secs
  row.group:start()
  local c0, t0 = os.clock(), counters.clock()
  row.crc, row.bytes = row.document(j, row.crc, row.bytes)
  local probe_reading = probe_ghz and read_clock()   -- timed with the work (its share is printed)
  local dt, dc = counters.clock() - t0, os.clock() - c0
  local c = row.group:stop()
  local am1 = aperf_mperf()
  last_end = counters.clock()
  accumulate(row, c)
  row.wall[k], row.cpu[k] = row.wall[k] + dt, row.cpu[k] + dc
  row.document_wall[k][j], row.document_cpu[k][j] = dt, dc
  for i = first + 1, #reading_secs do row.reading_seconds = row.reading_seconds + reading_secs[i] end
  -- every source's clock over this document, 0 where it gave none
  local cy, ref = c.events.cycles and c.events.cycles.value, c.events["ref-cycles"] and c.events["ref-cycles"].value
  local r = row.clock_readings
  r["cycles/ref-cycles"][k][j] = cy and ref and ref > 0 and ghz and cy / ref * ghz or 0
  r["APERF/MPERF"][k][j] = am0 and am1 and am1[2] > am0[2] and ghz and (am1[1] - am0[1]) / (am1[2] - am0[2]) * ghz
                           or 0
  r.probe[k][j] = probe_reading or 0
end

local started, blocks, block_slots = counters.clock(), 0, {}
while #rows > 0 do
  local k = #rows[1].wall + 1
  for _, row in ipairs(rows) do
    row.wall[k], row.cpu[k], row.crc, row.bytes = 0, 0, 0, 0
    row.document_wall[k], row.document_cpu[k] = {}, {}
    for _, source in ipairs(SOURCES) do row.clock_readings[source][k] = {} end
  end
  for j = 1, #docs do
    blocks = blocks + 1
    local order = block_order(blocks)
    for _, i in ipairs(order) do run_document(rows[i], j, k) end
    block_slots[blocks] = order
  end
  for _, row in ipairs(rows) do
    if row.crc ~= ref_crc then
      error(string.format("row %s, round %d: checksum %08x differs from the reference %08x", row.name, k, row.crc,
                          ref_crc))
    end
    -- a round's clock by each source: the median of its readings
    for _, source in ipairs(SOURCES) do
      row.clock_rounds[source][k] = clockverdict.median(row.clock_readings[source][k])
    end
  end
  if k >= min_rounds and counters.clock() - started >= seconds * #rows then break end
end
local measured = counters.clock() - started

-- Each row against the first, round by round; the noise of the run is the
-- spread of those per-round log ratios, and the smallest effect it could
-- have detected is the widest half-width of their intervals.
local base = rows[1]
local spreads, half_widths = {}, {}
for i, row in ipairs(rows) do
  row.times = row[args.clock]
  if i > 1 then
    local r = stats.ratio(base.times, row.times)
    row.ratio, row.ci, row.significant = r.ratio, r.ci, r.significant
    local d = {}
    for k = 1, #row.times do d[k] = math.log(row.times[k] / base.times[k]) end
    spreads[#spreads + 1] = stats.robust_sd(d)
    half_widths[#half_widths + 1] = r.ci and math.max(r.ci[2] / r.ratio, r.ratio / r.ci[1]) - 1 or math.huge
  end
end
-- Every source that gave each row a clock, with its verdict on the rows
-- (bench/lib/clockverdict.lua); the best of them is the GHz column's.
local clock = { verdicts = {} }
for _, source in ipairs(SOURCES) do
  local read = #rows > 0
  for _, row in ipairs(rows) do read = read and clockverdict.median(row.clock_rounds[source]) > 0 end
  if read then
    clock.source = clock.source or source
    local vrows = {}
    for i, row in ipairs(rows) do
      vrows[i] = { name = row.name, rounds = row.clock_rounds[source], readings = row.clock_readings[source] }
    end
    clock.verdicts[source] = clockverdict.decide(vrows)
  end
end
for i, row in ipairs(rows) do
  row.clock = { source = clock.source, sources = {} }
  for source, v in pairs(clock.verdicts) do
    local r = v.rows[i] or {}
    row.clock.sources[source] = { ghz = clockverdict.median(row.clock_rounds[source]), ratio = r.ratio, ci = r.ci,
                                  drop = r.drop }
  end
  for key, value in pairs(row.clock.sources[clock.source] or {}) do row.clock[key] = value end
end
for _, v in pairs(clock.verdicts) do v.rows = nil end   -- each row has its own
results.clock = clock
if #spreads > 0 then
  local detectable = math.max(table.unpack(half_widths))
  results.noise = { per_round_sd = bench.median(spreads), detectable = detectable < math.huge and detectable or nil }
  print(string.format("# noise: per-round ratios spread by +-%.1f%% (robust sd); %s", 100 * results.noise.per_round_sd,
    detectable < math.huge and string.format("effects under %.1f%% could not be told from it in this run",
                                             100 * detectable)
      or "too few rounds for any interval (at least 6 are needed)"))
end

-- How the rows took turns, and what the untimed work between them cost.
if #rows > 0 then
  local timed = 0
  for _, row in ipairs(rows) do
    for _, t in ipairs(row.wall) do timed = timed + t end
  end
  results.layout = { blocks_per_round = #docs, settle = SETTLE, seconds = measured, timed_seconds = timed,
                     order = block_slots }
  print(string.format("# turns: each round a block per document, every row running it in turn, each row in each "
    .. "slot once every %d blocks; before each, a full GC and >= %g ms since the last (untimed): the rows' timed work "
    .. "was %.1f s of %.1f s", #rows, 1e3 * SETTLE, timed, measured))
end

-- What the readings cost: the share of the rows' time they took.
if probe_ghz and #rows > 0 then
  local wall, secs = 0, 0
  for _, row in ipairs(rows) do
    for _, t in ipairs(row.wall) do wall = wall + t end
    secs = secs + row.reading_seconds
  end
  clock.readings = { per_round = #docs, adds = PROBE_ADDS, windows = PROBE_WINDOWS,
                     seconds = bench.median(reading_secs), share = secs / wall }
  print(string.format("# clock readings: %d per row per round, one after each document, each compared with the first "
    .. "row's of the same block; each the best of %d windows "
    .. "of %d adds and %d of imuls as long, %.0f us for all of them (median); the readings took %.2f%% of the rows' "
    .. "time, which includes them", #docs, PROBE_WINDOWS, PROBE_ADDS, PROBE_WINDOWS,
    1e6 * clock.readings.seconds, 100 * clock.readings.share))
end

-- The probe beside the counters, as the second way, where they exist.
local second = clock.source ~= "probe" and clock.verdicts.probe and "probe" or nil
print(string.format("\n%-32s %9s %15s %7s %15s  %-12s %9s %6s %-17s %6s %15s  %s", "row", "ops/min", "min-max",
                    "ratio", "95% CI", "difference", "checksum", "GHz", "(source)", second and "probe" or "",
                    "clock 95% CI", "lvl0 / lvl1 / lvl2 / throttle"))
for _, row in ipairs(results.rows) do
  if row.skipped then
    print(string.format("%-32s skipped: %s", row.name, row.skipped))
  else
    row.group:close()
    row.group, row.op, row.document, row.crc, row.bytes = nil, nil, nil, nil, nil
    local sorted = {}
    for i, t in ipairs(row.times) do sorted[i] = 60 / t end
    table.sort(sorted)
    row.scores = sorted
    row.score = bench.median(sorted)
    local lic = {}
    for _, name in ipairs(LICENCE_COLUMNS) do
      local e = row.counters[name]
      lic[#lic + 1] = e.value and fmt_count(e.value) or "n/a"
    end
    -- a ratio of times: above 1 the row is slower than the first
    local verdict = not row.ratio and "(baseline)"
      or not row.significant and "none found"
      or row.ratio > 1 and "slower" or "faster"
    print(string.format("%-32s %9.1f %15s %7s %15s  %-12s %9s %6s %-17s %6s %15s  %s%s", row.name, row.score,
      string.format("%.1f-%.1f", sorted[1], sorted[#sorted]),
      row.ratio and string.format("%.3f", row.ratio) or "1",
      row.ci and string.format("%.3f-%.3f", row.ci[1], row.ci[2]) or "-", verdict,
      row.checksum, row.clock.ghz and string.format("%.2f", row.clock.ghz) or "n/a",
      "(" .. (row.clock.source or "none here") .. ")",
      second and string.format("%.2f", row.clock.sources.probe.ghz) or "",
      row.clock.ci and string.format("%.3f-%.3f", row.clock.ci[1], row.clock.ci[2])
        or (row == base and row.clock.ghz and "(baseline)") or "-",
      table.concat(lic, " / "), row.multiplexed and "  (multiplexed: estimates)" or ""))
    for name, e in pairs(row.counters) do
      if e.unavailable and not reported[name] then reported[name] = e.unavailable end
    end
  end
end
avxbuf.reset()

-- Each unavailable event once, with its reason.
local names = {}
for name in pairs(reported) do names[#names + 1] = name end
table.sort(names)
print(probe_text)
-- The rows' probe against an independent reading: coreclock() with its
-- warm-up and longer windows, after the run.
if clock.verdicts.probe then
  local gs = {}
  for i, row in ipairs(rows) do gs[i] = row.clock.sources.probe.ghz end
  local now = avxbuf.coreclock()
  clock.independent = { before = probe_ghz, after = now, rows = bench.median(gs) }
  print(string.format("# probe: the rows' median %.3f GHz; coreclock() (1 ms warm-up, best of 5 windows of 96000 "
    .. "adds) %.3f GHz before the run, %s after (%+.1f%%)", clock.independent.rows, probe_ghz,
    now and string.format("%.3f", now) or "n/a", now and 100 * (clock.independent.rows / now - 1) or 0))
end
if #names > 0 then
  print("\n# unavailable counters (shown as n/a above):")
  for _, name in ipairs(names) do print(string.format("#   %-30s %s", name, reported[name])) end
end

local found = false
for _, row in ipairs(rows) do found = found or row.significant end
if #rows > 1 and not found then
  print("\n# no difference this machine can detect: every interval contains 1")
end
print("# ratio: time of the row / time of the first row, Hodges-Lehmann over paired rounds; "
      .. "95% CI by the Wilcoxon signed-rank test (lua/avxbuf/stats.lua)")

-- The seed report's settings beside the rows that stand for them
-- (bench/lib/seed.lua), each against UseAVX=2 and use_avx=2.
local function ratio_text(r)
  if not r then return "-" end
  return string.format("%.3f %s", r.ratio, r.ci and string.format("[%.3f-%.3f]", r.ci[1], r.ci[2]) or "[no interval]")
end
local function licence_counts(row)
  local v = {}
  for i, name in ipairs(LICENCE_COLUMNS) do
    local e = row.counters[name]
    if not e.value then return "cannot be read here (see above)" end
    v[i] = fmt_count(e.value)
  end
  return table.concat(v, " / ")
end
do
  local srows = {}
  for i, row in ipairs(rows) do
    srows[i] = { name = row.name, knobs = row.knobs, times = row.times, counters = licence_counts(row),
                 clock = clock.source and row.clock_rounds[clock.source],
                 readings = clock.source and row.clock_readings[clock.source] }
  end
  local beside, base_name = seed.beside(srows)
  results.seed = { source = seed.SOURCE, baseline = base_name, clock_source = clock.source, settings = {} }
  print(string.format("\n# the seed report (%s) beside this run's rows; clock (here: %s) and score against "
    .. "UseAVX=2 / %s:", seed.SOURCE, clock.source or "no source", base_name or "no use_avx=2 row in this run"))
  local line = "%-26s %-34s %6s %6s   %-32s %-22s %-22s  %s"
  print(string.format(line, "seed setting", "seed lvl0 / lvl1 / lvl2 / throttle", "clock", "score", "row here",
                      "clock [95% CI]", "score [95% CI]", "lvl0 / lvl1 / lvl2 / throttle here"))
  for _, e in ipairs(beside) do
    local s, v = e.setting, {}
    for i = 1, 4 do v[i] = s.counters[i] or "-" end
    print(string.format(line, s.name, table.concat(v, " / ") .. (s.note and " *" or ""),
      s.clock and string.format("%.3f", s.clock) or "-", s.score and string.format("%.3f", s.score) or "-",
      e.row and e.row.name or "(no such row in this run)", ratio_text(e.clock), ratio_text(e.score),
      e.row and e.row.counters or "-"))
    results.seed.settings[#results.seed.settings + 1] = { name = s.name, counters = s.counters, clock = s.clock,
      score = s.score, note = s.note, row = e.row and e.row.name, row_clock = e.clock, row_score = e.score,
      row_counters = e.row and e.row.counters }
    if s.note then print(string.format("# * %s: %s", s.name, s.note)) end
  end
end

-- The one line to act on: the fastest row whose interval excludes the first
-- row's time, or keep the first (the default, unless --rows said otherwise),
-- with each named row's licence residency where the counters exist.
local function residency(row)
  local v = {}
  for i = 1, 3 do v[i] = row.counters[LICENCE_COLUMNS[i]].value end
  local total = v[1] and v[2] and v[3] and v[1] + v[2] + v[3]
  if not total or total == 0 then return "" end
  return string.format(" [LVL1 %.0f%%, LVL2 %.0f%% of licence cycles]", 100 * v[2] / total, 100 * v[3] / total)
end
local best
for i = 2, #rows do
  local row = rows[i]
  if row.significant and row.ratio < 1 and (not best or row.ratio < best.ratio) then best = row end
end
results.verdict = best and { row = best.name, ratio = best.ratio, ci = best.ci } or { row = base and base.name }
if best then
  print(string.format("\nverdict: set %s (AVXBUF_OPTIONS=%q): %.3fx the time of %s%s, 95%% CI %.3f-%.3f%s",
    best.name, (best.name:gsub("%s+", ",")), best.ratio, base.name, residency(base), best.ci[1], best.ci[2],
    residency(best)))
elseif base then
  local detectable = results.noise and results.noise.detectable
  print(string.format("\nverdict: keep %s%s: %s", base.name == "default" and "the default" or base.name,
    residency(base), detectable and string.format("no row differs beyond the +-%.1f%% this run could detect",
                                                  100 * detectable)
                     or "too few rounds to tell rows apart (at least 6 are needed)"))
end

-- The clock, by the best source (and the probe, the second way, beside
-- counters): each row whose clock is lower beyond the noise, or the bound
-- this run's intervals set.
if clock.source then
  print(string.format("clock: %s (%s)", clock.verdicts[clock.source].text, clock.source))
  if second then print(string.format("clock, the second way: %s (probe)", clock.verdicts.probe.text)) end
elseif #rows > 0 then
  print("clock: no source here (no counters, and the probe " .. (probe_ghz and "gave no reading" or probe) .. ")")
end
if args.json then bench.write_json(args.json, results) end
