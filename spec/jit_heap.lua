-- LuaJIT: random buffer operations while finalizers free, resize or append
-- to buffers at the k-th collection, then a `pairs` over the counts per
-- operation (issue 44's hang, rebuilt from its description: not reproduced
-- here in ~2,600 runs). At the setting below it finds a rare heap
-- corruption instead, with the JIT on and the FFI path on only: a byte of a
-- put piece written into a block LuaJIT's allocator had freed, SIGSEGV in
-- lj_alloc (docs/reliability.md, "The LuaJIT path"). A reproducer, not a
-- spec: the suite does not run it.
--   LUA_CPATH='build/luajit/?.so' timeout 120 luajit spec/jit_heap.lua seed=S gc=0 stepmul=5000 rounds=6000 maxdelay=3
-- options: [seed=1] [rounds=3000] [jit=on|off] [ffi=on|off] [gc=aggressive|normal|PAUSE] [stepmul=200]
--          [maxdelay=8] [keep=no|yes] [passes=1] [only=op,op] [drop=op,op]
local opt = { seed = 1, rounds = 3000, jit = "on", ffi = "on", gc = "aggressive", stepmul = 200, maxdelay = 8,
              keep = "no", passes = 1, only = "", drop = "" }
for _, a in ipairs(arg) do
  local k, v = a:match("^(%w+)=(.*)$")
  assert(k and opt[k] ~= nil, "bad argument " .. a)
  opt[k] = tonumber(v) or v
end
if jit and opt.jit == "off" then jit.off() end
if opt.ffi == "off" then package.loaded["avxbuf.ffi"] = false end   -- the C path only
local avxbuf = require "avxbuf"
assert(avxbuf.ffi == (opt.ffi == "on" and jit ~= nil), "ffi flag")

-- a small LCG, so that the sequence is the same everywhere
local state = opt.seed
local function rand(n)
  state = (state * 1103515245 + 12345) % 2147483648
  return math.floor(state / 65536) % n
end
local function pattern(n, s)
  local t = {}
  for i = 1, n do t[i] = string.char(97 + (i * 7 + s) % 26) end
  return table.concat(t)
end

local pool = {}
for i = 1, 4 do pool[i] = avxbuf.from(pattern(100 * i, i)) end

-- M.arm of spec/helpers.lua: f runs at the (delay + 1)th collection from now
local stop, quiet = false, false
local function arm(f, delay)
  local function make(k)
    local function gc()
      if stop then return end
      if k > 0 then make(k - 1) else f() end
    end
    getmetatable(newproxy(true)).__gc = gc
  end
  make(delay)
