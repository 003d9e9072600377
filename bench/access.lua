-- Search and typed access from Lua, against the plain-Lua ways of doing the
-- same, measured in the same run (interleaved rounds, medians):
--   find:   buf:find(needle) | string.find(s, needle, 1, true) on a string
--           with the same bytes | buf:tostring():find(...) (a buffer made a
--           string first) | buf:find with kernel = "libc" (glibc's memmem)
--   unpack: buf:unpack(i, fmt) | string.unpack(fmt, s, i) on a string |
--           string.unpack(fmt, buf:tostring(i, j))
--   match, match_at, gmatch: buf:match/buf:gmatch | string.match/gmatch on
--           a string with the same bytes | buf:tostring() first
--   lines:  buf:read(file) + buf:lines() | buf:lines() on bytes already
--           read | io.lines(path), on the same file
--   pack:   N appending buf:pack(fmt, ...) of one record | string.pack
--           into a table + table.concat
-- The later rows print the time per operation of every column and each
-- ratio avxbuf/plain: the Hodges-Lehmann estimate over the paired rounds
-- and its 95% interval (lua/avxbuf/stats.lua), the rounds' spread.
-- lua5.4 bench/access.lua [--quick] [--only TABLE,...] [--json FILE]
package.path = "lua/?.lua;lua/?/init.lua;bench/lib/?.lua;" .. package.path
package.cpath = "build/?.so;" .. package.cpath
local argparse = require "argparse"
local avxbuf = require "avxbuf"
local harness = require "harness"
local stats = require "avxbuf.stats"

local TABLES = { "find", "find_x", "unpack", "match", "match_at", "gmatch", "lines", "pack" }
local parser = argparse("access.lua", "find, unpack, match, gmatch, lines and pack against the plain-Lua ways")
parser:flag("--quick", "fewer sizes and rounds")
parser:option("--only", "only these tables (comma-separated: " .. table.concat(TABLES, ", ") .. ")")
parser:option("--json", "write the results to this file")
local args = parser:parse()

local rounds = args.quick and 5 or 11
local min_time = args.quick and 0.01 or 0.03
local results = { cpu = avxbuf.cpu().reason, rounds = rounds }
local wanted = {}
for _, name in ipairs(TABLES) do
  results[name] = {}
  wanted[name] = not args.only
end
for name in (args.only or ""):gmatch("[^,%s]+") do
  if results[name] == nil then parser:error("--only: no table " .. name) end
  wanted[name] = true
end

print(string.format("# %s", avxbuf.cpu().reason))
print(string.format("# lua5.4 bench/access.lua%s%s: time per operation, median of %d interleaved rounds; "
                    .. "x = median of per-round ratios to the first column", args.quick and " --quick" or "",
                    args.only and " --only " .. args.only or "", rounds))

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
if wanted.find then report("find", find_columns, find_sizes, find_cases("0123456789abcdef")) end
if wanted.find_x then report("find_x", find_columns, find_sizes, find_cases("x123456789abcdef")) end
avxbuf.reset()

-- unpack: 1000 records of "<i4 i4 d" (16 bytes) read one after the other.
local RECORDS, FMT = 1000, "<i4 i4 d"
if wanted.unpack then report("unpack", { "buf:unpack", "string.unpack", "tostring + unpack" }, { RECORDS * 16 },
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
  end) end

---------------------------------------------------------------------------
-- Patterns, lines and appending pack: avxbuf against the plain-Lua ways,
-- each ratio avxbuf/plain with its interval over the paired rounds.
---------------------------------------------------------------------------

local function time_label(s)
  if s < 1e-6 then return string.format("%.1f ns", s * 1e9) end
  if s < 1e-3 then return string.format("%.2f us", s * 1e6) end
  return string.format("%.2f ms", s * 1e3)
end

-- t = {title, what, columns = {{name, short}, ...}, ratios = {{i, j}, ...}
-- (column i, avxbuf, over column j, plain), sizes, label (of a size;
-- harness.size_label by default), bytes (true: an operation covers `size`
-- bytes, so MB/s are printed too), measure(size) -> cases, one per column}.
-- A ratio is the Hodges-Lehmann estimate of the per-round ratios, with the
-- 95% interval of the Wilcoxon signed-rank test (none under 6 rounds) and
-- their robust sd in percent: how far the rounds spread.
local explained = false
local function compare(t)
  if not wanted[t.title] then return end
  if not explained then
    print("\n# below: time per operation (and MB/s where an operation covers the size) of every column; "
          .. "a/b = the avxbuf column a over the plain-Lua column b: the Hodges-Lehmann estimate over the "
          .. "paired rounds [its 95% interval, none under 6 rounds] +- the robust sd of the per-round ratios")
    explained = true
  end
  local label = t.label or harness.size_label
  print(string.format("\n%s: %s", t.title, t.what))
  local head = { string.format("%-11s", "size") }
  for _, c in ipairs(t.columns) do head[#head + 1] = string.format("%-20s", c[1]) end
  head[#head + 1] = "|"
  for _, r in ipairs(t.ratios) do
    head[#head + 1] = string.format("%-27s", t.columns[r[1]][2] .. "/" .. t.columns[r[2]][2])
  end
  print((table.concat(head, " "):gsub("%s+$", "")))
  for _, n in ipairs(t.sizes) do
    local samples = harness.interleave(t.measure(n), rounds, min_time)
    local line, row = { string.format("%-11s", label(n)) }, { size = n, columns = {}, ratios = {} }
    for i, c in ipairs(t.columns) do
      local s = harness.median(samples[i])
      local cell = { ns = s * 1e9, mb_s = t.bytes and n / s / 1e6 or nil }
      row.columns[c[1]] = cell
      line[#line + 1] = string.format("%-20s", string.format("%9s", time_label(s))
                                      .. (t.bytes and string.format(" %5.0f MB/s", cell.mb_s) or ""))
    end
    line[#line + 1] = "|"
    for _, r in ipairs(t.ratios) do
      local a, b = samples[r[1]], samples[r[2]]
      local st = stats.ratio(b, a)   -- a / b, paired by round
      local per_round = {}
      for k = 1, #a do per_round[k] = a[k] / b[k] end
      local sd = stats.robust_sd(per_round) / st.ratio * 100
      row.ratios[t.columns[r[1]][2] .. "/" .. t.columns[r[2]][2]] =
        { ratio = st.ratio, ci = st.ci, spread_pct = sd, rounds = per_round }
      line[#line + 1] = string.format("%-27s", string.format("%.2fx %s +-%.0f%%", st.ratio,
        st.ci and string.format("[%.2f-%.2f]", st.ci[1], st.ci[2]) or "[-]", sd))
    end
    print((table.concat(line, " "):gsub("%s+$", "")))
    results[t.title][#results[t.title] + 1] = row
  end
end

-- Every column must compute the same thing before any is timed (a buffer
-- returned counts as its contents).
local function same(cases, what)
  local function results_of(fn)
    local r = table.pack(fn())
    for k = 1, r.n do if type(r[k]) == "userdata" then r[k] = r[k]:tostring() end end
    return r
  end
  local first = results_of(cases[1].fn)
  for i = 2, #cases do
    local r = results_of(cases[i].fn)
    for k = 1, math.max(first.n, r.n) do
      if first[k] ~= r[k] then
        error(string.format("%s: column %d gives %s where column 1 gives %s", what, i, tostring(r[k]),
                            tostring(first[k])))
      end
    end
  end
  return cases
end

-- Prose of n bytes: words, spaces and commas; no '=' and no digits.
local WORDS = { "lorem", "ipsum", "dolor", "sit", "amet", "consectetur", "adipiscing", "elit", "sed", "do",
                "eiusmod", "tempor", "incididunt", "ut", "labore", "et", "dolore", "magna", "aliqua" }
local function prose(n)
  local t, len, k = {}, 0, 0
  while len < n do
    k = k + 1
    local w = WORDS[k * 7 % #WORDS + 1] .. (k % 9 == 0 and ", " or " ")
    t[k], len = w, len + #w
  end
  return table.concat(t):sub(1, n)
end

local PATTERN_SIZES = args.quick and { 64, 4096, 65536 } or { 64, 4096, 65536, 1 << 20 }
local KV, TAIL = "(%w+)=(%d+)", " key=12345"   -- the pattern, and its one match: the text's last bytes
local PATTERN_COLUMNS = function(fn)
  return { { "buf:" .. fn, "buf" }, { "string." .. fn, "string" }, { "tostring():" .. fn, "tostring" } }
end
local PATTERN_RATIOS = { { 1, 2 }, { 1, 3 } }

-- match: a scan from the start that finds its one match at the end: every
-- position is tried (the pattern's work, which grows with the size).
compare { title = "match", what = 'match("(%w+)=(%d+)") from 1; the one match is the last 10 bytes',
  columns = PATTERN_COLUMNS("match"), ratios = PATTERN_RATIOS, sizes = PATTERN_SIZES, bytes = true,
  measure = function(n)
    local s = prose(n - #TAIL) .. TAIL
    local b = avxbuf.from(s)
    return same({
      { fn = function() return b:match(KV) end },
      { fn = function() return s:match(KV) end },
      { fn = function() return b:tostring():match(KV) end },
    }, "match")
  end }

-- match_at: the same text, matched from 32 bytes before its end (where a
-- parser that knows the position looks): little work whatever the size.
compare { title = "match_at",
  what = 'match("(%w+)=(%d+)", #s - 31): the same text, from 32 bytes before the end',
  columns = PATTERN_COLUMNS("match"), ratios = PATTERN_RATIOS, sizes = PATTERN_SIZES,
  measure = function(n)
    local s = prose(n - #TAIL) .. TAIL
    local b, init = avxbuf.from(s), n - 31
    return same({
      { fn = function() return b:match(KV, init) end },
      { fn = function() return s:match(KV, init) end },
      { fn = function() return b:tostring():match(KV, init) end },
    }, "match_at")
  end }

-- gmatch: every word of the prose, counted.
compare { title = "gmatch", what = 'for w in gmatch("%a+"): every word of the text, counted',
  columns = PATTERN_COLUMNS("gmatch"), ratios = PATTERN_RATIOS, sizes = PATTERN_SIZES, bytes = true,
  measure = function(n)
    local s = prose(n)
    local b = avxbuf.from(s)
    local function count(iter) local c = 0 for _ in iter do c = c + 1 end return c end
    return same({
      { fn = function() return count(b:gmatch("%a+")) end },
      { fn = function() return count(s:gmatch("%a+")) end },
      { fn = function() return count(b:tostring():gmatch("%a+")) end },
    }, "gmatch")
  end }

-- lines: a file of n bytes of log lines ("METHOD /path STATUS BYTES", ~45
-- bytes each), every line counted: read into a reused buffer and walked
-- with buf:lines(); buf:lines() alone on the bytes already read; io.lines.
local temporary = {}   -- files removed at the end of the table
local function log_text(n)
  local t, len, r = {}, 0, harness.rng(1)
  local methods = { "GET", "GET", "GET", "POST", "PUT", "DELETE" }
  while len < n do
    local line = string.format("%s /static/img/item-%d.html %d %d\n", methods[r(6) + 1], r(100000),
                               200 + r(4) * 100, r(250000))
    t[#t + 1], len = line, len + #line
  end
  return table.concat(t):sub(1, n - 1) .. "\n"
end
compare { title = "lines", what = "every line of a file of log lines (~45 B each), counted",
  columns = { { "buf:read+lines()", "read+lines" }, { "buf:lines()", "lines" }, { "io.lines(path)", "io.lines" } },
  ratios = { { 1, 3 }, { 2, 3 } }, sizes = args.quick and { 1 << 20 } or { 1 << 20, 16 << 20 }, bytes = true,
  measure = function(n)
    local path = os.tmpname()
    local f = assert(io.open(path, "wb"))
    f:write(log_text(n))
    f:close()
    local b, m = avxbuf.new(), avxbuf.new()
    f = assert(io.open(path, "rb"))
    assert(m:read(f) == n)
    f:close()
    local cases = same({
      { fn = function()
          local file = assert(io.open(path, "rb"))
          b:reset()
          b:read(file)
          file:close()
          local c = 0
          for _ in b:lines() do c = c + 1 end
          return c
        end },
      { fn = function() local c = 0 for _ in m:lines() do c = c + 1 end return c end },
      { fn = function() local c = 0 for _ in io.lines(path) do c = c + 1 end return c end },
    }, "lines")
    temporary[#temporary + 1] = path   -- kept until the rounds are done
    return cases
  end }
for _, path in ipairs(temporary) do os.remove(path) end

-- pack: N records "<I4ds1" (an id, a double, a name) appended to a buffer
-- emptied by reset() (its memory kept) or to a new buffer (grown as it
-- goes), against string.pack of each into a table and table.concat.
local PACK_FMT = "<I4ds1"
local NAMES = { "ada", "grace", "edsger", "barbara", "donald", "frances" }
compare { title = "pack", what = 'N records "<I4ds1" (~20 B each) appended',
  columns = { { "buf:pack (reset)", "reset" }, { "buf:pack (new)", "new" }, { "string.pack+concat", "string" } },
  ratios = { { 1, 3 }, { 2, 3 } }, sizes = args.quick and { 1000 } or { 1000, 100000 },
  label = function(n) return string.format("%d rec", n) end,
  measure = function(n)
    local b, spack, concat = avxbuf.new(), string.pack, table.concat
    return same({
      { fn = function()
          b:reset()
          for k = 1, n do b:pack(PACK_FMT, k, k / 8, NAMES[k % 6 + 1]) end
          return b
        end },
      { fn = function()
          local nb = avxbuf.new()
          for k = 1, n do nb:pack(PACK_FMT, k, k / 8, NAMES[k % 6 + 1]) end
          return nb
        end },
      { fn = function()
          local t = {}
          for k = 1, n do t[k] = spack(PACK_FMT, k, k / 8, NAMES[k % 6 + 1]) end
          return concat(t)
        end },
    }, "pack")
  end }

if args.json then harness.write_json(args.json, results) end
