-- LuaJIT: what avxbuf's FFI path costs against LuaJIT's own ffi.copy,
-- ffi.fill and string.buffer, in the same run.
--   luajit bench/ffi.lua [--quick] [--reads]   (after `make LUA=luajit`;
--   AVXBUF_BUILD=dir takes avxbuf.so from dir; --reads: only the reads)
-- Every timed loop is compiled from its own source text, with the size as a
-- literal, so that each gets traces of its own as code with a constant size
-- would (loops sharing one prototype share traces, and the first size's
-- specialisations then cost the others side exits). ns per operation: the
-- median of interleaved rounds, each the best of a few loops.
package.path = "lua/?.lua;lua/?/init.lua;bench/lib/?.lua;" .. package.path
package.cpath = (os.getenv("AVXBUF_BUILD") or "build/luajit") .. "/?.so;" .. package.cpath
local ffi = require "ffi"
local avxbuf = require "avxbuf"
local harness = require "harness"
local transform = require "transform"
local stats = require "avxbuf.stats"
assert(jit, "run this with luajit")
assert(avxbuf.ffi, "avxbuf's FFI path is not active")
local string_buffer = require "string.buffer"
local bit = require "bit"

local flags = {}
for _, a in ipairs(arg) do flags[a] = true end
local quick = flags["--quick"]
local N = quick and 2000000 or 10000000
local ROUNDS = quick and 3 or 7
local TRANSFORM_ROUNDS = quick and 6 or 15   -- 6: the fewest with a 95% interval

