-- Counter events by name: generic perf events, and the turbo-licence events of
-- the Intel microarchitectures that have them (intel/perfmon; Linux
-- tools/perf/pmu-events/arch/x86). Encodings are EventSel | UMask << 8.
local M = {}

local HARDWARE, SOFTWARE, RAW = 0, 1, 4

M.generic = {
  ["cycles"] = { HARDWARE, 0 },
  ["instructions"] = { HARDWARE, 1 },
  ["ref-cycles"] = { HARDWARE, 9 },
  ["cpu-clock"] = { SOFTWARE, 0 },
  ["task-clock"] = { SOFTWARE, 1 },
  ["context-switches"] = { SOFTWARE, 3 },
}

local LVL = {
  ["core_power.lvl0_turbo_license"] = 0x0728,
  ["core_power.lvl1_turbo_license"] = 0x1828,
  ["core_power.lvl2_turbo_license"] = 0x2028,
}

-- Which Intel family-6 models have which licence events.
M.licence = {
  { uarch = "Skylake-SP/X, Cascade Lake, Cooper Lake", models = { 0x55 },
    events = { LVL, { ["core_power.throttle"] = 0x4028 } } },
  { uarch = "Ice Lake, Tiger Lake, Rocket Lake", models = { 0x6A, 0x6C, 0x7D, 0x7E, 0x8C, 0x8D, 0xA7 },
    events = { LVL } },
}

local function licence_row(cpu)
  if cpu.vendor ~= "GenuineIntel" or cpu.family ~= 6 then return nil end
  for _, row in ipairs(M.licence) do
    for _, m in ipairs(row.models) do
      if m == cpu.model then return row end
    end
  end
end

local function licence_encoding(row, name)
  for _, t in ipairs(row and row.events or {}) do
    if t[name] then return t[name] end
  end
end

local function known_licence_event(name)
  for _, row in ipairs(M.licence) do
    if licence_encoding(row, name) then return true end
  end
end

function M.known()
  local list = {}
  for name in pairs(M.generic) do list[#list + 1] = name end
  for _, row in ipairs(M.licence) do
    for _, t in ipairs(row.events) do
      for name in pairs(t) do
        local seen = false
        for _, l in ipairs(list) do seen = seen or l == name end
        if not seen then list[#list + 1] = name end
      end
    end
  end
  table.sort(list)
  list[#list + 1] = "rXXXX (raw EventSel | UMask << 8, hex)"
  return list
end

-- name -> type, config; or nil, reason when the event exists but not on this
-- CPU. Unknown names are an error listing the known ones.
function M.resolve(name, cpu)
  cpu = cpu or require("avxbuf").cpu()
  local g = M.generic[name]
  if g then return g[1], g[2] end
  local raw = name:match("^r(%x+)$")
  if raw then return RAW, tonumber(raw, 16) end
  if known_licence_event(name) then
    local code = licence_encoding(licence_row(cpu), name)
    if code then return RAW, code end
    return nil, string.format("not an event of this CPU (%s family %d model 0x%02X): %s exists on %s",
      cpu.vendor, cpu.family, cpu.model, name,
      name == "core_power.throttle" and M.licence[1].uarch
        or M.licence[1].uarch .. "; " .. M.licence[2].uarch)
  end
  error(string.format("unknown event '%s'; known: %s", name, table.concat(M.known(), ", ")), 2)
end

return M
