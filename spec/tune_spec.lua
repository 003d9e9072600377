-- avxbuf.measure (kernels timed from C) and avxbuf.tune (lua/avxbuf/tune.lua):
-- their shape, their errors, and what tune may and may not change. What it
-- finds is a measurement of this machine, shown by bench/tune.lua, not
-- asserted here.
local lu = require "luaunit"
local h = require "helpers"
local avxbuf = h.avxbuf

TestTune = {}

function TestTune.test_measure_times_each_kernel_in_order()
  local vector = avxbuf.kernel("copy", 4096, "vector")
  for _, op in ipairs { "copy", "zero", "fill" } do
    local r = avxbuf.measure { op = op, size = 4096, kernels = { vector, "libc", vector }, rounds = 3, min_time = 1e-5 }
    lu.assertEquals(#r, 3)
    for _, times in ipairs(r) do
      lu.assertEquals(#times, 3)
      for _, t in ipairs(times) do lu.assertTrue(t > 0 and t < 1, op) end
    end
  end
end

function TestTune.test_measure_refuses_what_it_cannot_time()
  local function refuses(t, what)
    local ok, err = pcall(avxbuf.measure, t)
    lu.assertFalse(ok)
    lu.assertStrMatches(err, ".*bad argument #1 to '[^']*' .*")   -- (its name: '?' through pcall on 5.1)
    lu.assertStrContains(err, what)
  end
  refuses({ op = "copy", size = 64, kernels = { "nope" }, rounds = 1 }, "no kernel 'nope'")
  refuses({ op = "move", size = 64, kernels = { "libc" }, rounds = 1 }, "field 'op' must be")
  refuses({ op = "copy", size = 0, kernels = { "libc" }, rounds = 1 }, "field 'size' must be an integer")
  refuses({ op = "copy", size = 64, kernels = {}, rounds = 1 }, "from 1 to 8 kernels")
  refuses({ op = "copy", size = 64, kernels = { "libc" }, rounds = 65 }, "field 'rounds' must be")
  refuses({ op = "copy", size = 1.5, kernels = { "libc" }, rounds = 1 }, "field 'size' must be an integer")
  refuses({ op = "copy", size = 64, kernels = { "libc" }, rounds = 1, min_time = 2 }, "field 'min_time'")
  for _, k in ipairs(avxbuf.kernels()) do
    if not k.available then refuses({ op = "copy", size = 64, kernels = { k.name }, rounds = 1 }, "cannot run") end
  end
end

function TestTune.test_tune_reports_and_changes_nothing_itself()
  if h.LIGHT then h.needs_children() end   -- (valgrind: too slow to be worth it)
  h.use {}
  local before = avxbuf.config()
  local settings, report, options = avxbuf.tune(0.2)
  lu.assertEquals(avxbuf.config(), before, "tune changes no setting")
  -- no line the policy draws is crossed upwards, and only the licence
  -- probe crosses one downwards, on a CPU the policy's table does not name
  lu.assertTrue(settings.use_avx <= before.use_avx)
  lu.assertEquals(settings.max_vector_size, before.max_vector_size)
  lu.assertTrue(settings.vector_zeroing == before.vector_zeroing or not settings.vector_zeroing)
  if settings.use_avx ~= before.use_avx or settings.vector_zeroing ~= before.vector_zeroing then
    lu.assertEquals(avxbuf.cpu().uarch, "unknown")
    lu.assertEquals(report[1].name, "licence")
    lu.assertEquals(report[1].decision, "moved")
  end
  local named = avxbuf.cpu().uarch ~= "unknown"
  for _, e in ipairs(report) do
    if e.name == "licence" and e.licence and e.licence.families then
      lu.assertEquals(e.decision, named and "reported" or e.decision)
      lu.assertStrContains(e.why, named and "stands, and the measurement" or "does not name")
    end
  end
  lu.assertEquals(type(report.seconds), "number")
  -- every step this machine has is in the report, measured or not, in order
  local cpu = avxbuf.cpu()
  local streams = avxbuf.kernel("copy", 2 ^ 20, "streaming") ~= avxbuf.kernel("copy", 2 ^ 20, "vector")
  local steps = {}
  if cpu.max_use_avx >= 2 then steps[#steps + 1] = "licence" end
  if h.X86 and cpu.features.erms then
    steps[#steps + 1] = "rep_movsb"
    steps[#steps + 1] = "rep_stosb"
  end
  if settings.use_avx == 3 and settings.max_vector_size == 64 then steps[#steps + 1] = "avx3" end
  if streams then
    steps[#steps + 1] = "nontemporal"
    steps[#steps + 1] = "nontemporal_zero"
    steps[#steps + 1] = "nontemporal_fill"
  end
  local names = {}
  for i, e in ipairs(report) do names[i] = e.name end
  lu.assertEquals(names, steps)
  -- what each step may set, and so what the options may name
  local streaming = { "nontemporal_threshold", "memset_nontemporal_threshold", "zero_nontemporal_threshold" }
  local KNOBS = { licence = { "use_avx", "vector_zeroing" },
                  rep_movsb = { "rep_movsb_threshold", "rep_movsb_stop_threshold" },
                  rep_stosb = { "rep_stosb_threshold", "rep_stosb_stop_threshold" }, avx3 = { "avx3_threshold" },
                  nontemporal = streaming, nontemporal_zero = streaming, nontemporal_fill = streaming }
  local in_options = {}
  for k in options:gmatch("([%w_]+)=") do in_options[k] = true end
  local text = tostring(report)
  for _, e in ipairs(report) do
    lu.assertTrue(e.decision == "moved" or e.decision == "kept" or e.decision == "reported", e.decision)
    lu.assertEquals(type(e.why), "string")
    lu.assertStrContains(text, "  -> " .. e.decision .. ": " .. e.why)
    lu.assertEquals({ #e.ratio, #e.verdict }, { #e.sizes, #e.sizes }, e.name)
    for i = 1, #e.sizes do
      lu.assertTrue(e.ratio[i] > 0)
      lu.assertTrue(e.verdict[i] == -1 or e.verdict[i] == 0 or e.verdict[i] == 1)
    end
    -- a step that moved sets its knobs (the options name one at least);
    -- every knob the options name, a step that moved sets (a streaming step
    -- keeps the other two thresholds, which would otherwise follow it, where they were)
    local sets = false
    for _, k in ipairs(KNOBS[e.name]) do sets = sets or in_options[k] ~= nil end
    if e.decision == "moved" then
      lu.assertTrue(sets, e.name .. ": " .. e.why)
      for _, k in ipairs(KNOBS[e.name]) do in_options[k] = false end
    end
  end
  for k, unclaimed in pairs(in_options) do lu.assertFalse(unclaimed, "options name a knob no step moved: " .. k) end
  -- the options string is the settings it moved, as AVXBUF_OPTIONS takes them
  for k, v in options:gmatch("([%w_]+)=(%w+)") do
    lu.assertEquals(settings[k], tonumber(v) or v == "true", k)
  end
  local applied = avxbuf.configure(settings)
  for k, v in options:gmatch("([%w_]+)=(%d+)") do lu.assertEquals(applied[k], tonumber(v), k) end
  -- a string window tune opens takes the sizes it won, the first included
  -- (the thresholds are taken above): the largest size below its start is
  -- no win, the start runs the string kernel, and a win follows, no loss between
  for _, e in ipairs(report) do
    local knob = ({ rep_movsb = "rep_movsb_threshold", rep_stosb = "rep_stosb_threshold" })[e.name]
    if knob and e.decision == "moved" and applied[knob] > 0 then
      local from, below, after = applied[knob] + 1, nil, nil
      for i, n in ipairs(e.sizes) do
        if n < from then below = e.verdict[i] elseif after == nil and e.verdict[i] ~= 0 then after = e.verdict[i] end
      end
      lu.assertNotEquals(below, 1, e.name .. ": a size it won lies below its window, from " .. from .. " B")
      lu.assertEquals(after, 1, e.name .. ": its window, from " .. from .. " B, starts in no run of wins")
      lu.assertEquals(avxbuf.kernel(e.op, from), h.string_kernel(e.op), e.name)
    end
  end
  for _, e in ipairs(report) do
    -- a step that moves the threshold moves it from where it was
    if e.name == "avx3" and e.decision == "moved" then
      lu.assertNotEquals(applied.avx3_threshold, before.avx3_threshold, "avx3: moved to where it was")
    end
    -- a split tune makes where there was none lies above a size the 32-byte
    -- family won beyond the noise: where the two are even, a split only
    -- costs (a split plan's small copies take the dispatch's size classes)
    if e.name == "avx3" and e.decision == "moved" and before.avx3_threshold == 0 and applied.avx3_threshold > 0 then
      local lost = false
      for i, n in ipairs(e.sizes) do lost = lost or (n < applied.avx3_threshold and e.verdict[i] == -1) end
      lu.assertTrue(lost, "avx3: a split at " .. applied.avx3_threshold
                          .. " B where 64-byte vectors lost nowhere below")
    end
  end
  avxbuf.reset()
  if options ~= "" and not h.NO_CHILDREN then
    local out, status = h.run_child({ AVXBUF_OPTIONS = options, LUA_PATH = "lua/?.lua;;" },
      "local c = require('avxbuf').config() for k, v in ('" .. options .. "'):gmatch('([%w_]+)=(%d+)') do "
      .. "assert(c[k] == tonumber(v), k) end print('ok')")
    lu.assertEquals(status, 0, out)
    lu.assertStrContains(out, "ok")
  end
end

-- tune with made-up timings: avxbuf.measure stands in for the clock, the
-- last kernel of each measurement (the candidate) at ratio(t, name) times
-- the speed of the others. From the window from..untl (threshold from - 1,
-- stop untl; by default none: threshold 0, no stop, so no current bound is
-- kept) for the string step named step. -> the settings
-- and that step's report entry, measured. The budget is counted in calls of
-- os.clock, not in time: under valgrind the made-up steps ran out of it.
local function tuned_string(step, ratio, from, untl)
  if not (h.X86 and avxbuf.cpu().features.erms) then lu.skip("no string instructions on this CPU") end
  local measure = avxbuf.measure
  avxbuf.measure = function(t)
    local r = {}
    for k, name in ipairs(t.kernels) do
      r[k] = {}
      local q = k == #t.kernels and ratio(t, name) or 1
      for round = 1, t.rounds do r[k][round] = 1e-6 * t.size / 4096 / q end
    end
    return r
  end
  local clock, now = os.clock, 0
  os.clock = function() now = now + 1e-6; return now end   -- luacheck: ignore 122
  h.use { [step .. "_threshold"] = from and from - 1 or 0, [step .. "_stop_threshold"] = untl or 0 }
  -- (a budget of which the licence probe's quarter pays for none of its rounds)
  local ok, settings, report = pcall(avxbuf.tune, 0.3)
  os.clock = clock   -- luacheck: ignore 122
  avxbuf.measure = measure
  avxbuf.reset()
  assert(ok, settings)
  for _, e in ipairs(report) do
    if e.name == step then
      lu.assertNil(e.why:match("not measured"), e.why)
      return settings, e
    end
  end
  lu.fail("no " .. step .. " step in the report")
end

-- The window rep movsb gets where it runs at ratios[size] of the vector
-- copy's speed (1 where none is given).
local function tuned_window(ratios)
  local string_copy = h.string_kernel("copy")
  local settings, e = tuned_string("rep_movsb", function(t, name)
    return t.op == "copy" and name == string_copy and ratios[t.size] or 1
  end)
  return settings.rep_movsb_threshold, settings.rep_movsb_stop_threshold, e
end

function TestTune.test_string_window_spans_a_loss_between_larger_wins()
  local K, M = 1024, 1024 * 1024
  -- won from 32 to 256 KiB, lost at 512 KiB, won more than that at 2 MiB
  -- (the shape of a Zen 5 VM's rows, docs/runs/zen5-vm-2026-12-07.md)
  local ratios = { [32 * K] = 1.4, [64 * K] = 1.5, [128 * K] = 1.3, [256 * K] = 1.14, [512 * K] = 0.89,
                   [2 * M] = 1.23 }
  local from, untl, e = tuned_window(ratios)
  lu.assertEquals({ from + 1, untl }, { 32 * K, 4 * M }, e.why)
  lu.assertEquals(e.decision, "moved")
  lu.assertStrContains(e.why, "slower at sizes between")
  -- where the loss outweighs the wins above it, the window ends at it
  ratios[512 * K], ratios[M], ratios[2 * M] = 0.5, 1.05, 1.05
  from, untl, e = tuned_window(ratios)
  lu.assertEquals({ from + 1, untl }, { 32 * K, 512 * K }, e.why)
  lu.assertNil(e.why:match("slower at sizes between"), e.why)
  -- of two runs apart, the one of the larger gain, not of more wins
  ratios = { [4 * K] = 1.05, [8 * K] = 1.05, [16 * K] = 1.05, [32 * K] = 0.7, [256 * K] = 1.6, [512 * K] = 1.6 }
  from, untl = tuned_window(ratios)
  lu.assertEquals({ from + 1, untl }, { 256 * K, M })
  -- one win alone opens none
  from, untl, e = tuned_window { [64 * K] = 1.5 }
  lu.assertEquals({ from, untl }, { 0, 0 })
  lu.assertEquals(e.decision, "kept")
  -- nor do two wins around a larger loss, nor one win that needs a larger
  -- loss to reach a second
  from, untl = tuned_window { [32 * K] = 1.05, [64 * K] = 0.5, [128 * K] = 1.05 }
  lu.assertEquals({ from, untl }, { 0, 0 })
  from, untl = tuned_window { [32 * K] = 1.05, [64 * K] = 0.5, [128 * K] = 2.0 }
  lu.assertEquals({ from, untl }, { 0, 0 })
end

-- rep stosb's window is judged on a fill of a byte other than 0, as the
-- default's own measurement is (src/core/measured.c says why), and it
-- serves zero and fill alike: made-up timings in which rep stosb wins at
-- zero and loses at fill open none.
function TestTune.test_rep_stosb_is_judged_on_a_fill()
  local string_fill = h.string_kernel("fill")
  local settings, e = tuned_string("rep_stosb", function(t, name)
    return name == string_fill and (t.op == "zero" and 1.5 or 0.5) or 1
  end)
  lu.assertEquals(e.op, "fill")
  lu.assertEquals(e.kernels[#e.kernels], string_fill)
  for i, v in ipairs(e.verdict) do lu.assertEquals(v, -1, "a loss at " .. e.sizes[i] .. " B") end
  lu.assertEquals(e.decision, "kept", e.why)
  lu.assertEquals(settings.rep_stosb_threshold, 0)
end

-- A window is closed only for a loss at a size it runs at: losses below
-- it, and no win beyond the noise in it, keep it (a check of 21:31 on the
-- Zen 5 VM closed the default's window of 1-2 MiB for its losses at 2-512
-- KiB, and the sweeps then filled 2 MiB at 0.81x rep stosb's row:
-- docs/runs/zen5-vm-2026-12-07.md, "A window closed for losses outside it").
function TestTune.test_string_window_closes_only_for_a_loss_within()
  local K, M = 1024, 1024 * 1024
  local string_fill = h.string_kernel("fill")
  local function with(ratios)
    return function(t, name) return name == string_fill and ratios[t.size] or 1 end
  end
  local below = { [2 * K] = 0.5, [64 * K] = 0.5, [512 * K] = 0.5, [4 * M] = 0.5 }
  local settings, e = tuned_string("rep_stosb", with(below), M, 4 * M)
  lu.assertEquals(e.decision, "kept", e.why)
  lu.assertEquals({ settings.rep_stosb_threshold, settings.rep_stosb_stop_threshold }, { M - 1, 4 * M })
  below[2 * M] = 0.5
  settings, e = tuned_string("rep_stosb", with(below), M, 4 * M)
  lu.assertEquals(e.decision, "moved", e.why)
  lu.assertEquals(settings.rep_stosb_threshold, 0)
end

-- The report's printed form: a made-up report, so the text is known.
function TestTune.test_the_report_prints_as_a_table()
  local _, real = avxbuf.tune(0.001)
  local made = setmetatable({ budget = 1, seconds = 0.5,
    { name = "licence", op = "zero, copy", sizes = {}, ratio = {}, verdict = {}, noise = 0, margin = 0,
      decision = "kept", why = "not measured: no time" },
    { name = "rep_movsb", op = "copy", sizes = { 2048, 4096, 3 * 2 ^ 20 }, kernels = { "avx2", "rep_movsb" },
      gbs = { base = { 10, 20, 30 }, candidate = { 5, 25, 30.5 } }, ratio = { 0.5, 1.25, 1.0 },
      verdict = { -1, 1, 0 }, noise = 0.01, margin = 0.03, decision = "moved", why = "rep movsb faster from 4 KiB" },
  }, getmetatable(real))
  lu.assertEquals(tostring(made), table.concat({
    "# avxbuf.tune(1): 0.50 s; ratio = the candidate's speed / the plan's vector kernel's (median of interleaved "
      .. "rounds); + faster, - slower beyond the noise, . neither",
    "",
    "licence (zero, copy):",
    "-",
    "  -> kept: not measured: no time",
    "",
    "rep_movsb (copy): rep_movsb against avx2; noise +-1.0%, a difference counts from 3.0%",
    "        size          avx2     rep_movsb  ratio",
    "       2 KiB    10.00 GB/s     5.00 GB/s   0.50x -",
    "       4 KiB    20.00 GB/s    25.00 GB/s   1.25x +",
    "       3 MiB    30.00 GB/s    30.50 GB/s   1.00x .",
    "  -> moved: rep movsb faster from 4 KiB",
  }, "\n"))
  -- and a real one names each step
  for _, e in ipairs(real) do lu.assertStrContains(tostring(real), "\n" .. e.name .. " (" .. e.op .. ")") end
end

-- bench/tune.lua --json: a step the budget left unmeasured has noise and
-- margin +-inf, which JSON cannot hold; they are written as null (make
-- check-default's tune crashed in cjson there, and its pipe hid it).
function TestTune.test_report_with_unmeasured_steps_writes_json()
  local ok, cjson = pcall(require, "cjson")
  if not ok then lu.skip("no lua-cjson for " .. (rawget(_G, "jit") and "LuaJIT" or _VERSION)) end
  local settings, report, options = avxbuf.tune(0.001)
  local unmeasured
  for _, e in ipairs(report) do if e.noise == math.huge then unmeasured = e.name end end
  lu.assertNotNil(unmeasured, "a 1 ms budget leaves a step unmeasured")
  local path = os.tmpname()
  require("harness").write_json(path, { settings = settings, report = report, options = options })
  local f = assert(io.open(path))
  local back = cjson.decode(f:read("*a"))
  f:close()
  os.remove(path)
  lu.assertEquals(back.options, options)
  for i, e in ipairs(back.report) do
    lu.assertEquals(e.name, report[i].name)
    if e.name == unmeasured then lu.assertEquals({ e.noise, e.margin }, { cjson.null, cjson.null }) end
  end
  lu.assertEquals(require("harness").finite_or_null { 1, 0 / 0, -math.huge, { x = math.huge } },
                  { 1, cjson.null, cjson.null, { x = cjson.null } })
end

function TestTune.test_tune_argument()
  for _, bad in ipairs { "x", 0, -1, 0 / 0, 1e9 } do
    -- (through a Lua call site, which names the function on every version)
    local ok, err = pcall(function() local r = avxbuf.tune(bad); return r end)
    lu.assertFalse(ok)
    lu.assertStrContains(err, "bad argument #1 to '[%w.]*tune' %(seconds must be a number in %(0, 600%]%)", true)
  end
end
