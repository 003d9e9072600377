-- The transform workload: every kernel produces the reference output,
-- the clock verdict (bench/lib/clockverdict.lua) holds on synthetic
-- readings whose truth is known, and bench/transform.lua --quick completes
-- with the documented JSON.
local lu = require "luaunit"
local h = require "helpers"
local avxbuf = h.avxbuf
local transform = require "transform"
local clockverdict = require "clockverdict"
local licence = require "avxbuf.licence"
local seed = require "seed"

TestTransform = {}
TestTransform.tearDown = avxbuf.reset

function TestTransform.test_parser_round_trips_text_and_attributes()
  local tree = transform.parse('<?xml version="1.0"?><a x="1&amp;2"><!-- c --><b>t &lt;u&gt;</b><c/></a>')
  local a = tree.kids[1]
  lu.assertEquals(a.tag, "a")
  lu.assertEquals(a.attrs.x, "1&2")
  lu.assertEquals(a.kids[1].tag, "b")
  lu.assertEquals(a.kids[1].kids[1], "t <u>")
  lu.assertEquals(a.kids[2].tag, "c")
  lu.assertEquals(#a.kids[2].kids, 0)
end

function TestTransform.test_fold_is_the_rolling_hash()
  local crc = 0
  for _, b in ipairs { ("hello world, a rolling hash"):byte(1, -1) } do crc = (crc * 33 + b) % 2 ^ 32 end
  lu.assertEquals(string.format("%.0f", transform.fold(0, "hello world, a rolling hash")),
                  string.format("%.0f", crc))
end

function TestTransform.test_every_kernel_matches_the_reference()
  local docs = transform.documents(true)
  if h.LIGHT then docs = { docs[2], docs[6] } end
  local want, bytes = transform.reference(docs)
  lu.assertTrue(bytes > 10000)
  for _, cfg in ipairs(h.kernel_configs()) do
    h.use(cfg.knobs)
    local got = transform.with_avxbuf(avxbuf, docs)()
    lu.assertEquals(string.format("%08x", got), string.format("%08x", want), cfg.name)
  end
end

-- Each block runs every row once, every row holds every slot once in each
-- cycle of #rows blocks, and the cycles do not all go in one order.
function TestTransform.test_block_orders_are_latin_squares()
  for _, n in ipairs { 1, 2, 7 } do
    local order, cycles = transform.block_orders(n, 47), {}
    for c = 0, 9 do
      local slots = {}
      for t = 1, n do
        local o, rows = order(c * n + t), {}
        lu.assertEquals(#o, n)
        for s, i in ipairs(o) do
          lu.assertNil(rows[i], "a row twice in one block")
          rows[i] = true
          slots[s] = slots[s] or {}
          lu.assertNil(slots[s][i], "a row twice in one slot in one cycle")
          slots[s][i] = true
        end
        if t == 1 then cycles[table.concat(o, ",")] = true end
      end
    end
    local distinct = 0
    for _ in pairs(cycles) do distinct = distinct + 1 end
    if n == 7 then lu.assertTrue(distinct > 5, distinct .. " distinct orders in 10 cycles") end
  end
end

-- Synthetic readings as bench/transform.lua takes them: 10 rounds of 7
-- rows, a block per document (15) in each round, every row reading its
-- clock after its document, each reading the best of 5 windows (as
-- avxbuf.coreclock(adds, 5) keeps it). A row's clock in a round is the
-- host's that round (sd 1%, shared) times its own jitter (sd 0.3%) times
-- its true ratio; a window reads it with noise of sd 0.2%. With `steps`,
-- the host's clock also moves during the round, at about that many random
-- times, each time to a new level between 0.97 and 1.03 of the round's
-- (the shared VM of docs/clock.md moves within tens of ms). When it moves
-- matters by the layout: in transform's blocks each row's reading lies a
-- few slots from the first row's of the same block (transform.block_orders
-- places them); with `turns`, as transform ran before, each row ran all
-- its documents in turn. Two
-- generators, so that the same set can be drawn with and without sunk
-- windows: in `sunk` of the windows (or, with whole, of the readings:
-- every window of one) an interrupt sinks the reading to 0.2-0.8x.
local ROWS = { "default", "use_avx=3", "use_avx=2", "max_vector_size=32", "vector_zeroing=false", "use_avx=0", "libc" }
local DOCS = 15

local function synthetic(set, truth, sunk, whole, steps, turns)
  local noise, hit, host_rng = h.rng(1000 + set), h.rng(5000 + set), h.rng(9000 + set)
  local function u(r) return (r(2 ^ 30) + 0.5) / 2 ^ 30 end
  local function normal(r) return math.sqrt(-2 * math.log(u(r))) * math.cos(2 * math.pi * u(r)) end
  local rows = {}
  for i, name in ipairs(ROWS) do rows[i] = { name = name, rounds = {}, readings = {} } end
  local slots, order = #ROWS * DOCS, transform.block_orders(#ROWS, 47)
  for k = 1, 10 do
    -- the time slot of row i's reading of document j
    local at = {}
    for i = 1, #ROWS do at[i] = {} end
    for j = 1, DOCS do
      for s, i in ipairs(order((k - 1) * DOCS + j)) do
        at[i][j] = turns and (i - 1) * DOCS + j or (j - 1) * #ROWS + s
      end
    end
    local host, level = 3.5 * (1 + 0.01 * normal(noise)), {}
    local now = 1
    for t = 1, slots do
      if steps and u(host_rng) < steps / slots then now = 0.97 + 0.06 * u(host_rng) end
      level[t] = now
    end
    for i, row in ipairs(rows) do
      local ghz = host * (1 + 0.003 * normal(noise)) * (truth[i] or 1)
      local readings = {}
      for j = 1, DOCS do
        local now_ghz = ghz * level[at[i][j]]
        local sink_all, best = whole and u(hit) < sunk, 0
        for _ = 1, 5 do
          local v = now_ghz * (1 + 0.002 * normal(noise))
          if sink_all or (not whole and u(hit) < sunk) then v = v * (0.2 + 0.6 * u(hit)) end
          best = math.max(best, v)
        end
        readings[j] = best
      end
      row.rounds[k], row.readings[k] = clockverdict.median(readings), readings
    end
  end
  return rows
end

-- How many sets may name a row that has no drop: the rule's false alarms
-- at this jitter (~1 set in 100, sunk windows or not), and at least one:
-- the 20 sets of the sanitizer lanes held one.
local SETS = h.LIGHT and 20 or 100
local FALSE_ALARMS = math.max(1, math.floor(SETS / 50))

-- Sunk windows (up to 20%), or whole readings (5%: all their windows), move no ratio
-- and not the bound by as much as the noise floor from the same set's
-- without them, and name a row no more often than clean readings do.
function TestTransform.test_clock_verdict_ignores_sunk_windows()
  for _, case in ipairs { { sunk = 0.2 }, { sunk = 0.05, whole = true } } do
    local what = string.format("%.0f%% of %s sunk", 100 * case.sunk, case.whole and "readings" or "windows")
    local named = 0
    for set = 1, SETS do
      local clean = clockverdict.decide(synthetic(set, {}, 0))
      local v = clockverdict.decide(synthetic(set, {}, case.sunk, case.whole))
      for i = 2, #ROWS do
        lu.assertTrue(math.abs(v.rows[i].ratio - clean.rows[i].ratio) < licence.FLOOR, what)
      end
      if #v.named > 0 then
        named = named + 1
      else
        lu.assertStrContains(v.text, "no clock difference beyond +-")
        lu.assertTrue(math.abs(v.bound - clean.bound) < licence.FLOOR,
                      string.format("%s: bound %.4f, %.4f without", what, v.bound, clean.bound))
      end
    end
    lu.assertTrue(named <= FALSE_ALARMS, string.format("%s: %d of %d sets name a row", what, named, SETS))
  end
end

-- A real 3% drop of one row, with 20% of windows sunk, is named with its
-- interval, which holds the true ratio in most sets.
function TestTransform.test_clock_verdict_names_a_3_percent_drop()
  local covered = 0
  for set = 1, SETS do
    local v = clockverdict.decide(synthetic(set, { 1, 0.97 }, 0.2))
    lu.assertTrue(v.rows[2].drop, v.text)
    lu.assertEquals(v.named[1], v.text:match("^use_avx=3: the core ran at 0%.9%d%dx the clock of default "
                                             .. "%[0%.9%d%d%-0%.9%d%d%]"))
    local r = v.rows[2]
    if r.ci[1] <= 0.97 and 0.97 <= r.ci[2] then covered = covered + 1 end
  end
  lu.assertTrue(covered >= 0.8 * SETS, covered .. " of " .. SETS .. " intervals hold 0.97")
end

-- The host's clock moving by up to 3% at random times during each round
-- (6 times a round on average): with the rows taking turns per document,
-- each row's readings compared with the first row's of the same block,
-- the verdict names no row more often than on a still host, and its bound
-- stays near the floor; the same steps with each row's documents in turn
-- and its rounds' medians compared (how transform read them before) widen
-- the bound past 1.5%, so the steps are ones that matter. A 3% drop is still
-- named, with sunk windows too.
function TestTransform.test_clock_verdict_holds_through_host_steps()
  local named, bounds, turned = 0, {}, {}
  for set = 1, SETS do
    local v = clockverdict.decide(synthetic(set, {}, 0, false, 6))
    if #v.named > 0 then named = named + 1 else bounds[#bounds + 1] = v.bound end
    local old = synthetic(set, {}, 0, false, 6, true)
    for _, row in ipairs(old) do row.readings = nil end
    turned[#turned + 1] = clockverdict.decide(old).bound or math.huge
    local drop = clockverdict.decide(synthetic(set, { 1, 0.97 }, 0.2, false, 6))
    lu.assertTrue(drop.rows[2].drop, drop.text)
  end
  lu.assertTrue(named <= FALSE_ALARMS, string.format("host steps: %d of %d sets name a row", named, SETS))
  local median = require("avxbuf.stats").median
  local bound, before = median(bounds), median(turned)
  lu.assertTrue(bound <= 0.01, string.format("host steps: median bound %.4f", bound))
  lu.assertTrue(before > 0.015, string.format("host steps, rows in turn: median bound %.4f", before))
end

function TestTransform.test_clock_verdict_needs_rounds()
  local v = clockverdict.decide { { name = "a", rounds = { 3, 3, 3 } }, { name = "b", rounds = { 2, 2, 0 } } }
  lu.assertNil(v.bound)
  lu.assertStrContains(v.text, "too few rounds")
  lu.assertEquals(clockverdict.median { 0, 3, 0 / 0, 4, 5 }, 4)
  lu.assertEquals(clockverdict.median { 0 }, 0)
end

function TestTransform.test_bench_quick_json()
  if h.LIGHT then lu.skip("the benchmark runs natively in a child; nothing for valgrind to see") end
  h.needs_children()
  if _VERSION ~= "Lua 5.4" or jit then lu.skip("the benchmarks are Lua 5.4 programs") end
  local json = os.tmpname()
  local out, status = h.run_child({}, string.format(
    "arg = {[0] = 'bench/transform.lua', '--quick', '--rounds', '2', '--pin', 'none', '--json', %q} dofile(arg[0])",
    json))
  lu.assertEquals(status, 0, out)
  local f = assert(io.open(json))
  local r = require("cjson").decode(f:read("*a"))
  f:close()
  os.remove(json)
  lu.assertEquals(type(r.cpu.vendor), "string")
  lu.assertStrContains(r.cpu.reason, r.cpu.uarch)
  lu.assertEquals(#r.rows, 7)
  local names = {}
  for _, row in ipairs(r.rows) do names[#names + 1] = row.name end
  lu.assertEquals(names, { "default", "use_avx=2", "use_avx=3 max_vector_size=64", "use_avx=3 max_vector_size=32",
                           "use_avx=3 vector_zeroing=false", "use_avx=0", "kernel=libc" })
  for _, row in ipairs(r.rows) do
    if row.skipped then
      lu.assertStrContains(row.skipped, "needs")
    else
      lu.assertEquals(row.checksum, r.reference_checksum, row.name)
      lu.assertTrue(row.score > 0)
      lu.assertEquals(#row.scores, 2)
      lu.assertEquals(#row.wall, 2)
      lu.assertEquals(#row.cpu, 2)
      if row.name ~= "default" then
        -- two rounds can never be significant: the interval is unbounded
        lu.assertTrue(row.ratio > 0)
        lu.assertNil(row.ci)
        lu.assertFalse(row.significant)
      end
      for _, name in ipairs { "cycles", "ref-cycles", "instructions", "task-clock",
                              "core_power.lvl1_turbo_license" } do
        local e = row.counters[name]
        lu.assertTrue(e.value ~= nil or type(e.unavailable) == "string", name)
      end
      -- the GHz column's source, and every source read, each with a verdict
      lu.assertEquals(row.clock.source, r.clock.source, row.name)
      for source, c in pairs(row.clock.sources) do
        lu.assertTrue(c.ghz > 0.1 and c.ghz < 10, source)
        lu.assertNotNil(r.clock.verdicts[source], source)
        lu.assertEquals(#row.clock_rounds[source], 2, source)
      end
      if r.clock.verdicts.probe then
        lu.assertEquals(#row.probe_readings, 2)
        lu.assertEquals(#row.probe_readings[1], #transform.documents(true))
      end
    end
  end
  if r.clock.source then
    lu.assertStrContains(out, "(" .. r.clock.source .. ")")
    lu.assertStrContains(out, "\nclock: too few rounds for a clock interval")
  else
    lu.assertStrContains(out, "\nclock: no source here")
  end
  if r.clock.verdicts.probe then
    lu.assertTrue(r.clock.readings.share > 0 and r.clock.readings.share < 0.05, r.clock.readings.share)
    lu.assertStrContains(out, "# clock readings: 15 per row per round")
  end
  -- the seed's settings, each beside the row that stands for it
  lu.assertEquals(#r.seed.settings, #seed.SETTINGS)
  local stands = {}
  for i, e in ipairs(r.seed.settings) do stands[i] = e.row end
  lu.assertEquals(stands, { "use_avx=3 max_vector_size=64", "use_avx=3 max_vector_size=32", "use_avx=2",
                            "use_avx=3 vector_zeroing=false" })
  lu.assertEquals(r.seed.baseline, "use_avx=2")
  lu.assertStrContains(out, "# unavailable counters")
  lu.assertStrContains(out, "no difference this machine can detect")
  -- two rounds give no interval: the last line keeps the default, and says why
  lu.assertStrContains(out, "\nverdict: keep the default: too few rounds to tell rows apart")
  lu.assertEquals(r.verdict.row, "default")
end
