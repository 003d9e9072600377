-- Run by spec/oom_host (see spec/oom_spec.lua): every operation with the
-- allocator failing from its k-th allocation on, for every k until the
-- operation gets through with nothing failed. A failure must be a Lua
-- error (a string) with every buffer, and the settings, as they were; a
-- success must give what the operation gives without failures. Prints one
-- line per bad run, then "runs N failures N bad N".
-- LuaJIT runs these interpreted: an allocation failure raised inside a
-- trace crashes LuaJIT 2.1.0-beta3 itself (SIGSEGV in libluajit or its
-- unwinder, _Unwind_RaiseException, with a trace's machine code on the
-- stack; seen with this module and the one before it: docs/reliability.md).
-- What is checked here is avxbuf's part, which the FFI path also runs
-- interpreted: every failure a clean error, nothing changed.
if rawget(_G, "jit") then jit.off() end
local avxbuf = require "avxbuf"
local arm, disarm = rawget(_G, "arm"), rawget(_G, "disarm")   -- the host's
local unpack = table.unpack or unpack
local S1 = ("0123456789"):rep(30) .. "\n" .. ("line two\n"):rep(20) .. "key=value,a,b,c\0tail"
local S2 = "abc"
local big = ("B"):rep(70000)
local rfile = io.tmpfile()
rfile:write(("R"):rep(200000))
rfile:flush()

