-- The report behind avxbuf (OpenJDK PR 8731, JDK-8286823; a Cascade Lake
-- stepping 7 core, bare metal), and which bench/transform.lua row stands
-- for each of its settings, so that a run can be read beside it. Its
-- counters are mpegaudio's (perf stat -a -C 1, after warm-up), the
-- zeroing line an allocation-heavy subset's; its scores SPECjvm2008
-- xml.transform's; its clocks the PR's 2025 comment (docs/benchmarks.md).
-- Plain Lua 5.1 syntax, as stats.lua.
local stats = require "avxbuf.stats"
local clockverdict = require "clockverdict"

local M = {}

M.SOURCE = "OpenJDK PR 8731 (Cascade Lake stepping 7): mpegaudio counters by perf stat -a -C 1; "
           .. "xml.transform ops/m; GHz from its 2025 comment"

-- Each setting: the knob sets of a transform row that stand for it (a
-- row's own knobs, exactly), the counters lvl0 / lvl1 / lvl2 / throttle as
-- the report writes them (false: not given), and the clock and score
-- against UseAVX=2 where the report gives both sides.
M.SETTINGS = {
  { name = "UseAVX=3", rows = { { use_avx = 3, max_vector_size = 64 }, { use_avx = 3 } },
    counters = { "0.35e9", "13.6e9", "1.30e9", "43.9e6" }, clock = 2.7 / 3.1, score = 776 / 894 },
  { name = "UseAVX=3 MaxVectorSize=32", rows = { { use_avx = 3, max_vector_size = 32 } },
    counters = { false, "15.2e9", "0", "0.1e6" }, clock = 2.7 / 3.09 },
  { name = "UseAVX=2", rows = { { use_avx = 2 } }, counters = { "16.2e9", "9.6e6", false, false },
    baseline = true },
  { name = "-UseXMMForObjInit",
    rows = { { use_avx = 3, vector_zeroing = false }, { use_avx = 2, vector_zeroing = false },
             { vector_zeroing = false } },
    counters = { false, "6e6", false, false }, note = "allocation-heavy subset: lvl1 15.7e9 -> 6e6 against UseAVX=2" },
}

local function same(a, b)
  for k, v in pairs(a) do if b[k] ~= v then return false end end
  for k, v in pairs(b) do if a[k] ~= v then return false end end
  return true
end

-- The first row whose knobs are one of the setting's sets, or nil.
local function row_for(setting, rows)
  for _, row in ipairs(rows) do
    for _, knobs in ipairs(setting.rows) do
      if same(row.knobs, knobs) then return row end
    end
  end
end

-- rows: {{name, knobs = the row's own, times = {seconds per round},
-- clock = {clock per round} or nil, readings = {[round] = {clock per
-- block}} or nil}, ...} (the same rounds in each; clockverdict.decide's
-- pairing). -> one entry
-- per setting: {setting, row (of rows) or nil, clock = {ratio, ci},
-- score = {ratio, ci}}, each ratio against the row standing for UseAVX=2
-- (none where that row or this one did not run).
function M.beside(rows)
  local base
  for _, s in ipairs(M.SETTINGS) do
    if s.baseline then base = row_for(s, rows) end
  end
  local out = {}
  for i, s in ipairs(M.SETTINGS) do
    local row = row_for(s, rows)
    local e = { setting = s, row = row }
    if row and base and row ~= base then
      if row.clock and base.clock then
        local c = clockverdict.decide { { name = base.name, rounds = base.clock, readings = base.readings },
                                        { name = row.name, rounds = row.clock, readings = row.readings } }
        e.clock = { ratio = c.rows[2].ratio, ci = c.rows[2].ci }
      end
      local t = stats.ratio(row.times, base.times)   -- the base's time over the row's: the row's score over the base's
      e.score = { ratio = t.ratio, ci = t.ci }
    end
    out[i] = e
  end
  return out, base and base.name
end

return M
