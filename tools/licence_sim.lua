-- The licence verdict (lua/avxbuf/licence.lua's decide) on synthetic readings whose truth is
-- known: how often it flags a drop that is not there, and how often it finds one that is.
-- docs/clock.md has its table.   lua5.4 tools/licence_sim.lua
package.path = "lua/?.lua;" .. package.path
local licence = require "avxbuf.licence"
math.randomseed(7)

local function normal()
  local u1, u2 = math.random(), math.random()
  return math.sqrt(-2 * math.log(1 - u1)) * math.cos(2 * math.pi * u2)
end
-- A reading of clock ghz with relative noise sd, lowered by 5-15% in a share `dips` of readings.
local function reading(ghz, sd, dips)
  local v = ghz * (1 + sd * normal())
  if math.random() < dips then v = v * (0.95 - 0.1 * math.random()) end
  return v
end
-- Two baselines and `families` rows lowered by drop, each round with a drift shared by all.
local function set(rounds, sd, drop, dips, families)
  local a, b, f = {}, {}, {}
  for j = 1, families do f[j] = {} end
  for k = 1, rounds do
    local g = 3 * (1 + 0.02 * normal())
    a[k], b[k] = reading(g, sd, dips), reading(g, sd, dips)
    for j = 1, families do f[j][k] = reading(g * (1 - drop), sd, dips) end
  end
  return a, b, f
end

local flagged = 0
for _ = 1, 2000 do
  local a, b, f = set(16, 0.01 + 0.04 * math.random(), 0, 0.1, 1)
  if licence.decide(a, b, f[1]).drop then flagged = flagged + 1 end
end
print("no drop, 16 rounds, noise 1-5%, dips 10%: flagged", flagged, "of 2000")

local runs = 0
for _ = 1, 500 do
  local a, b, f = set(16, 0.01 + 0.04 * math.random(), 0, 0.1, 10)
  local any = false
  for j = 1, 10 do any = any or licence.decide(a, b, f[j]).drop end
  if any then runs = runs + 1 end
end
print("no drop, 10 families a run: runs with any flagged", runs, "of 500")

for _, c in ipairs { { 0.03, 0.005, 0 }, { 0.03, 0.01, 0 }, { 0.03, 0.01, 0.1 }, { 0.08, 0.01, 0.1 },
                     { 0.08, 0.02, 0.1 }, { 0.13, 0.05, 0.1 } } do
  local found = 0
  for _ = 1, 200 do
    local a, b, f = set(24, c[2], c[1], c[3], 1)
    if licence.decide(a, b, f[1]).drop then found = found + 1 end
  end
  print(string.format("drop %.0f%% noise %.1f%% dips %.0f%%, 24 rounds: found in %d of 200",
                      100 * c[1], 100 * c[2], 100 * c[3], found))
end
