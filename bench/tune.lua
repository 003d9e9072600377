-- avxbuf.tune on this machine: the report of every crossover it measured
-- and the AVXBUF_OPTIONS line that keeps its result.
--   lua5.4 bench/tune.lua [--seconds S] [--json FILE]
package.path = "lua/?.lua;lua/?/init.lua;bench/lib/?.lua;" .. package.path
package.cpath = "build/?.so;" .. package.cpath
local argparse = require "argparse"
local avxbuf = require "avxbuf"
local bench = require "harness"

local parser = argparse("tune.lua", "measure this machine's crossovers with avxbuf.tune")
parser:option("--seconds", "the time budget (CPU seconds)", "1")
parser:option("--json", "write the settings and the report to this file")
local args = parser:parse()

local settings, report, options = avxbuf.tune(tonumber(args.seconds))
print("# " .. avxbuf.cpu().reason)
print(string.format("# avxbuf.tune(%s): %.2f s; ratio = the candidate's speed / the plan's vector kernel's "
                    .. "(median of interleaved rounds); + faster, - slower beyond the noise, . neither",
                    args.seconds, report.seconds))
for _, e in ipairs(report) do
  if e.name == "licence" then
    print(string.format("\n%s (%s):\n%s", e.name, e.op, e.licence and tostring(e.licence) or "-"))
  else print(string.format("\n%s (%s): %s against %s; noise +-%.1f%%, a difference counts from %.1f%%",
                      e.name, e.op, e.kernels and e.kernels[2] or "-", e.kernels and e.kernels[1] or "-",
                      100 * e.noise, 100 * e.margin)) end
  for i, n in ipairs(e.sizes) do
    print(string.format("  %10d B  %7.2f GB/s  %7.2f GB/s  %5.2fx %s", n, e.gbs.base[i], e.gbs.candidate[i],
                        e.ratio[i], ({ [1] = "+", [-1] = "-", [0] = "." })[e.verdict[i]]))
  end
  print(string.format("  -> %s: %s", e.decision, e.why))
end
print(string.format("\nAVXBUF_OPTIONS=%q", options))
if args.json then bench.write_json(args.json, { settings = settings, report = report, options = options }) end
