-- Throughput sweep: every kernel this CPU can run, avxbuf's default and glibc
-- (kernel = "libc"), for copy, zero and fill, 16 B to 256 MiB; GB/s as the
-- median of interleaved rounds, and each one's ratio to libc in the same run.
-- Also the cost of small operations from Lua, in ns.
-- lua5.4 bench/kernels.lua [--quick] [--json FILE] [--svg FILE] [--ops copy,zero,fill]
local cli = dofile "bench/lib/cli.lua"
local avxbuf = require "avxbuf"
local bench = require "harness"
local kernels = require "kernel_list"

local parser = cli.argparse("kernels.lua", "avxbuf kernel sweep against glibc")
parser:flag("--quick", "fewer sizes and rounds (under a minute)")
parser:option("--json", "write all results to this file")
parser:option("--svg", "draw GB/s against size to this file")
parser:option("--ops", "operations to sweep", "copy,zero,fill")
parser:option("--max", "largest size in MiB", nil)
parser:flag("--no-offsets", "skip the copies at other offsets")
local args = parser:parse()

local max_size = (tonumber(args.max) or (args.quick and 64 or 256)) << 20
local sizes = {}
for p = 4, 28, args.quick and 2 or 1 do
  if 1 << p <= max_size then sizes[#sizes + 1] = 1 << p end
end
for _, n in ipairs(args.quick and { 100, 3000 } or { 100, 1000, 3000, 100000 }) do sizes[#sizes + 1] = n end
table.sort(sizes)
local rounds = args.quick and 3 or 7
local min_time = args.quick and 0.004 or 0.01

-- Rows: default, every kernel (by its own name), libc last.
local rows = { { name = "default", knobs = {} } }
for _, k in ipairs(kernels.list(avxbuf)) do
  if k.name ~= "libc" then rows[#rows + 1] = { name = k.name, knobs = k.knobs } end
end
rows[#rows + 1] = { name = "libc", knobs = { kernel = "libc" } }

local function set(knobs) avxbuf.reset(); avxbuf.configure(knobs) end

local cpu = avxbuf.cpu()
print(string.format("# %s; %s", cpu.brand, cpu.reason))
print(string.format("# lua5.4 bench/kernels.lua%s: GB/s, median of %d interleaved rounds; "
                    .. "x = median of per-round ratios to libc",
                    args.quick and " --quick" or "", rounds))

local dst, src = avxbuf.new(max_size), avxbuf.new(max_size, 1)
local ops = {}
for op in args.ops:gmatch("[^,]+") do ops[#ops + 1] = op end
local results = { cpu = { brand = cpu.brand, reason = cpu.reason, default = cpu.default },
                  rounds = rounds, ops = {} }
local charts = {}

for _, op in ipairs(ops) do
  local fns = {
    copy = function(n) return function() avxbuf.copy(dst, 1, src, 1, n) end end,
    zero = function(n) return function() avxbuf.zero(dst, 1, n) end end,
    fill = function(n) return function() avxbuf.fill(dst, 0x5A, 1, n) end end,
  }
  local head = { string.format("%-5s %9s", op, "size") }
  for _, r in ipairs(rows) do head[#head + 1] = string.format("%14s", r.name) end
  print(table.concat(head, " "))
  local per_row = {}
  for i = 1, #rows do per_row[i] = {} end
  local op_results = {}
  for _, n in ipairs(sizes) do
    local cases = {}
    for i, r in ipairs(rows) do cases[i] = { setup = function() set(r.knobs) end, fn = fns[op](n) } end
    local samples = bench.interleave(cases, rounds, min_time)
    local line = { string.format("%-5s %9s", "", bench.size_label(n)) }
    for i, r in ipairs(rows) do
      set(r.knobs)
      local gbs = n / bench.median(samples[i]) / 1e9
      -- The ratio is the median of per-round ratios: each round measured both
      -- back to back, so drift of the machine cancels.
      local ratios = {}
      for k = 1, rounds do ratios[k] = samples[#rows][k] / samples[i][k] end
      local ratio = bench.median(ratios)
      line[#line + 1] = string.format("%8.2f %4.2fx", gbs, ratio)
      op_results[#op_results + 1] = { size = n, row = r.name, kernel = avxbuf.kernel(op, n), gbs = gbs,
                                      ratio_to_libc = ratio, seconds = samples[i] }
      if n & (n - 1) == 0 then per_row[i][#per_row[i] + 1] = { n, gbs } end
    end
    print(table.concat(line, " "))
  end
  results.ops[op] = op_results
  local series = {}
  for i, r in ipairs(rows) do
    series[i] = { name = r.name, points = per_row[i], bold = r.name == "default" or r.name == "libc" }
  end
  charts[#charts + 1] = { title = op .. " (" .. cpu.brand .. ")", series = series }
end
avxbuf.reset()

-- Copies at every offset users meet: destination and source offsets within
-- 64 bytes, and the distance dst - src modulo 4096 (two large buffers are
-- equally page-offset, so a copy to index 2..64 of one from index 1 of the
-- other has a distance of 1..63: page aliasing). Both ends live in one
-- buffer, whose indices fix the distance exactly.
if args.ops:find("copy", 1, true) and not args.no_offsets then
  local grid_sizes = args.quick and { 256, 4096, 65536, 1 << 20 } or { 256, 1024, 4096, 16384, 65536, 262144, 1 << 20 }
  local offsets = args.quick and { 0, 1, 63 } or { 0, 1, 31, 63 }
  local span = (1 << 20) + 2 * 4096
  local arena = avxbuf.new(2 * span + 8192, 1)
  local cells = {}
  for _, n in ipairs(grid_sizes) do
    for _, doff in ipairs(offsets) do
      for _, soff in ipairs(offsets) do
        if doff + soff > 0 then
          cells[#cells + 1] = { size = n, dst_offset = doff, src_offset = soff,
                                di = 1 + span + 2048 + 64 + doff, si = 1 + 64 + soff }
        end
      end
    end
    if n >= 1024 then
      for _, dist in ipairs { 0, 1, 2, 16, 32, 48, 63, 64, 2048 } do
        cells[#cells + 1] = { size = n, distance_mod_4096 = dist, di = 1 + span + 4096 + dist, si = 1 + 4096 }
      end
    end
  end
  for _, c in ipairs(cells) do
    local cases = {}
    for i, r in ipairs(rows) do
      cases[i] = { setup = function() set(r.knobs) end,
                   fn = function() avxbuf.copy(arena, c.di, arena, c.si, c.size) end }
    end
    local samples = bench.interleave(cases, rounds, min_time)
    c.rows = {}
    for i, r in ipairs(rows) do
      local ratios = {}
      for k = 1, rounds do ratios[k] = samples[#rows][k] / samples[i][k] end
      c.rows[r.name] = { gbs = c.size / bench.median(samples[i]) / 1e9, ratio_to_libc = bench.median(ratios) }
    end
    c.di, c.si = nil, nil
  end
  results.offsets = cells
  local function label(c)
    return c.distance_mod_4096 and string.format("%s, dst-src = %d mod 4096", bench.size_label(c.size),
                                                 c.distance_mod_4096)
      or string.format("%s, dst+%d src+%d", bench.size_label(c.size), c.dst_offset, c.src_offset)
  end
  print(string.format("\n# copies at other offsets (%d cells, %s to %s): worst and best ratio to libc",
                      #cells, bench.size_label(grid_sizes[1]), bench.size_label(grid_sizes[#grid_sizes])))
  for _, r in ipairs(rows) do
    if r.name ~= "libc" then
      local worst, best
      for _, c in ipairs(cells) do
        local x = c.rows[r.name].ratio_to_libc
        if not worst or x < worst.rows[r.name].ratio_to_libc then worst = c end
        if not best or x > best.rows[r.name].ratio_to_libc then best = c end
      end
      print(string.format("%-14s worst %5.2fx (%s)   best %5.2fx (%s)", r.name, worst.rows[r.name].ratio_to_libc,
                          label(worst), best.rows[r.name].ratio_to_libc, label(best)))
    end
  end
end
avxbuf.reset()

-- The cost of small operations from Lua, against a C function that does
-- nothing with the same arguments (bench/noop.c), measured in interleaved
-- rounds: each case is a loop of calls (the loop is the case's own, so
-- nothing sits between it and the function measured), and each ratio is the
-- median of the per-round ratios.
local noop = require "noop"
local d, s = avxbuf.new(4096), avxbuf.new(256, 1)
local piece = ("p"):rep(16)
local CALLS, ROUNDS = 200000, args.quick and 11 or 21
local copy, zero, b = avxbuf.copy, avxbuf.zero, avxbuf.new()
local cases = {
  { name = "noop(d, 1, s, 1, 64)", loop = function() for _ = 1, CALLS do noop(d, 1, s, 1, 64) end end },
  { name = "noop(d, 1, 64)", loop = function() for _ = 1, CALLS do noop(d, 1, 64) end end },
  { name = "copy(d, 1, s, 1, 64)", base = 1,
    loop = function() for _ = 1, CALLS do copy(d, 1, s, 1, 64) end end },
  { name = "copy(d, 1, s, 1, 16)", base = 1,
    loop = function() for _ = 1, CALLS do copy(d, 1, s, 1, 16) end end },
  { name = "copy(d, 1, s, 1, 256)", base = 1,
    loop = function() for _ = 1, CALLS do copy(d, 1, s, 1, 256) end end },
  { name = "zero(d, 1, 64)", base = 2, loop = function() for _ = 1, CALLS do zero(d, 1, 64) end end },
  -- assembling 128 bytes from eight 16-byte strings: eight copies, or one put
  -- (the buffer is emptied every 64 puts, which costs 1/64 of a call each)
  { name = "8 x copy(d, i, p)", loop = function()
      for _ = 1, CALLS / 8 do
        copy(d, 1, piece); copy(d, 17, piece); copy(d, 33, piece); copy(d, 49, piece)
        copy(d, 65, piece); copy(d, 81, piece); copy(d, 97, piece); copy(d, 113, piece)
      end
    end },
  { name = "b:put(p, p, p, p, p, p, p, p)", base = 7, loop = function()
      for _ = 1, CALLS / 8 / 64 do
        for _ = 1, 64 do b:put(piece, piece, piece, piece, piece, piece, piece, piece) end
        b:resize(0)
      end
    end },
}
local timed = {}
for i, c in ipairs(cases) do timed[i] = { fn = c.loop } end
local samples = bench.interleave(timed, ROUNDS, 0)
print(string.format("\n# cost per call from Lua: ns, median of %d interleaved rounds of %d calls; "
                    .. "x = median of per-round ratios", ROUNDS, CALLS))
results.call_ns = {}
for i, c in ipairs(cases) do
  local ns = bench.median(samples[i]) / CALLS * 1e9
  local line = string.format("%-30s %7.1f", c.name, ns)
  local entry = { ns = ns }
  if c.base then
    local ratios = {}
    for r = 1, ROUNDS do ratios[r] = samples[i][r] / samples[c.base][r] end
    entry.ratio, entry.to = bench.median(ratios), cases[c.base].name
    line = line .. string.format("  %.2fx %s", entry.ratio, entry.to)
  end
  results.call_ns[c.name] = entry
  print(line)
end

if args.json then bench.write_json(args.json, results) end
if args.svg then
  local f = assert(io.open(args.svg, "w"))
  f:write(require("svg").render(charts, { caption = "lua5.4 bench/kernels.lua" ..
    (args.quick and " --quick" or "") .. "; " .. cpu.reason }))
  f:close()
end
