-- A/A runs of the transform benchmark: the same configuration as both rows,
-- many times over, to see how often this machine's noise alone passes for a
-- difference (it should, at 95%, about one run in twenty) and how large an
-- effect one run can tell from the noise.
--   lua5.4 bench/aa.lua [--runs 20] [--row use_avx=2] [--dir build/aa] [--quick]
package.path = "bench/lib/?.lua;" .. package.path
local argparse = require "argparse"
local cjson = require "cjson"

local parser = argparse("aa.lua", "A/A runs of bench/transform.lua")
parser:option("--runs", "how many runs", "20"):convert(tonumber)
parser:option("--row", "the configuration measured twice", "use_avx=2")
parser:option("--dir", "where each run's JSON goes", "build/aa")
parser:flag("--quick", "transform.lua --quick")
local args = parser:parse()

assert(os.execute("mkdir -p " .. args.dir))
local significant, detectable = 0, {}
for i = 1, args.runs do
  local json = string.format("%s/aa%d.json", args.dir, i)
  local cmd = string.format("lua5.4 bench/transform.lua %s--rows '%s;%s' --json %s > %s/aa%d.txt",
                            args.quick and "--quick " or "", args.row, args.row, json, args.dir, i)
  assert(os.execute(cmd), cmd)
  local f = assert(io.open(json))
  local r = cjson.decode(f:read("*a"))
  f:close()
  local row = r.rows[2]
  if row.significant then significant = significant + 1 end
  detectable[#detectable + 1] = r.noise.detectable
  print(string.format("%2d: ratio %.3f, 95%% CI %.3f-%.3f%s; noise %.1f%% (robust sd), detectable %.1f%%", i,
                      row.ratio, row.ci[1], row.ci[2], row.significant and ", a difference" or "",
                      100 * r.noise.per_round_sd, 100 * r.noise.detectable))
end
table.sort(detectable)
print(string.format("a difference in %d of %d A/A runs; the effect one run could tell from its noise: %.1f%% to %.1f%%",
                    significant, args.runs, 100 * detectable[1], 100 * detectable[#detectable]))
