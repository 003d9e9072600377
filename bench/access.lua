-- Search and typed access from Lua, against the plain-Lua ways of doing the
-- same, measured in the same run (interleaved rounds, medians):
--   find:   buf:find(needle) | string.find(s, needle, 1, true) on a string
--           with the same bytes | buf:tostring():find(...) (a buffer made a
--           string first) | buf:find with kernel = "libc" (glibc's memmem)
--   unpack: buf:unpack(i, fmt) | string.unpack(fmt, s, i) on a string |
--           string.unpack(fmt, buf:tostring(i, j))
-- lua5.4 bench/access.lua [--quick] [--json FILE]
package.path = "lua/?.lua;lua/?/init.lua;bench/lib/?.lua;" .. package.path
package.cpath = "build/?.so;" .. package.cpath
local argparse = require "argparse"
local avxbuf = require "avxbuf"
local harness = require "harness"

local parser = argparse("access.lua", "find and unpack against the plain-Lua ways")
parser:flag("--quick", "fewer sizes and rounds")
parser:option("--json", "write the results to this file")
local args = parser:parse()

local rounds = args.quick and 5 or 11
local min_time = args.quick and 0.01 or 0.03
local results = { cpu = avxbuf.cpu().reason, rounds = rounds, find = {}, find_x = {}, unpack = {} }

print(string.format("# %s", avxbuf.cpu().reason))
print(string.format("# lua5.4 bench/access.lua%s: time per operation, median of %d interleaved rounds; "
                    .. "x = median of per-round ratios to the first column", args.quick and " --quick" or "",
                    rounds))

local function report(title, names, sizes, measure)
  local head = { string.format("%-7s %9s", title, "size") }
  for _, name in ipairs(names) do head[#head + 1] = string.format("%24s", name) end
  print("\n" .. table.concat(head, " "))
  for _, n in ipairs(sizes) do
    local cases = measure(n)
    local samples = harness.interleave(cases, rounds, min_time)
    local line, row = { string.format("%-7s %9s", "", harness.size_label(n)) }, { size = n }
    for i, name in ipairs(names) do
      local ratios = {}
      for k = 1, rounds do ratios[k] = samples[i][k] / samples[1][k] end
      local us, ratio = harness.median(samples[i]) * 1e6, harness.median(ratios)
      line[#line + 1] = string.format("%14.2f us %6.2fx", us, ratio)
      row[name] = { us = us, ratio = ratio }
    end
    print(table.concat(line, " "))
    results[title][#results[title] + 1] = row
  end
end

-- find: a 16-byte needle that occurs only at the end, so every byte is seen;
-- once with a first byte the text never has (string.find's memchr skips
-- straight to the end: its best case), once with a first byte the text is
-- made of (memchr stops at every byte: its worst case, and what searching
-- for "</" in markup or "\r\n\r\n" in a header is like).
local find_sizes = args.quick and { 1024, 65536, 1 << 20 } or { 1024, 16384, 65536, 1 << 20, 16 << 20 }
local find_columns = { "buf:find", "string.find plain", "tostring():find", "buf:find (memmem)" }
local function find_cases(needle)
  return function(n)
    local s = ("x"):rep(n - #needle) .. needle
    local b = avxbuf.from(s)
    local function set(knobs) return function() avxbuf.reset(); avxbuf.configure(knobs) end end
    return {
      { setup = set {}, fn = function() return b:find(needle) end },
      { setup = set {}, fn = function() return s:find(needle, 1, true) end },
      { setup = set {}, fn = function() return b:tostring():find(needle, 1, true) end },
      { setup = set { kernel = "libc" }, fn = function() return b:find(needle) end },
    }
  end
end
report("find", find_columns, find_sizes, find_cases("0123456789abcdef"))
report("find_x", find_columns, find_sizes, find_cases("x123456789abcdef"))
avxbuf.reset()

-- unpack: 1000 records of "<i4 i4 d" (16 bytes) read one after the other.
local RECORDS, FMT = 1000, "<i4 i4 d"
report("unpack", { "buf:unpack", "string.unpack", "tostring + unpack" }, { RECORDS * 16 },
  function()
    local parts = {}
    for k = 1, RECORDS do parts[k] = string.pack(FMT, k, -k, k / 3) end
    local s = table.concat(parts)
    local b = avxbuf.from(s)
    local unpack = string.unpack
    return {
      { fn = function() local i = 1 for _ = 1, RECORDS do local _, _, _, j = b:unpack(i, FMT) i = j end end },
      { fn = function() local i = 1 for _ = 1, RECORDS do local _, _, _, j = unpack(FMT, s, i) i = j end end },
      { fn = function()
          for k = 0, RECORDS - 1 do unpack(FMT, b:tostring(16 * k + 1, 16 * k + 16)) end
        end },
    }
  end)

if args.json then harness.write_json(args.json, results) end