-- A loop of N operations, from source, with these locals in scope; as
-- locals of the loop itself with `own` (as a hot loop keeps what it uses:
-- as upvalues, a called function's was a guard that made LuaJIT load the
-- others again in every iteration, and the function form of copy ran
-- 1.1-1.2x the method form, whose code is the same: docs/luajit.md).
-- put's rows keep upvalues: a constant piece is what they measure.
local function loop(body, env, own)
  local names, values = {}, {}
  for k, v in pairs(env) do names[#names + 1] = k; values[#values + 1] = v end
  local list = table.concat(names, ", ")
  local src = string.format("local %s = ...\nreturn function() %s for _ = 1, %d do %s end end", list,
                            own and ("local " .. list .. " = " .. list) or "", N, body)
  return assert(load(src))(unpack(values))
end

local function measure(cases)
  local samples = {}
  for i = 1, #cases do samples[i] = {} end
  for _ = 1, ROUNDS do
    for i, c in ipairs(cases) do samples[i][#samples[i] + 1] = harness.best_of(c, N, 2) end
  end
  local med = {}
  for i = 1, #cases do med[i] = harness.median(samples[i]) end
  return med
end

-- avxbuf's function form in two sets of PLACEMENTS loops compiled apart,
-- and its method form in one: a loop's time depends on where its trace
-- lies (two loops of the same machine code differed by 1.3x:
-- docs/luajit.md), which one loop per form would count as a difference
-- between the forms. LuaJIT's own, the function form (the median over
-- both sets), the method form (the median over its loops), and the A/A:
-- the second set's median over the first's, the spread left between two
-- sets of the same code.
local PLACEMENTS = 3
local function forms(own, fn, method, env)
  local cases = { loop(own, env, true) }
  for _ = 1, PLACEMENTS do
    for _, body in ipairs { fn, method, fn } do cases[#cases + 1] = loop(body, env, true) end
  end
  local t = measure(cases)
  local of = { {}, {}, {} }
  for k = 2, #t do table.insert(of[(k - 2) % 3 + 1], t[k]) end
  local both = {}
  for k = 1, PLACEMENTS do both[#both + 1], both[#both + 2] = of[1][k], of[3][k] end
  return t[1], harness.median(both), harness.median(of[2]), harness.median(of[3]) / harness.median(of[1])
end

-- a compiled call has a floor: under 2 ns counts as 2 ns
local function ratio(x, base) return x / math.max(base, 2) end

print(string.format("# %s, %s; ns per operation, median of %d rounds of the best of 2 loops of %d",
                    jit.version, avxbuf.cpu().reason, ROUNDS, N))

-- Reads against the string library's nearest equivalent on the same bytes
-- (4 KiB of 40-byte lines): a slice, a byte, a plain find of the next
-- newline, consuming 16 bytes from the front (the string: sub and a
-- position), and per line or piece, lines and split against gmatch and a
-- string.find loop.
local function reads()
  local line = ("x"):rep(30) .. ",abcdefgh\n"
  local s = line:rep(math.floor(4096 / #line))
  local env = { s = s, b = avxbuf.from(s), q = avxbuf.new(), find = string.find, gmatch = string.gmatch,
                x = false }
  print(string.format("%-26s %8s %8s %7s", "read (ns per op)", "string", "avxbuf", "ratio"))
  local function row(name, str_body, buf_body, per)
    local t = measure { loop(str_body, env), loop(buf_body, env) }
    print(string.format("%-26s %8.2f %8.2f %6.2fx", name, t[1] / per, t[2] / per, ratio(t[2], t[1])))
  end
  local at = "local i = _ % 4000 + 1; "
  row("tostring(i, i + 15)", at .. "x = s:sub(i, i + 15)", at .. "x = b:tostring(i, i + 15)", 1)
  row("byte(i)", at .. "x = s:byte(i)", at .. "x = b:byte(i)", 1)
  row("find(\"\\n\", i, true)", at .. "x = find(s, '\\n', i, true)", at .. "x = b:find('\\n', i, true)", 1)
  if not env.q.get then print("(get, skip: not in this avxbuf.so)") end
  if env.q.get then
    row("get(16)", "local i = _ % 256 * 16 + 1; x = s:sub(i, i + 15)",
        "if #q < 16 then q:put(s) end; x = q:get(16)", 1)
    row("skip(16)", "local i = _ % 256 * 16 + 1; x = i + 16",
        "if #q < 16 then q:put(s) end; q:skip(16)", 1)
  end
  local lines = math.floor(#s / #line)
  row("lines (per line)", "if _ % 64 == 0 then for l in gmatch(s, '([^\\n]*)\\n') do x = l end end",
      "if _ % 64 == 0 then for l in b:lines() do x = l end end", lines / 64)
  row("split(\",\") (per piece)",
      "if _ % 64 == 0 then local p = 1 while true do local i, j = find(s, ',', p, true) "
      .. "if not i then break end x = p p = j + 1 end end",
      "if _ % 64 == 0 then for i in b:split(',') do x = i end end", lines / 64)
end
if flags["--reads"] then
  reads()
  os.exit(0)
end
print("# ratio: avxbuf / LuaJIT's own (under 2 ns counts as 2 ns: a compiled call's floor);")
print(string.format("# avxbuf: avxbuf.op, the median over two sets of %d loops compiled apart; method: buf:op, the "
                    .. "median over %d such loops, / avxbuf.op;", PLACEMENTS, PLACEMENTS))
print("# A/A: avxbuf.op's second set against its first (the spread between two sets of the same code)")
print(string.format("%-5s %6s  %-10s %8s %8s %7s %8s %7s %6s", "op", "bytes", "LuaJIT's", "ns", "avxbuf", "ratio",
                    "method", "ratio", "A/A"))
local SIZES = { 16, 64, 256, 4096 }
local OPS = {   -- LuaJIT's own, avxbuf's function, the method
  { "copy", "ffi.copy", "fcopy(cd, cs, %d)", "copy(d, 1, s, 1, %d)", "d:copy(1, s, 1, %d)" },
  { "fill", "ffi.fill", "ffill(cd, %d, 7)", "fill(d, 7, 1, %d)", "d:fill(7, 1, %d)" },
  { "zero", "ffi.fill", "ffill(cd, %d)", "zero(d, 1, %d)", "d:zero(1, %d)" },
}
for _, op in ipairs(OPS) do
  local per_size = {}
  for _, n in ipairs(SIZES) do
    local env = { d = avxbuf.new(n), s = avxbuf.new(n, 1), cd = ffi.new("uint8_t[?]", n),
                  cs = ffi.new("uint8_t[?]", n, 1), copy = avxbuf.copy, fill = avxbuf.fill,
                  zero = avxbuf.zero, fcopy = ffi.copy, ffill = ffi.fill }
    local t = { forms(op[3]:format(n), op[4]:format(n), op[5]:format(n), env) }
    per_size[#per_size + 1] = t[2]
    print(string.format("%-5s %6d  %-10s %8.2f %8.2f %6.2fx %8.2f %6.2fx %5.2fx", op[1], n, op[2], t[1], t[2],
                        ratio(t[2], t[1]), t[3], t[3] / t[2], t[4]))
  end
  local inversions = {}
  for i = 1, #SIZES - 1 do
    if per_size[i] > per_size[i + 1] then
      inversions[#inversions + 1] = string.format("%d B slower than %d B", SIZES[i], SIZES[i + 1])
    end
  end
  print(string.format("%-5s sizes in order: %s", op[1], #inversions == 0 and "yes" or table.concat(inversions, ", ")))
end

-- The loops users write: the size a variable (read from a table, so the
-- trace cannot fold it), one size per loop or several through one loop.
-- LuaJIT's own is ffi.copy/ffi.fill with that variable size (a memcpy or
-- memset call); function: avxbuf.copy(d, ...); method: d:copy(...).
do
  local CASES = {
    { "16", { 16 } }, { "64", { 64 } }, { "256", { 256 } },
    { "16-64 mixed", { 16, 24, 40, 64 } }, { "16-256 mixed", { 16, 64, 100, 256 } },
  }
  print(string.format("%-5s %-13s %-10s %8s %8s %7s %8s %7s %6s", "op", "sizes (var)", "LuaJIT's", "ns", "avxbuf",
                      "ratio", "method", "ratio", "A/A"))
  local VOPS = {
    { "copy", "ffi.copy", "fcopy(cd, cs, n)", "copy(d, 1, s, 1, n)", "d:copy(1, s, 1, n)" },
    { "fill", "ffi.fill", "ffill(cd, n, 7)", "fill(d, 7, 1, n)", "d:fill(7, 1, n)" },
  }
  for _, op in ipairs(VOPS) do
    for _, case in ipairs(CASES) do
      local ns = {}
      for k = 1, 64 do ns[k] = case[2][(k - 1) % #case[2] + 1] end
      local env = { d = avxbuf.new(256), s = avxbuf.new(256, 1), cd = ffi.new("uint8_t[?]", 256),
                    cs = ffi.new("uint8_t[?]", 256, 1), copy = avxbuf.copy, fill = avxbuf.fill,
                    fcopy = ffi.copy, ffill = ffi.fill, ns = ns }
      local pre = "local n = ns[_ % 64 + 1]; "
      local t = { forms(pre .. op[3], pre .. op[4], pre .. op[5], env) }
      print(string.format("%-5s %-13s %-10s %8.2f %8.2f %6.2fx %8.2f %6.2fx %5.2fx", op[1], case[1], op[2], t[1],
                          t[2], ratio(t[2], t[1]), t[3], t[3] / t[2], t[4]))
    end
  end
end

-- Assembling 128 bytes from eight 16-byte strings, emptied every 64 puts;
-- once with pieces the trace sees as constants (LuaJIT then folds
-- string.buffer's eight puts into one of a 128-byte constant: -jdump shows
-- a single BUFPUT), once with pieces read from a table (eight BUFPUTs);
-- then 192 bytes from twelve, more than avxbuf unrolls at a time.
do
  local t = {}
  for i = 1, 12 do t[i] = string.char(96 + i):rep(16) end
  local env = { b = avxbuf.new(16384):resize(0), sb = string_buffer.new(16384), p = ("p"):rep(16), t = t }
  for _, case in ipairs {
    { "eight", "constant pieces", "p, p, p, p, p, p, p, p" },
    { "eight", "pieces from a table", "t[1], t[2], t[3], t[4], t[5], t[6], t[7], t[8]" },
    { "twelve", "pieces from a table", "t[1], t[2], t[3], t[4], t[5], t[6], t[7], t[8], t[9], t[10], t[11], t[12]" },
  } do
    local body = "%s:put(" .. case[3] .. ") if _ %% 64 == 0 then %s end"
    local r = measure {
      loop(string.format(body, "sb", "sb:reset()"), env),
      loop(string.format(body, "b", "b:resize(0)"), env),
    }
    print(string.format("put of %s 16-byte strings, %s: string.buffer %.2f  avxbuf %.2f (%.2fx)", case[1], case[2],
                        r[1], r[2], r[2] / r[1]))
  end
end

-- One record "<I4 I4 d s1" per operation (bench/programs.lua's records,
-- without the output's growth), into a buffer emptied every 64 records:
-- string.buffer's reserve, an FFI struct's stores and commit, against
-- buf:pack.
do
  pcall(ffi.cdef, "typedef struct __attribute__((packed)) { uint32_t id, a; double x; uint8_t len; } bench_record;")
  local env = { b = avxbuf.new(4096):resize(0), sb = string_buffer.new(4096), cast = ffi.cast, copy = ffi.copy,
                record = ffi.typeof("bench_record *"), names = { "ada", "grace", "edsger", "barbara" } }
  local r = measure {
    loop("local name = names[_ % 4 + 1]; local len = #name; local p = sb:reserve(17 + len); "
         .. "local r = cast(record, p); r.id, r.a, r.x, r.len = _, _ * 3, _ / 8, len; copy(p + 17, name, len); "
         .. "sb:commit(17 + len); if _ % 64 == 0 then sb:reset() end", env, true),
    loop("b:pack('<I4 I4 d s1', _, _ * 3, _ / 8, names[_ % 4 + 1]); if _ % 64 == 0 then b:resize(0) end", env, true),
  }
  print(string.format("pack of a record <I4 I4 d s1: string.buffer reserve/commit %.2f  avxbuf pack %.2f (%.2fx)",
                      r[1], r[2], ratio(r[2], r[1])))
end

-- One frame per operation (bench/programs.lua's frames, without the
-- output's growth): a 2-byte big-endian length, then a header and a body
-- from tables, into a buffer emptied every 64 frames; string.buffer's
-- reserve, two stores and commit, then put, against pack and put.
do
  local heads, bodies = {}, {}
  for k = 1, 7 do heads[k] = ("h"):rep(20 + k) end
  for k = 1, 19 do bodies[k] = ("b"):rep(7 + 16 * (k - 1)) end
  local env = { b = avxbuf.new(32768):resize(0), sb = string_buffer.new(32768), heads = heads, bodies = bodies,
                rshift = bit.rshift, band = bit.band }
  local pick = "local h, body = heads[_ % 7 + 1], bodies[_ % 19 + 1]; local n = #h + #body; "
  local r = measure {
    loop(pick .. "local p = sb:reserve(2); p[0], p[1] = rshift(n, 8), band(n, 255); sb:commit(2); sb:put(h, body); "
         .. "if _ % 64 == 0 then sb:reset() end", env, true),
    loop(pick .. "b:pack('>I2', n); b:put(h, body); if _ % 64 == 0 then b:resize(0) end", env, true),
  }
  print(string.format("a frame >I2, header, body: string.buffer reserve/commit/put %.2f  avxbuf pack/put %.2f (%.2fx)",
                      r[1], r[2], ratio(r[2], r[1])))
end

-- The transform workload's output, a piece at a time, into one string.buffer
-- or one avxbuf buffer reused for every output (the same pieces, the same
-- checksum).
local function writer_of(put, result)
  return function() return { put = put, result = result } end
end
do
  local docs = transform.documents(true)
  local sb, b = string_buffer.new(), avxbuf.new()
  local sb_writer = writer_of(function(_, s) sb:put(s) end,
                              function() local r = sb:tostring() sb:reset() return r end)
  local b_writer = writer_of(function(_, s) b:put(s) end,
                             function() local r = b:tostring() b:resize(0) return r end)
  local ops = { string_buffer = function() return transform.run(docs, sb_writer) end,
                avxbuf = function() return transform.run(docs, b_writer) end }
  local samples = { string_buffer = {}, avxbuf = {} }
  local crc
  for _ = 1, TRANSFORM_ROUNDS do
    for _, name in ipairs { "string_buffer", "avxbuf" } do
      collectgarbage("collect")
      local t0 = os.clock()
      local c = ops[name]()
      samples[name][#samples[name] + 1] = os.clock() - t0
      assert(crc == nil or c == crc, "the two writers disagree")
      crc = c
    end
  end
  -- paired rounds: the ratio with its 95% interval (lua/avxbuf/stats.lua)
  local r = stats.ratio(samples.string_buffer, samples.avxbuf)
  print(string.format("transform --quick, one operation: string.buffer %.3f s  avxbuf %.3f s; avxbuf/string.buffer "
                      .. "%.2fx, 95%% CI %s over %d rounds (%s); checksum %08x",
                      harness.median(samples.string_buffer), harness.median(samples.avxbuf), r.ratio,
                      r.ci and string.format("%.2f-%.2f", r.ci[1], r.ci[2]) or "none (too few rounds)", r.rounds,
                      r.significant and "a difference" or "no difference beyond the noise", crc))
end
