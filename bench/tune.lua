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
print(report)   -- its __tostring: each step, its sizes and its decision
print(string.format("\nAVXBUF_OPTIONS=%q", options))
if args.json then bench.write_json(args.json, { settings = settings, report = report, options = options }) end
