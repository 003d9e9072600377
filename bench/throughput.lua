-- Copy and zero throughput, avxbuf against glibc, 64 B to 64 MiB.
-- lua5.4 bench/throughput.lua [--quick] [--kernels] [--json FILE]
package.path = "lua/?.lua;lua/?/init.lua;" .. package.path
package.cpath = "build/?.so;" .. package.cpath
local argparse = require "argparse"
local avxbuf = require "avxbuf"
local bench = require "avxbuf.bench"

local parser = argparse("throughput.lua", "avxbuf copy/zero throughput against glibc memmove/memset")
parser:flag("--quick", "fewer sizes and rounds")
parser:flag("--kernels", "also each vector kernel the CPU can run")
parser:option("--json", "write the results to this file")
local args = parser:parse()

local sizes = {}
for p = 6, 26, args.quick and 4 or 2 do sizes[#sizes + 1] = 1 << p end
local rounds = args.quick and 3 or 7
local min_time = args.quick and 0.005 or 0.02

local configs = { { name = "default", knobs = {} }, { name = "libc", knobs = { kernel = "libc" } } }
if args.kernels then
  local max = avxbuf.cpu().max_use_avx
  for level = 0, max do
    configs[#configs + 1] = { name = "use_avx=" .. level,
      knobs = { use_avx = level, avx3_threshold = 0, rep_movsb_threshold = 0, rep_stosb_threshold = 0 } }
  end
end

local function set(knobs) avxbuf.reset(); avxbuf.configure(knobs) end

local cpu = avxbuf.cpu()
print(string.format("# %s, %s", cpu.brand, cpu.reason))
print(string.format("# lua5.4 bench/throughput.lua%s: GB/s, median of %d interleaved rounds",
                    args.quick and " --quick" or "", rounds))

local results = {}
for _, op in ipairs { "copy", "zero" } do
  local header = { string.format("%-6s %9s", op, "size") }
  for _, c in ipairs(configs) do header[#header + 1] = string.format("%22s", c.name) end
  header[#header + 1] = string.format("%10s", "vs libc")
  print(table.concat(header, " "))
  for _, n in ipairs(sizes) do
    local dst, src = avxbuf.new(n), avxbuf.new(n, 1)
    local cases = {}
    for i, c in ipairs(configs) do
      cases[i] = {
        setup = function() set(c.knobs) end,
        fn = op == "copy" and function() avxbuf.copy(dst, 1, src, 1, n) end
                          or function() avxbuf.zero(dst, 1, n) end,
      }
    end
    local samples = bench.interleave(cases, rounds, min_time)
    local row = { string.format("%-6s %9s", "", bench.size_label(n)) }
    local gbs = {}
    for i, c in ipairs(configs) do
      set(c.knobs)
      gbs[i] = n / bench.median(samples[i]) / 1e9
      row[#row + 1] = string.format("%22s", string.format("%.2f %s", gbs[i], avxbuf.kernel(op, n)))
      results[#results + 1] = { op = op, size = n, config = c.name, kernel = avxbuf.kernel(op, n),
                                gbs = gbs[i], seconds = samples[i] }
    end
    row[#row + 1] = string.format("%9.2fx", gbs[1] / gbs[2])
    print(table.concat(row, " "))
  end
end
avxbuf.reset()

if args.json then
  local cjson = require "cjson"
  local f = assert(io.open(args.json, "w"))
  f:write(cjson.encode { cpu = { brand = cpu.brand, reason = cpu.reason }, results = results })
  f:close()
end
