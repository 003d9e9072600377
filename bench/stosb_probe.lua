-- The rep stosb measurement (src/core/measured.c) checked against a second,
-- independent one: in each of N fresh processes, the verdict the module took
-- at its first fill of 4 times the L2, then in the same process loops of
-- that fill by rep stosb and by the vector kernel (knobs force each), timed
-- from Lua, interleaved. Where the two disagree, the verdict was wrong for
-- that process. Also the first fill's time (the measurement's cost) beside
-- the next one's.
--   lua5.4 bench/stosb_probe.lua [--processes 10] [--pin N]
local cli = dofile "bench/lib/cli.lua"
local parser = cli.argparse("stosb_probe.lua", "the rep stosb measurement against loops of the same fills")
parser:option("--processes", "fresh processes", "10"):convert(tonumber)
parser:option("--child", "(one process's part: its output line)"):hidden(true)
cli.pin_option(parser)
local args = parser:parse()

if not args.child then
  local avxbuf = require "avxbuf"
  local size = avxbuf.cpu().default.rep_stosb_probe_size
  if size == 0 then print("this CPU's policy measures nothing (rep_stosb_probe_size 0)") return end
  print(string.format("# %s\n# fill of %d bytes (4 x L2); times in microseconds, medians", avxbuf.cpu().reason, size))
  print("# verdict  ratio    A/A  | loops: rep  vector  ratio | first fill  next fill (ms)")
  local agree = 0
  for _ = 1, args.processes do
    local h = io.popen(string.format("%s bench/stosb_probe.lua --child 1 --pin %s", arg[-1], args.pin or "none"))
    local line = h:read("a"):gsub("\n$", "")
    h:close()
    print(line)
    if line:find("agree$") then agree = agree + 1 end
  end
  print(string.format("%d of %d processes: the verdict agrees with the loops", agree, args.processes))
  return
end

cli.pin(parser, args.pin)
local avxbuf = require "avxbuf"
local bench = require "harness"
local size = avxbuf.cpu().default.rep_stosb_probe_size
local b = avxbuf.new()
b:put(("\17"):rep(size))   -- (pages touched by a copy: no fill before the one timed)
local t0 = os.clock(); b:fill(0x33, 1, size); local first = os.clock() - t0
t0 = os.clock(); b:fill(0x34, 1, size); local next_fill = os.clock() - t0
local p = avxbuf.cpu().rep_stosb_probe
if not p then   -- (both fills' A/A too wide: a third fill measures again)
  print("no verdict after two fills (the A/A was too wide each time)")
  return
end
local function case(knobs)
  return { setup = function() avxbuf.reset(); avxbuf.configure(knobs) end,
           fn = function() b:fill(0x35, 1, size) end }
end
local times = bench.interleave({ case { rep_stosb_stop_threshold = 0 }, case { rep_stosb_threshold = 0 } }, 7, 0.02)
local rep, vec = bench.median(times[1]), bench.median(times[2])
local verdict = p.fact == "unmeasured" and "unmeasured" or p.fact
local loops = rep < vec and "as fast" or "slower"
print(string.format("%-10s %.2f %6.2f  | %9.1f %7.1f %6.2f | %10.2f %10.3f  %s", verdict, p.ratio, p.aa, rep * 1e6,
                    vec * 1e6, rep / vec, first * 1e3, next_fill * 1e3,
                    verdict == loops and "agree" or verdict == "unmeasured" and "no verdict" or "DISAGREE"))
