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

-- The licence events by the set avxbuf's policy names for a CPU
-- (avxbuf.cpu().licence_events): the list of which models have which is
-- src/core/policy.c's table, not here.
local THROTTLE = { ["core_power.throttle"] = 0x4028 }
local SETS = { levels = { LVL }, ["levels,throttle"] = { LVL, THROTTLE } }

local function licence_encoding(cpu, name)
  for _, t in ipairs(SETS[cpu.licence_events] or {}) do
    if t[name] then return t[name] end
  end
end

local function known_licence_event(name)
  return LVL[name] or THROTTLE[name]
end

function M.known()
  local list = {}
  for name in pairs(M.generic) do list[#list + 1] = name end
  for _, t in ipairs(SETS["levels,throttle"]) do
    for name in pairs(t) do list[#list + 1] = name end
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
    local code = licence_encoding(cpu, name)
    if code then return RAW, code end
    return nil, string.format("not an event of this CPU (%s family %d model 0x%02X, %s): %s is one of the "
      .. "turbo-licence counters, which avxbuf knows on Intel Skylake-SP to Rocket Lake (avxbuf.cpu().licence_events)",
      cpu.vendor, cpu.family, cpu.model, cpu.uarch or "unknown", name)
  end
  error(string.format("unknown event '%s'; known: %s", name, table.concat(M.known(), ", ")), 2)
end

return M
