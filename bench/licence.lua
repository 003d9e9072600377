-- Does wide vector code lower this core's clock? avxbuf.licence's probe
-- (lua/avxbuf/licence.lua): every vector family's zero and copy, and the
-- string instructions, in bursts on an L1-resident buffer, each followed
-- at once by the clock probe, interleaved with scalar baselines and an
-- A/A pair of them; the table a person reads, and the report as JSON.
-- lua5.4 bench/licence.lua [--seconds S] [--pin CPU|none] [--json FILE]
local cli = dofile "bench/lib/cli.lua"
local avxbuf = require "avxbuf"
local bench = require "harness"

local parser = cli.argparse("licence.lua", "the core clock after each vector family's burst, against scalar code")
parser:option("--seconds", "CPU time for the probe (at least 8 rounds run whatever it says)", "2")
cli.pin_option(parser)
parser:option("--json", "write the report to this file")
local args = parser:parse()

-- One CPU: the probe measures the core it runs on.
local pin = cli.pin(parser, args.pin)

local cpu = avxbuf.cpu()
print(string.format("# %s (%s, family 0x%X, model 0x%02X, stepping %d)%s", cpu.brand, cpu.uarch, cpu.family,
                    cpu.model, cpu.stepping, pin and string.format("; pinned to CPU %d", pin) or ""))
print("# policy: " .. cpu.reason)
local report = avxbuf.licence(tonumber(args.seconds))
print(tostring(report))
print("# ratio: the family's clock / the mean of the two scalar baselines of the same round, Hodges-Lehmann; "
      .. "95% CI by the Wilcoxon signed-rank test (lua/avxbuf/stats.lua); a drop is named only where the "
      .. "interval excludes 1 and the ratio lies below 1 - the A/A noise (the farthest its interval strays from 1)")
if args.json then bench.write_json(args.json, { cpu = cpu, report = report }) end