end
local fired = 0
local function rearm()
  if stop then return end
  arm(function()
    if not quiet then
      fired = fired + 1
      local b = pool[rand(#pool) + 1]
      local k = rand(3)
      if k == 0 then b:free() elseif k == 1 then b:resize(rand(3000)) else b:put(pattern(rand(300), 2)) end
    end
    rearm()
  end, rand(opt.maxdelay + 1))
end

local file = io.tmpfile()
file:write(pattern(1000, 6))
local function walk(it) for _ = 1, 200 do if it() == nil then return end end end

local ops = {
  { "copy", function(b, c) avxbuf.copy(b, rand(#b + 1) + 1, c) end },
  { "copy_range", function(b, c) if #c > 0 then avxbuf.copy(b, 1, c, 1, rand(#c) + 1) end end },
  { "copy_small", function(b, c)
    if #b >= 64 and #c >= 64 then avxbuf.copy(b, rand(8) + 1, c, rand(8) + 1, rand(40) + 1) end
  end },
  { "fill", function(b) b:fill(rand(256), 1, rand(#b + 1)) end },
  { "fill_small", function(b) if #b > 40 then b:fill(rand(256), rand(8) + 1, rand(33)) end end },
  { "zero", function(b) b:zero(1, rand(#b + 1)) end },
  { "zero_small", function(b) if #b > 40 then avxbuf.zero(b, rand(8) + 1, rand(33)) end end },
  { "put", function(b) b:put(pattern(rand(200), 4)) end },
  { "put_self", function(b, c) b:put(c, "x", c) end },
  { "put_many", function(b, c) b:put("a", c, "b", "c", "d", "e", "f", "g", "h", c, "i", b) end },
  { "put_num", function(b) b:put(rand(1000) + 0.5, rand(100)) end },
  { "putf", function(b) b:putf("%s:%d;", "k", rand(100)) end },
  { "putf_float", function(b, c) b:putf("%s|%5.2f", c, rand(100) / 7) end },
  { "resize", function(b) b:resize(rand(5000)) end },
  { "reserve", function(b) b:reserve(rand(5000)) end },
  { "free", function(b) b:free() end },
  { "get", function(b) return b:get(rand(50)) end },
  { "skip", function(b) b:skip(rand(50)) end },
  { "tostring", function(b) return b:tostring(rand(100) + 1) end },
  { "tostring_range", function(b) local i = rand(#b + 1) + 1; return b:tostring(i, i + rand(40)) end },
  { "byte", function(b) return b:byte(rand(#b + 1) + 1) end },
  { "byte_range", function(b) return b:byte(1, rand(20)) end },
  { "find", function(b) return b:find("x", rand(#b + 1) + 1, true) end },
  { "rfind", function(b) return b:rfind("ab") end },
  { "match", function(b) return b:match("(%w+)(.)()", 3) end },
  { "gmatch", function(b) for _ in b:gmatch("%a+") do end end },
  { "hex", function(b) return b:hex(1, rand(200)) end },
  { "concat", function(b, c) return b .. c end },
  { "concat_num", function(b) return b .. rand(1000) + 0.5 end },
  { "unpack_at", function(b) if #b >= 8 then return b:unpack(1, "<i4 c2") end end },
  { "unpack_stream", function(b) return b:unpack("<i2 B") end },
  { "pack", function(b) b:pack("<i4 s1 !8 d", rand(1000), "abc", 1.5) end },
  { "pack_at", function(b) b:pack(rand(#b + 1) + 1, "<i8 z", rand(99), "zz") end },
  { "lines", function(b) walk(b:lines(rand(50) + 1)) end },
  { "split_nul", function(b) walk(b:split("\0", rand(50) + 1)) end },
  { "split_buf", function(b, c) walk(b:split(c, rand(50) + 1)) end },
  { "from", function(b) return avxbuf.from(b, 2) end },
  { "read", function(b) file:seek("set", rand(900)); return b:read(file, rand(300), rand(#b + 1) + 1) end },
}

-- only=a,b / drop=a,b: a subset of the operations, by name
do
  local function set(list) local t = {} for w in list:gmatch("[%w_]+") do t[w] = true end return t end
  local only, drop, kept = set(opt.only), set(opt.drop), {}
  for _, op in ipairs(ops) do
    if (opt.only == "" or only[op[1]]) and not drop[op[1]] then kept[#kept + 1] = op end
  end
  ops = kept
end
local counts, errors = {}, 0
-- gc=aggressive: every allocation a full cycle (spec/helpers.lua's aggressive;
-- finalizers then abort nearly every trace recording); gc=normal: defaults;
-- gc=N: pause N, step multiplier stepmul (200) (traces compile, finalizers still often)
if opt.gc == "aggressive" then collectgarbage("setpause", 0); collectgarbage("setstepmul", 0)
elseif type(opt.gc) == "number" then collectgarbage("setpause", opt.gc); collectgarbage("setstepmul", opt.stepmul) end
rearm()
local t0 = os.clock()
for round = 1, opt.rounds do
  local b, c = pool[rand(#pool) + 1], pool[rand(#pool) + 1]
  local op = ops[rand(#ops) + 1]
  local ok, err = pcall(op[2], b, c)
  if not ok then
    errors = errors + 1
    if not tostring(err):find("bad argument", 1, true) then
      print("round " .. round .. " " .. op[1] .. ": " .. tostring(err))
    end
  end
  counts[op[1]] = (counts[op[1]] or 0) + 1
  quiet = true
  for _, x in ipairs(pool) do
    if #x > 2 ^ 20 then x:resize(rand(3000)) end
  end
  quiet = false
end
-- keep=yes: the finalizers stay armed and acting, and the collector as set,
-- during the pairs (passes=N walks it N times)
if opt.keep ~= "yes" then
  stop = true
  collectgarbage("setpause", 200); collectgarbage("setstepmul", 200)
end
io.stderr:write(("rounds done: %d, finalizer actions %d, errors %d, %.1f s\n"):format(opt.rounds, fired, errors,
                                                                                    os.clock() - t0))
io.stderr:flush()
local n, total = 0, 0
for _ = 1, opt.passes do
  for _, v in pairs(counts) do n = n + 1; total = total + v end
end
print(("pairs done: %d names, %d ops"):format(n, total))
