-- Whole programs written with avxbuf, against the same programs written the
-- plain-Lua way (Lua 5.4: string.pack, table.concat, string.find) or, under
-- LuaJIT, LuaJIT's own way (string.buffer and FFI casts), measured in the
-- same run (issue 20, item 4):
--   records_write  N records "<I4 I4 d s1" written to a file
--   records_read   that file read back: one field summed, a filter counted
--   log_scan       a generated log scanned for a token, the hits counted
--   frames         length-prefixed frames built from pieces into one output
-- Every variant must give the same output (the file's bytes, the sums and
-- counts, the frames' bytes): checked after every timed batch. Time: CPU
-- seconds (os.clock) per program run, median of interleaved rounds (every
-- variant once per round, the order alternating); ratio avxbuf/other: the
-- Hodges-Lehmann estimate over the paired rounds and its 95% interval
-- (lua/avxbuf/stats.lua; none under 6 rounds).
--   lua5.4 bench/programs.lua [--quick] [--only PROGRAM,...] [--rounds N] [--passing half|none|all]
--                             [--json FILE]                  (after `make`)
--   luajit bench/programs.lua [--quick] ...                  (after `make LUA=luajit`)
-- Plain Lua 5.1 syntax: LuaJIT runs it.
local jit = rawget(_G, "jit")
package.path = "lua/?.lua;lua/?/init.lua;bench/lib/?.lua;" .. package.path
package.cpath = (jit and "build/luajit/?.so;" or "build/?.so;") .. package.cpath
local argparse = require "argparse"
local avxbuf = require "avxbuf"
local harness = require "harness"
local stats = require "avxbuf.stats"
local spack = string.pack
if not jit and not spack then error("needs Lua 5.3 or later (string.pack) or LuaJIT") end

local PROGRAMS = { "records_write", "records_read", "log_scan", "frames" }
local parser = argparse("programs.lua", "whole programs: avxbuf against the plain way (Lua 5.4) "
                        .. "or LuaJIT's own way (string.buffer, FFI)")
parser:flag("--quick", "small data and 6 rounds: a few seconds per program")
parser:option("--only", "only these programs, in this order (comma-separated: " .. table.concat(PROGRAMS, ", ")
              .. "): what ran before one leaves the heap it meets, docs/luajit.md")
parser:option("--rounds", "measured rounds (at least 6 for an interval); default 6, 9 without --quick")
parser:option("--json", "write the results to this file")
parser:option("--passing", "records_read: which records pass its filter (half: the second half, "
              .. "where the branch turns once; none; all)", "half"):choices { "half", "none", "all" }
local args = parser:parse()

local quick = args.quick
local ROUNDS = tonumber(args.rounds) or (quick and 6 or 9)
local MIN_TIME = quick and 0.05 or 0.2   -- a timed batch repeats a program until it takes this long
local SIZES = {
  records = quick and 100000 or 1000000,        -- records written and read
  log = quick and 4 * 2 ^ 20 or 64 * 2 ^ 20,    -- bytes of log
  frames = quick and 10000 or 100000,           -- frames built
}
local CHUNK = 64 * 1024                         -- the plain log scan reads this much at a time

local known, order = {}, {}
for _, name in ipairs(PROGRAMS) do known[name] = true end
for name in (args.only or table.concat(PROGRAMS, ",")):gmatch("[^,%s]+") do
  if not known[name] then parser:error("--only: no program " .. name) end
  order[#order + 1] = name
end

-- The other way: LuaJIT's own under LuaJIT, the plain way elsewhere.
local OTHER = jit and "own" or "plain"
local OTHER_LABEL = jit and "LuaJIT's own" or "plain Lua"

local command = { arg[-1] or "lua", arg[0] }
for i = 1, #arg do command[#command + 1] = arg[i] end
print(string.format("# %s", avxbuf.cpu().reason))
print(string.format("# %s, avxbuf %s%s; command: %s", jit and jit.version or _VERSION, avxbuf.version,
                    avxbuf.ffi and " (FFI path)" or "", table.concat(command, " ")))
print(string.format("# sizes: %d records, %s of log (token search, %s chunks for string.find), %d frames",
                    SIZES.records, harness.size_label(SIZES.log), harness.size_label(CHUNK), SIZES.frames))
print(string.format("# CPU time per program run, median of %d interleaved rounds; ratio = avxbuf / %s: "
                    .. "Hodges-Lehmann over the paired rounds [95%% interval, Wilcoxon] +- robust sd of the rounds; "
                    .. "faults/run: page faults per run, median, avxbuf / %s (- where /proc/self/stat is not there)",
                    ROUNDS, OTHER_LABEL, OTHER_LABEL))

-- LuaJIT's own tools, only under LuaJIT.
local ffi, sbuf, bit
if jit then
  ffi, sbuf, bit = require "ffi", require "string.buffer", require "bit"
  assert(ffi.abi("le"), "the FFI variants write little-endian fields with native stores")
  ffi.cdef [[
    typedef struct __attribute__((packed)) { uint32_t id, a; double x; uint8_t len; } programs_record;
  ]]
end

local function write_file(path, data)
  local f = assert(io.open(path, "wb"))
  assert(f:write(data))
  f:close()
end

local function read_file(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

---------------------------------------------------------------------------
-- The programs: each {title, what, setup() (untimed, once), variants =
-- {avxbuf =, plain =, own =} (each a program run; nil where the
-- interpreter has not what it needs), fingerprint(...) of a run's results
-- (a string every variant must give alike), describe(fingerprint) for the
-- report where the fingerprint is the bytes themselves}. Temporary files
-- are removed at the end.
---------------------------------------------------------------------------

-- Records: an id, an int derived from it, a double (k / 8: exact) and a
-- short name, little-endian: 16 fixed bytes, a length byte, the name.
local RECORD = "<I4 I4 d s1"
local NAMES = { "ada", "grace", "edsger", "barbara", "donald", "frances", "ken", "margaret" }
local function derived(k) return k * 7919 % 100003 end

local records_path = os.tmpname()

local records_write = {
  title = "records_write", what = string.format('%d records "%s" written to a file', SIZES.records, RECORD),
  variants = {
    avxbuf = function()
      local n, b = SIZES.records, avxbuf.new()
      for k = 1, n do b:pack(RECORD, k, derived(k), k / 8, NAMES[k % 8 + 1]) end
      local f = assert(io.open(records_path, "wb"))
      assert(b:write(f))
      f:close()
    end,
    plain = spack and function()
      local n, t = SIZES.records, {}
      for k = 1, n do t[k] = spack(RECORD, k, derived(k), k / 8, NAMES[k % 8 + 1]) end
      write_file(records_path, table.concat(t))
    end,
    own = jit and function()
      local n, b, cast, copy = SIZES.records, sbuf.new(), ffi.cast, ffi.copy
      local record_ptr = ffi.typeof("programs_record *")
      for k = 1, n do
        local name = NAMES[k % 8 + 1]
        local len = #name
        local p = b:reserve(17 + len)
        local r = cast(record_ptr, p)
        r.id, r.a, r.x, r.len = k, derived(k), k / 8, len
        copy(p + 17, name, len)
        b:commit(17 + len)
      end
      write_file(records_path, b)
    end,
  },
  fingerprint = function() return read_file(records_path) end,   -- the bytes written
  describe = function(bytes) return string.format("%d bytes written", #bytes) end,
}

-- The file records_read reads: written once, by avxbuf (records_write
-- checks that every variant writes these same bytes).
local records_input = os.tmpname()
-- x = k / 8 >= LIMIT: the second half passes. Under LuaJIT the branch
-- that turns there sends every later record through a side trace, which
-- links back to the start of the loop's trace, not its loop: each record
-- then runs the part a trace does once before its loop too
-- (docs/runs/zen3-vm-2026-12-01.md).
local LIMIT = ({ half = SIZES.records / 16, none = math.huge, all = -math.huge })[args.passing]

local records_read = {
  title = "records_read", what = "the records file read back: field a summed, records with x >= N/16 counted",
  setup = function()
    local b = avxbuf.new()
    for k = 1, SIZES.records do b:pack(RECORD, k, derived(k), k / 8, NAMES[k % 8 + 1]) end
    local f = assert(io.open(records_input, "wb"))
    assert(b:write(f))
    f:close()
  end,
  variants = {
    avxbuf = function()
      local b, f = avxbuf.new(), assert(io.open(records_input, "rb"))
      assert(b:read(f))
      f:close()
      local i, n, records, sum, passing = 1, #b, 0, 0, 0
      while i <= n do
        local _, a, x
        _, a, x, _, i = b:unpack(i, RECORD)
        records, sum = records + 1, sum + a
        if x >= LIMIT then passing = passing + 1 end
      end
      return records, sum, passing
    end,
    plain = spack and function()
      local s, unpack = read_file(records_input), string.unpack
      local i, n, records, sum, passing = 1, #s, 0, 0, 0
      while i <= n do
        local _, a, x
        _, a, x, _, i = unpack(RECORD, s, i)
        records, sum = records + 1, sum + a
        if x >= LIMIT then passing = passing + 1 end
      end
      return records, sum, passing
    end,
    own = jit and function()
      local s = read_file(records_input)
      local base, cast = ffi.cast("const uint8_t *", s), ffi.cast
      local record_ptr = ffi.typeof("const programs_record *")
      local off, n, records, sum, passing = 0, #s, 0, 0, 0
      while off < n do
        local r = cast(record_ptr, base + off)
        records, sum = records + 1, sum + r.a
        if r.x >= LIMIT then passing = passing + 1 end
        off = off + 17 + r.len
      end
      return records, sum, passing
    end,
  },
  fingerprint = function(records, sum, passing)
    return string.format("%.0f records, sum %.0f, %.0f passing", records, sum, passing)
  end,
}

-- Log: lines of a time, a worker and 4 to 15 words; the token, itself a
-- word, in about one line of 40. Its first letter, r, is common in the
-- words, so a search that stops at every candidate first byte stops often.
-- The log is 4096 such lines drawn at random, over and over.
local TOKEN = "refused"
local WORDS = { "lorem", "ipsum", "dolor", "sit", "amet", "consectetur", "adipiscing", "elit", "sed", "do",
                "eiusmod", "tempor", "incididunt", "ut", "labore", "et", "dolore", "magna", "aliqua",
                "connection", "worker", "request", "retry", "queue", "error", "reader", "timeout" }
local log_path, log_expected = os.tmpname(), 0

local function make_log(bytes)
  local rand, lines, has_token = harness.rng(20), {}, {}
  for k = 1, 4096 do
    local words = { string.format("%02d:%02d:%02d worker-%d", rand(24), rand(60), rand(60), rand(16)) }
    local count, at = 4 + rand(12), rand(40) == 0 and rand(4) + 2 or nil
    for w = 2, count + 1 do words[w] = w == at and TOKEN or WORDS[rand(#WORDS) + 1] end
    lines[k], has_token[k] = table.concat(words, " ") .. "\n", at and 1 or 0
  end
  local t, len, inserted = {}, 0, 0
  while true do
    local k = rand(#lines) + 1
    if len + #lines[k] > bytes then break end
    t[#t + 1], len, inserted = lines[k], len + #lines[k], inserted + has_token[k]
  end
  return table.concat(t), inserted
end

-- string.find, plain, over chunks: each chunk after the last #TOKEN - 1
-- bytes of the one before, so that a token across two chunks is found
-- once (those bytes are too few to hold a whole one). The avxbuf variant
-- reads the same chunks into one reused buffer: both do the same I/O, and
-- neither holds the whole log.
local function find_in_chunks()
  local f, find, keep = assert(io.open(log_path, "rb")), string.find, #TOKEN - 1
  local hits, carry = 0, ""
  while true do
    local chunk = f:read(CHUNK)
    if not chunk then break end
    local s = carry .. chunk
    local init = 1
    while true do
      local _, j = find(s, TOKEN, init, true)
      if not j then break end
      hits, init = hits + 1, j + 1
    end
    carry = s:sub(-keep)
  end
  f:close()
  return hits
end

local log_scan = {
  title = "log_scan", what = string.format('a %s log searched for "%s" (plain), hits counted',
                                           harness.size_label(SIZES.log), TOKEN),
  setup = function()
    local text
    text, log_expected = make_log(SIZES.log)
    write_file(log_path, text)
  end,
  variants = {
    avxbuf = function()   -- the same chunks, read into one buffer after the bytes kept
      local b, f, keep = avxbuf.new(), assert(io.open(log_path, "rb")), #TOKEN - 1
      local hits = 0
      while assert(b:read(f, CHUNK)) > 0 do
        local init = 1
        while true do
          local _, j = b:find(TOKEN, init, true)
          if not j then break end
          hits, init = hits + 1, j + 1
        end
        local n = #b
        if n > keep then
          b:copy(1, b, n - keep + 1, keep)
          b:resize(keep)
        end
      end
      f:close()
      return hits
    end,
    plain = find_in_chunks,
    own = find_in_chunks,   -- LuaJIT's own way is the same: string.find on chunks
  },
  fingerprint = function(hits)
    if hits ~= log_expected then error(string.format("%d hits, the log has %d", hits, log_expected)) end
    return string.format("%d hits", hits)
  end,
}

-- Frames: a big-endian 2-byte length, then a header and a body piece taken
-- from tables in turn: 20 to 330 bytes each.
local HEADERS, BODIES = {}, {}
for k = 1, 7 do HEADERS[k] = string.format("v1 stream=%d type=%s\r\n", k * 3, NAMES[k]) end
for k = 1, 19 do BODIES[k] = string.format("body %d|", k) .. ("0123456789abcdef"):rep(k % 19) end

local frames = {
  title = "frames", what = string.format("%d frames (>I2 length, header, body) built into one output",
                                         SIZES.frames),
  variants = {
    avxbuf = function()
      local out = avxbuf.new()
      for k = 1, SIZES.frames do
        local h, b = HEADERS[k % 7 + 1], BODIES[k % 19 + 1]
        out:pack(">I2", #h + #b)
        out:put(h, b)
      end
      return out
    end,
    plain = spack and function()
      local t, j = {}, 0
      for k = 1, SIZES.frames do
        local h, b = HEADERS[k % 7 + 1], BODIES[k % 19 + 1]
        t[j + 1], t[j + 2], t[j + 3], j = spack(">I2", #h + #b), h, b, j + 3
      end
      return table.concat(t)
    end,
    own = jit and function()
      local out, rshift, band = sbuf.new(), bit.rshift, bit.band
      for k = 1, SIZES.frames do
        local h, b = HEADERS[k % 7 + 1], BODIES[k % 19 + 1]
        local n, p = #h + #b, out:reserve(2)
        p[0], p[1] = rshift(n, 8), band(n, 255)
        out:commit(2)
        out:put(h, b)
      end
      return out
    end,
  },
  fingerprint = function(out) return tostring(out) end,   -- the frames' bytes
  describe = function(bytes) return string.format("%d bytes built", #bytes) end,
}

local ALL = { records_write, records_read, log_scan, frames }

---------------------------------------------------------------------------
-- Measurement
---------------------------------------------------------------------------

-- Seconds per run of fn over a batch of reps runs, and the fingerprint of
-- the last run's results. The batch starts after a full collection (so one
-- variant's garbage is not collected in another's time), and every run
-- ends with one, inside the time: each run pays for freeing what it
-- dropped, however its collector paces that, and finds nothing of the run
-- before. (With one collection per batch, LuaJIT's pause left most of
-- string.buffer's dropped blocks to the untimed one, while avxbuf's pacing
-- freed its own within the batch: unmapping a 32 MiB buffer's written
-- pages takes ~1.4 ms here. And a run that read the records file again
-- got the previous run's 22 MB string back from LuaJIT's string table,
-- uncollected, instead of allocating and faulting in a new one: 18 000
-- page faults in 20 reads against 116 000. docs/runs/zen3-vm-2026-12-01.md.) The last
-- run's results stay alive, in every variant alike.
-- Also the page faults per run, read outside the time: whether a run's
-- memory came from pages the process had or was faulted in anew decides
-- much of its time, and what ran before decides which (docs/luajit.md,
-- "Programs and the heap they meet").
local function minor_faults()   -- this process's so far (/proc/self/stat's minflt), or nil
  local f = io.open("/proc/self/stat")
  local line = f and f:read("*l")
  if f then f:close() end
  local rest = line and line:match("%) (.*)")   -- the fields after the command's name
  local k, value = 0, nil
  for field in (rest or ""):gmatch("%S+") do
    k = k + 1
    if k == 8 then value = tonumber(field) break end   -- field 10 of proc(5)
  end
  return value
end

local function timed_batch(program, fn, reps)
  collectgarbage("collect")
  local a, b, c
  local f0 = minor_faults()
  local t0 = os.clock()
  for _ = 1, reps do
    a, b, c = fn()
    collectgarbage("collect")   -- (the run before's results with it)
  end
  local dt = (os.clock() - t0) / reps
  local f1 = minor_faults()
  return dt, program.fingerprint(a, b, c), f0 and f1 and (f1 - f0) / reps
end

local function time_label(s)
  if s < 1e-3 then return string.format("%.1f us", s * 1e6) end
  if s < 1 then return string.format("%.1f ms", s * 1e3) end
  return string.format("%.2f s", s)
end

-- Runs a program's two variants in interleaved rounds, checking every
-- batch's output against the first's; returns its result row.
local function measure(program)
  local names = { "avxbuf", OTHER }
  local fns = { program.variants.avxbuf, program.variants[OTHER] }
  if program.setup then program.setup() end
  local reference, reps, samples, faults = nil, {}, { {}, {} }, { {}, {} }
  local function check(v, fp)
    reference = reference or fp
    if fp ~= reference then
      error(string.format("%s: %s's output differs from avxbuf's (%s)", program.title, names[v],
                          #fp < 200 and fp or #fp .. " bytes"))
    end
  end
  for v = 1, 2 do reps[v] = harness.calibrate(fns[v], MIN_TIME) end   -- also the warm-up (JIT traces)
  for round = 1, ROUNDS do
    for step = 1, 2 do
      local v = round % 2 == 1 and step or 3 - step   -- avxbuf first in odd rounds, second in even ones
      local dt, fp, nf = timed_batch(program, fns[v], reps[v])
      check(v, fp)
      samples[v][round], faults[v][round] = dt, nf
    end
  end
  local st = stats.ratio(samples[2], samples[1])   -- avxbuf / other, paired by round
  local per_round = {}
  for k = 1, ROUNDS do per_round[k] = samples[1][k] / samples[2][k] end
  return { title = program.title, what = program.what, variants = names, reps = reps,
           seconds = { harness.median(samples[1]), harness.median(samples[2]) }, samples = samples,
           faults = #faults[1] == ROUNDS and { harness.median(faults[1]), harness.median(faults[2]) } or nil,
           ratio = st.ratio, ci = st.ci, spread_pct = stats.robust_sd(per_round) / st.ratio * 100,
           check = program.describe and program.describe(reference) or reference }
end

print(string.format("\n%-14s %10s %13s %8s %14s %6s %13s  %s", "program", "avxbuf", OTHER_LABEL, "ratio", "95% CI",
                    "+-sd", "faults/run", "output (identical in every batch)"))
local rows, by_title = {}, {}
for _, program in ipairs(ALL) do by_title[program.title] = program end
for _, name in ipairs(order) do
  local r = measure(by_title[name])
  rows[#rows + 1] = r
  print(string.format("%-14s %10s %13s %7.2fx %14s %5.0f%% %13s  %s", r.title, time_label(r.seconds[1]),
                      time_label(r.seconds[2]), r.ratio,
                      r.ci and string.format("[%.2f-%.2f]", r.ci[1], r.ci[2]) or "[-]", r.spread_pct,
                      r.faults and string.format("%.0f / %.0f", r.faults[1], r.faults[2]) or "-", r.check))
end
for _, path in ipairs { records_path, records_input, log_path } do os.remove(path) end

-- The goals of issue 20: on LuaJIT within 1.2x of LuaJIT's own way (the
-- interval's upper end at most 1.3); on Lua 5.4 faster than the plain way.
print(string.format("\n# summary: %s", jit and "avxbuf within 1.2x of LuaJIT's own way, the interval's upper end <= 1.3"
                    or "avxbuf faster than the plain way (the interval below 1)"))
for _, r in ipairs(rows) do
  local verdict
  if not r.ci then
    verdict = "no interval (fewer than 6 rounds)"
  elseif jit then
    verdict = (r.ratio <= 1.2 and r.ci[2] <= 1.3) and "yes" or "no"
  else
    verdict = r.ci[2] < 1 and "yes" or r.ci[1] > 1 and "no: slower" or "not shown: the interval holds 1"
  end
  r.goal_met = verdict == "yes"
  print(string.format("%-14s %.2fx %-15s %s", r.title, r.ratio,
                      r.ci and string.format("[%.2f-%.2f]", r.ci[1], r.ci[2]) or "[-]", verdict))
end

if args.json then
  harness.write_json(args.json, { cpu = avxbuf.cpu().reason, interpreter = jit and jit.version or _VERSION,
                                  command = table.concat(command, " "), rounds = ROUNDS, sizes = SIZES,
                                  other = OTHER_LABEL, programs = rows })
end