-- name, the operation on buffers a and b, and (for those that change a)
-- what a holds after it, from a's and b's strings before
local ops = {
  { "new", function() return avxbuf.new(100000, 7) end },
  { "from", function(a) return avxbuf.from(a, 2) end },
  { "put", function(a, b) return a:put("x", 1.5, b, a, big) end,
    function(s1, s2) return s1 .. "x1.5" .. s2 .. s1 .. big end },
  { "put20", function(a, b)
      return a:put("1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13", "14", "15", "16", "17",
                   18, b, a)
    end, function(s1, s2) return s1 .. "1234567891011121314151617" .. "18" .. s2 .. s1 end },
  { "putf", function(a, b) return a:putf("%s=%d;%s", "k", 42, b) end, function(s1, s2) return s1 .. "k=42;" .. s2 end },
  { "putf_format", function(a) return a:putf("%5.2f|%s|%q", 2.5, a, "q") end,
    function(s1) return s1 .. string.format("%5.2f|%s|%q", 2.5, s1, "q") end },
  { "pack", function(a) return a:pack("<i4 s1 z d", 7, "str", "zz", 1.5) end,
    function(s1) return s1 .. "\7\0\0\0\3strzz\0" .. "\0\0\0\0\0\0\248\63" end },
  { "pack_numbers_as_strings", function(a) return a:pack("s1 z", 12.5, 3) end,
    function(s1) return s1 .. "\4" .. "12.5" .. "3\0" end },
  { "pack_at", function(a) return a:pack(3, "<I2", 258) end,
    function(s1) return s1:sub(1, 2) .. "\2\1" .. s1:sub(5) end },
  { "pack_at_growing", function(a) return a:pack(#a - 1, ("B"):rep(20) .. "c100000", unpack((function()
      local v = {}
      for k = 1, 20 do v[k] = k end
      v[21] = "y"
      return v
    end)())) end, nil },
  { "pack_big", function(a) return a:pack("c200000", "x") end,
    function(s1) return s1 .. "x" .. ("\0"):rep(199999) end },
  { "resize", function(a) return a:resize(300000) end, function(s1) return s1 .. ("\0"):rep(300000 - #s1) end },
  { "reserve", function(a) return a:reserve(500000) end, function(s1) return s1 end },
  { "read", function(a) rfile:seek("set", 0); return a:read(rfile, 150000) end,
    function(s1) return s1 .. ("R"):rep(150000) end },
  { "read_at", function(a) rfile:seek("set", 0); return a:read(rfile, 150000, 2) end,
    function(s1) return s1:sub(1, 1) .. ("R"):rep(150000) end },
  { "copy", function(a, b) return a:copy(2, b) end,
    function(s1, s2) return s1:sub(1, 1) .. s2 .. s1:sub(2 + #s2) end },
  { "fill", function(a) return a:fill(65, 3, 10) end,
    function(s1) return s1:sub(1, 2) .. ("A"):rep(10) .. s1:sub(13) end },
  -- reads: the buffers stay as they are whatever happens
  { "tostring", function(a) return a:tostring() end },
  { "__tostring", function(a) return tostring(a) end },
  { "hex", function(a) return a:hex() end },
  { "concat", function(a, b) return a .. b .. 1.5 end },
  { "find", function(a) return a:find("(%d+)\n(l%a+)") end },
  { "match", function(a) return a:match("(k%a+)=(%a+)()") end },
  { "match_all", function(a) return a:match("^(.*)") end },
  { "gmatch", function(a) local n = 0; for w in a:gmatch("%a+") do n = n + #w end; return n end },
  { "lines", function(a) local n = 0; for l in a:lines() do n = n + #l end; return n end },
  { "split", function(a) local n = 0; for i, j in a:split(",") do n = n + j - i end; return n end },
  { "split_buffer", function(a, b) local n = 0; for _ in a:split(b) do n = n + 1 end; return n end },
  { "unpack", function(a) return a:unpack(1, "c5 c3 B") end },
  { "unpack_long", function(a) return a:unpack(1, "c200 z c4") end },
  { "rfind", function(a) return a:rfind("two") end },
  { "compare", function(a, b) return avxbuf.compare(a, b), a == b, a < b end },
  { "byte", function(a) return a:byte(1, 100) end },
  { "config", function() return avxbuf.config() end },
  { "kernels", function() return avxbuf.kernels() end },
  { "cpu", function() return avxbuf.cpu() end },
  { "decide", function()
      return avxbuf.decide { vendor = "GenuineIntel", leaf1_eax = 0x50654, leaf1_ecx = 0x1ffa3203 }
    end },
  { "gmatch_make", function(a) return a:gmatch("(%d)(%d)") end },
}

-- The settings, as a string to compare.
local function settings()
  local t, keys = avxbuf.config(), {}
  for k in pairs(t) do keys[#keys + 1] = k end
  table.sort(keys)
  for i, k in ipairs(keys) do keys[i] = k .. "=" .. tostring(t[k]) end
  return table.concat(keys, ",")
end

local runs, failures, bad = 0, 0, 0
local tries = {}   -- per operation, the runs it took
local function report(what) bad = bad + 1; print("BAD " .. what) end
for _, op in ipairs(ops) do
  local name, run, after = op[1], op[2], op[3]
  for k = 0, 100000 do
    avxbuf.reset()
    local a, b = avxbuf.from(S1), avxbuf.from(S2)
    local s1, s2 = a:tostring(), b:tostring()
    local want = after and after(s1, s2)
    collectgarbage("collect")
    arm(k)
    local ok, err = pcall(run, a, b)
    local nfail = disarm()
    runs = runs + 1
    if not ok then
      failures = failures + 1
      if type(err) ~= "string" then report(string.format("%s k=%d: the error is a %s", name, k, type(err))) end
      if a:tostring() ~= s1 or b:tostring() ~= s2 then
        report(string.format("%s k=%d: failed (%s), and changed the buffers", name, k, tostring(err)))
      end
    elseif want and a:tostring() ~= want then
      report(string.format("%s k=%d: succeeded with other bytes (%d, want %d)", name, k, #a, #want))
    end
    if ok and nfail == 0 then tries[#tries + 1] = name .. ":" .. k; break end
  end
end

-- configure: all or nothing
for k = 0, 1000 do
  avxbuf.reset()
  local before, knobs = settings(), { use_avx = 0, kernel = "libc" }
  collectgarbage("collect")
  arm(k)
  local ok, err = pcall(avxbuf.configure, knobs)
  local nfail = disarm()
  runs = runs + 1
  if not ok then
    failures = failures + 1
    if settings() ~= before then
      report(string.format("configure k=%d: failed (%s), and changed the settings", k, err))
    end
  end
  if ok and nfail == 0 then break end
end
avxbuf.reset()
print(table.concat(tries, " "))
print(string.format("runs %d failures %d bad %d", runs, failures, bad))
