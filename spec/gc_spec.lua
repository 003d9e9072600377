-- The collector inside a call: anything that allocates can run a finalizer,
-- and a finalizer can free, resize or append to any buffer. Each test arms
-- finalizers that do that to the buffer under test, sets the collector so
-- that an allocation can finish a cycle, and checks that the result is what
-- the operation gives on the buffer as the finalizer left it: no stale
-- pointer, no stale length. In the torture build (make test-gc) every point
-- of the binding where the collector may run runs a full collection, under
-- ASan; on LuaJIT each test runs with the JIT off and on.
local lu = require "luaunit"
local h = require "helpers"
local avxbuf = h.avxbuf

local arm, aggressive = h.arm, h.aggressive

local DELAYS = h.LIGHT and 6 or 24

-- On LuaJIT the FFI path runs interpreted and compiled: both.
local function each_mode(body)
  if jit then
    jit.off()
    local ok, err = pcall(aggressive, body)
    jit.on()
    if not ok then error(err, 0) end
  end
  aggressive(body)
end

local function settle()
  collectgarbage()
  collectgarbage()
end

-- body(key, case, delay) for every case and delay, in each mode, with the
-- collector settled after each: one run's finalizers never reach the next.
local function each_case_and_delay(cases, body)
  each_mode(function()
    for key, case in pairs(cases) do
      for delay = 0, DELAYS do
        body(key, case, delay)
        settle()
      end
    end
  end)
end

TestCollectorInCalls = {}

-- b:read took the length, then let the collector run: a finalizer that
-- freed the buffer and appended a byte had the 5000 bytes written past it.
function TestCollectorInCalls.test_read_after_a_finalizer_frees_and_appends()
  h.needs_children()   -- a file on the host
  local path = os.tmpname()
  local data = h.pattern(100000, 7)
  local f = assert(io.open(path, "wb"))
  f:write(data)
  f:close()
  each_mode(function()
    for delay = 0, DELAYS do
      local b = avxbuf.new(1000)
      local file = assert(io.open(path, "rb"))
      avxbuf.new(2 ^ 20)   -- a megabyte for the collector to be told about
      local fin = arm(function() b:free(); b:put("x") end, delay)
      local got = b:read(file, 5000)
      fin.live = false
      file:close()
      lu.assertEquals(got, 5000)
      if fin.ran then
        h.assert_bytes(b:tostring(), "x" .. data:sub(1, 5000), "read after the finalizer")
      else
        h.assert_bytes(b:tostring(), ("\0"):rep(1000) .. data:sub(1, 5000), "read")
      end
      settle()
    end
  end)
  os.remove(path)
end

-- Results built in Lua memory (hex, .., tostring, unpack) are made before
-- the bytes are read: the bytes as the finalizer left them.
function TestCollectorInCalls.test_results_made_while_a_finalizer_frees()
  local data = h.pattern(20000, 3)
  local cases = {
    hex = function(b) return b:hex() end,
    concat = function(b) return b .. 1.5 end,
    concat_left = function(b) return 2 .. b end,
    tostring = function(b) return b:tostring() end,
    tostring_range = function(b) return b:tostring(1, 5000) end,
    tostring_short = function(b) return b:tostring(100, 115) end,
    metamethod = function(b) return tostring(b) end,
    unpack = function(b) return (b:unpack(1, "c4000")) end,
    -- captures: a few bytes (copied onto the C stack), many (a scratch userdata)
    match = function(b) return table.concat({ b:match("(.)(..)()(...)", 100) }, ",") end,
    match_large = function(b) return table.concat({ b:find("^(.-)(.)()(.*)$") }, ",") end,
    -- each result from the bytes of one moment (issue 34: a length taken
    -- before the result's memory was made, then the bytes copied after;
    -- one unpack's strings and numbers from two contents)
    line = function(b) return (b:lines()()) end,
    unpack_z = function(b) return (b:unpack(1, "z")) end,
    unpack_mixed = function(b) return table.concat({ b:unpack(1, "c3 B s1 B c2") }, ",") end,
    unpack_floats = function(b) return table.concat({ b:unpack(1, "<d f B d") }, ",") end,
    putf = function(b) return avxbuf.new():putf("%.1f|%s", 1, b):tostring() end,
    split_sep = function(b)
      local it = avxbuf.from(data:sub(1, 40) .. ("R"):rep(60) .. data:sub(1, 40)):split(b)
      return table.concat({ it() }, ",")
    end,
  }
  -- the bytes a "replace" finalizer puts: other bytes, and more of them
  local other = h.pattern(20100, 4)
  each_mode(function()
    for name, op in pairs(cases) do
      for k = 0, 4 * DELAYS + 3 do
        local action, delay = ({ "free", "shrink", "grow", "replace" })[k % 4 + 1], math.floor(k / 4)
        local b = avxbuf.from(data)
        local before = op(b)
        local fin = arm(function()
          if action == "free" then b:free()
          elseif action == "shrink" then b:resize(10)
          elseif action == "replace" then b:free(); b:put(other)
          else b:put(data) end
        end, delay)
        local ok, got = pcall(op, b)
        fin.live = false
        if fin.ran then
          -- the bytes as the finalizer left them, or (it ran once they
          -- were read) as they were
          local ok2, want = pcall(op, b)
          if not (ok and got == before) then
            lu.assertEquals(ok, ok2, name .. " after " .. action)
            if ok then h.assert_bytes(got, want, name .. " after " .. action) end
          end
        else
          lu.assertTrue(ok, name)
          h.assert_bytes(got, before, name)
        end
      end
    end
  end)
end

-- Consuming from the front (get, the stream form of unpack) while a
-- finalizer frees, shrinks, grows or replaces the buffer: the result is
-- bytes of one moment, and what is left is what running the two one after
-- the other gives: the finalizer before the read, between the read and the
-- consumption (which then takes what there is, up to what was read), or
-- after both.
function TestCollectorInCalls.test_consuming_while_a_finalizer_changes_the_buffer()
  local data, other = h.pattern(20000, 6), h.pattern(20100, 8)
  local actions = {   -- each on the buffer, and on a string
    free = { function(b) b:free() end, function() return "" end },
    shrink = { function(b) b:resize(10) end, function(x) return (x .. ("\0"):rep(10)):sub(1, 10) end },
    grow = { function(b) b:put(data) end, function(x) return x .. data end },
    replace = { function(b) b:free(); b:put(other) end, function() return other end },
  }
  local cases = {   -- the operation, and its result and bytes consumed on a string
    get = { function(b) return b:get(5000) end, function(x) local r = x:sub(1, 5000) return r, #r end },
    get_all = { function(b) return b:get() end, function(x) return x, #x end },
    unpack = { function(b) return (b:unpack("c4000")) end,
               function(x) if #x < 4000 then return nil, 0 end return x:sub(1, 4000), 4000 end },
    unpack_mixed = { function(b) local n, s = b:unpack("<I2 s2") return n and n .. "," .. s end,
                     function(x)
                       if #x < 4 then return nil, 0 end
                       local n, len = x:byte(1) + 256 * x:byte(2), x:byte(3) + 256 * x:byte(4)
                       if #x < 4 + len then return nil, 0 end
                       return n .. "," .. x:sub(5, 4 + len), 4 + len
                     end },
  }
  each_mode(function()
    for name, case in pairs(cases) do
      for action_name, action in pairs(actions) do
        for delay = 0, DELAYS do
          local b = avxbuf.from(data)
          local fin = arm(function() action[1](b) end, delay)
          local ok, got = pcall(case[1], b)
          fin.live = false
          lu.assertTrue(ok, name .. ": " .. tostring(got))
          local rest = b:tostring()
          local read, took = case[2](data)
          local changed = action[2](data)
          local outcomes = { { read, data:sub(took + 1) } }
          if fin.ran then
            local r2, t2 = case[2](changed)
            outcomes[2] = { r2, changed:sub(t2 + 1) }                       -- before the read
            outcomes[3] = { read, changed:sub(math.min(took, #changed) + 1) } -- before the consumption
            outcomes[4] = { read, action[2](data:sub(took + 1)) }           -- after both
          end
          local found = false
          for _, o in ipairs(outcomes) do found = found or (got == o[1] and rest == o[2]) end
          if not found then
            -- what differs from the nearest outcome, for a failure seen once
            -- in CI and not reproduced since
            local function diff(a, e)
              if a == e then return "same" end
              if type(a) ~= "string" or type(e) ~= "string" then
                local function what(x) return type(x) == "string" and #x .. " bytes" or tostring(x) end
                return what(a) .. " for " .. what(e)
              end
              for k = 1, math.max(#a, #e) do
                if a:byte(k) ~= e:byte(k) then return ("byte %d of %d (%d expected)"):format(k, #a, #e) end
              end
            end
            local seen = {}
            for k, o in ipairs(outcomes) do
              seen[k] = ("outcome %d: read %s, rest %s"):format(k, diff(got, o[1]), diff(rest, o[2]))
            end
            lu.fail(string.format("%s after %s at delay %d (finalizer %s, JIT %s): %s bytes read, %d left; %s",
                                  name, action_name, delay, fin.ran and "ran" or "did not run",
                                  jit and (jit.status() and "on" or "off") or "none", got and #got or "no", #rest,
                                  table.concat(seen, "; ")))
          end
          settle()
        end
      end
    end
  end)
end

-- The FFI path (LuaJIT) checked lengths, made cdata, then used the data
-- pointer: a finalizer run by that cdata freed the buffer under it. The C
-- functions are checked the same way.
function TestCollectorInCalls.test_moves_while_a_finalizer_frees()
  local piece = h.pattern(800, 9)
  local piece_buffer = avxbuf.from(piece)
  local big = h.pattern(2 ^ 20, 5)
  local words = ("word "):rep(160)   -- (no zero byte: putf's own path)
  local file = io.tmpfile()
  file:write(piece)
  -- the operation, and what it leaves in a buffer that held `had`
  local cases = {
    fill = { function(b) b:fill(7) end, function(had) return ("\7"):rep(#had) end },
    zero = { function(b) avxbuf.zero(b) end, function(had) return ("\0"):rep(#had) end },
    copy = { function(b) avxbuf.copy(b, 1, big) end, function(had) return #had == 0 and "" or big end },
    small_copy = { function(b) b:copy(1, piece, 1, 40) end,
                   function(had) return #had == 0 and "" or piece:sub(1, 40) .. had:sub(41) end },
    small_copy_at = { function(b) avxbuf.copy(b, 3, piece, 5, 40) end,
                      function(had) return #had == 0 and "" or had:sub(1, 2) .. piece:sub(5, 44) .. had:sub(43) end },
    small_copy_buffer = {
      function(b) b:copy(3, piece_buffer, 5, 40) end,
      function(had) return #had == 0 and "" or had:sub(1, 2) .. piece:sub(5, 44) .. had:sub(43) end,
    },
    small_fill = { function(b) b:fill(7, 3, 40) end,
                   function(had) return #had == 0 and "" or had:sub(1, 2) .. ("\7"):rep(40) .. had:sub(43) end },
    small_zero = { function(b) avxbuf.zero(b, 3, 40) end,
                   function(had) return #had == 0 and "" or had:sub(1, 2) .. ("\0"):rep(40) .. had:sub(43) end },
    put = { function(b) b:put(piece) end, function(had) return had .. piece end },
    put_many = { function(b) b:put("a", piece, "b") end, function(had) return had .. "a" .. piece .. "b" end },
    resize = { function(b) b:resize(5000) end, function(had) return (had .. ("\0"):rep(5000)):sub(1, 5000) end },
    put_numbers = { function(b) b:put(1.5, piece, 42) end,
                    function(had) return had .. tostring(1.5) .. piece .. "42" end },
    putf_plain = { function(b) b:putf("<%s|%d>", words, 42) end,
                   function(had) return had .. "<" .. words .. "|42>" end },
    putf_format = { function(b) b:putf("%5.1f%s", 2.25, piece) end,
                    function(had) return had .. string.format("%5.1f", 2.25) .. piece end },
    pack = { function(b) b:pack("<i4 s2", 7, piece) end, function(had) return had .. "\7\0\0\0\32\3" .. piece end },
    pack_at = { function(b) b:pack(3, "<i2 c5", 7, "abc") end,
                function(had) return had:sub(1, 2) .. "\7\0abc\0\0" .. had:sub(10) end },
    unpack = { function(b) assert(select("#", b:unpack(1, "<i4 c40 d I2 c7")) == 6) end,
               function(had) return had end },
    reserve = { function(b) b:reserve(5000) end, function(had) return had end },
    read_at = { function(b) file:seek("set"); b:read(file, 100, 1) end,
                function(had) return piece:sub(1, 100) .. had:sub(101) end },
  }
  each_case_and_delay(cases, function(name, case, delay)
    local b = avxbuf.from(big)
    b:resize(0)
    b:resize(2 ^ 20)   -- capacity kept: put and resize stay in place
    avxbuf.copy(b, 1, big)
    local fin = arm(function() b:free() end, delay)
    local ok = pcall(case[1], b)
    fin.live = false
    local len, text = #b, b:tostring()
    lu.assertEquals(#text, len, name)
    if fin.ran then
      -- freed, then the operation on the empty buffer (copy of a
      -- megabyte into it fails), or freed after it
      if len > 0 then h.assert_bytes(text, case[2](""), name .. " after the finalizer") end
    else
      lu.assertTrue(ok, name)
      h.assert_bytes(text, case[2](big), name)
    end
  end)
end

-- A small copy from a buffer while a finalizer frees that source, at every
-- allocation of the call: the destination gets the source's bytes (the
-- copy came first) or keeps its own and the call raises (the source was
-- empty by then), never bytes of a freed block.
function TestCollectorInCalls.test_small_copy_while_a_finalizer_frees_the_source()
  local text, had = h.pattern(300, 3), h.pattern(200, 8)
  each_mode(function()
    for delay = 0, DELAYS do
      for _, n in ipairs { 1, 16, 40, 64, 150 } do
        local d, s = avxbuf.from(had), avxbuf.from(text)
        local fin = arm(function() s:free() end, delay)
        local ok = pcall(d.copy, d, 2, s, 7, n)
        fin.live = false
        local want = ok and had:sub(1, 1) .. text:sub(7, 6 + n) .. had:sub(n + 2) or had
        h.assert_bytes(d:tostring(), want, ("n %d, delay %d, %s"):format(n, delay, ok and "copied" or "raised"))
        lu.assertTrue(ok or fin.ran, "raised only where the finalizer ran")
        settle()
      end
    end
  end)
end

-- buf:put of more pieces than the FFI path unrolls at a time, into room
-- the buffer has: a finalizer frees the buffer (one of the pieces too) or
-- a piece buffer at some point of the call. The put sees the buffers
-- either as they were or as the finalizer left them, never a mix.
function TestCollectorInCalls.test_put_of_many_pieces_while_a_finalizer_frees()
  local piece = h.pattern(100, 3)
  local function result(had, p) return had .. "a" .. p .. "bcdefg" .. p .. "h" .. had end
  each_case_and_delay({ "buffer", "piece" }, function(_, victim, delay)
    local b, p = avxbuf.new():reserve(4096), avxbuf.from(piece)
    b:put("head")
    local fin = arm(function() (victim == "buffer" and b or p):free() end, delay)
    b:put("a", p, "b", "c", "d", "e", "f", "g", p, "h", b)
    fin.live = false
    local got, what = b:tostring(), victim .. ", delay " .. delay
    lu.assertEquals(#got, #b, what)
    if not fin.ran then
      h.assert_bytes(got, result("head", piece), what)
    elseif victim == "buffer" then
      if got ~= "" then h.assert_bytes(got, result("", piece), what .. " after the finalizer") end
    elseif got ~= result("head", piece) then
      h.assert_bytes(got, result("head", ""), what .. " after the finalizer")
    end
  end)
end

-- pack and unpack keep a compiled format in a small cache; a finalizer that
-- packs and unpacks other formats in the middle of a call (a number made a
-- string, a string pushed) refills every slot of it, and the call goes on
-- with its own format. The same pack of strings is, on LuaJIT, the code
-- made for the format (lua/avxbuf/ffi_format.lua), which writes to the
-- stage: the finalizer's packs and reads write there too.
function TestCollectorInCalls.test_formats_while_a_finalizer_packs_others()
  local FMT, WANT = "<i4 s1 s1 i2", "\7\0\0\0\00512345\003678\44\1"
  local other = avxbuf.new()
  local function others()
    for k = 1, 40 do
      other:pack(("<" .. ("B"):rep(k % 20 + 1)), ("B"):rep(k % 20 + 1):byte(1, -1))
      other:unpack(1, "<" .. ("x"):rep(k % 7) .. "B")
    end
  end
  each_mode(function()
    for delay = 0, DELAYS do
      local b = avxbuf.new()
      local fin = arm(others, delay)
      b:pack(FMT, 7, 12345, 678, 300)
      fin.live = false
      h.assert_bytes(b:tostring(), WANT, "pack, delay " .. delay)
      local s = avxbuf.new()
      fin = arm(others, delay)
      s:pack(FMT, 7, "12345", "678", 300)
      fin.live = false
      h.assert_bytes(s:tostring(), WANT, "pack of strings, delay " .. delay)
      fin = arm(others, delay)
      local i, s1, s2, n, after = b:unpack(1, FMT)
      fin.live = false
      lu.assertEquals({ i, s1, s2, n, after }, { 7, "12345", "678", 300, #WANT + 1 }, "unpack, delay " .. delay)
      settle()
    end
  end)
end

-- Random operations on a few buffers while finalizers keep re-arming to
-- free, resize and append to them; after each, every buffer agrees with
-- itself (length, contents, a copy of it).
function TestCollectorInCalls.test_random_operations_under_finalizers()
  local rounds = h.LIGHT and 150 or 600
  local rand = h.rng(12345)
  local pool = {}
  for i = 1, 4 do pool[i] = avxbuf.from(h.pattern(100 * i, i)) end
  local stop, quiet = false, false   -- no more finalizers; none acting (while checking)
  local function rearm()
    if stop then return end
    arm(function()
      if not quiet then
        local b = pool[rand(#pool) + 1]
        local k = rand(3)
        if k == 0 then b:free() elseif k == 1 then b:resize(rand(3000)) else b:put(h.pattern(rand(300), 2)) end
      end
      rearm()
    end)
  end
  -- Ranges are chosen before the call, and finalizers may shrink the buffer
  -- inside it: an operation may then fail, with an argument error.
  local file = io.tmpfile()
  file:write(h.pattern(1000, 6))
  local function walk(it)   -- (at most 200 steps: finalizers may keep appending)
    for _ = 1, 200 do if it() == nil then return end end
  end
  local ops = {
    function(b, c) avxbuf.copy(b, rand(#b + 1) + 1, c) end,
    function(b, c) if #c > 0 then avxbuf.copy(b, 1, c, 1, rand(#c) + 1) end end,
    function(b) b:fill(rand(256), 1, rand(#b + 1)) end,
    function(b) b:put(h.pattern(rand(200), 4)) end,
    function(b, c) b:put(c, "x", c) end,
    function(b, c) b:put("a", c, "b", "c", "d", "e", "f", "g", "h", c, "i", b) end,
    function(b) b:resize(rand(5000)) end,
    function(b) return b:tostring(rand(100) + 1) end,
    function(b) return b:hex(1, rand(200)) end,
    function(b, c) return b .. c end,
    function(b) return b .. rand(1000) + 0.5 end,
    function(b) if #b >= 8 then return b:unpack(1, "<i4 c2") end end,
    function(b) return b:find("x") end,
    function(b) return b:match("(%w+)(.)()", 3) end,
    function(b) for _ in b:gmatch("%a+") do end end,
    function(b) b:put(rand(1000) + 0.5, rand(100)) end,
    function(b) b:putf("%s:%d;", "k", rand(100)) end,
    function(b, c) b:putf("%s|%5.2f", c, rand(100) / 7) end,
    function(b) b:pack("<i4 s1 !8 d", rand(1000), "abc", 1.5) end,
    function(b) b:pack(rand(#b + 1) + 1, "<i8 z", rand(99), "zz") end,
    function(b) b:reserve(rand(5000)) end,
    function(b) walk(b:lines(rand(50) + 1)) end,
    function(b) walk(b:split("\0", rand(50) + 1)) end,
    function(b, c) walk(b:split(c, rand(50) + 1)) end,
    function(b) file:seek("set", rand(900)); return b:read(file, rand(300), rand(#b + 1) + 1) end,
    function(b) return avxbuf.from(b, 2) end,
  }
  each_mode(function()
    stop = false
    rearm()
    for _ = 1, rounds do
      local b, c = pool[rand(#pool) + 1], pool[rand(#pool) + 1]
      local ok, err = pcall(ops[rand(#ops) + 1], b, c)
      quiet = true
      if not ok then lu.assertStrContains(tostring(err), "bad argument") end
      for _, x in ipairs(pool) do
        local text = x:tostring()
        lu.assertEquals(#text, #x)
        h.assert_bytes(avxbuf.from(x):tostring(), text, "a copy")
        -- a buffer put into itself doubles or triples, and the collector's
        -- timing picks how often: once, in CI, one reached 12 GB
        if #x > 2 ^ 20 then x:resize(rand(3000)) end
      end
      quiet = false
    end
    stop = true
    settle()
  end)
end

-- LuaJIT: the FFI path reads a buffer's generation, then tests the range
-- of a plain copy or fill (and an unpacked float's exponent) with guards,
-- and a trace that exits at one can run finalizers there (lj_trace_exit
-- steps the collector). A handler of that exit (jit.attach's "texit",
-- which lj_trace_exit calls just before it) stands for such a finalizer:
-- it frees a buffer at the first exit of the last call, where a trace
-- compiled over ranges within the bytes meets one past them. (Exits come
-- earlier too: the collector's check in a trace asks for one whenever a
-- cycle reaches its atomic or finalize phase, lj_gc.c's lj_gc_step_jit,
-- so when depends on the heap.) That call ends as on the freed buffer, in
-- a clean error: never a write into
-- the empty buffer's read-only bytes (exit 139 when the movers read the
-- generation after such a guard), a copy of them or a value read from
-- freed memory.
function TestCollectorInCalls.test_a_finalizer_at_a_trace_exit_before_the_move()
  if not rawget(_G, "jit") then lu.skip("LuaJIT only (this is " .. _VERSION .. ")") end
  h.needs_children()
  local out, status = h.run_child({}, [[
    local avxbuf = require "avxbuf"
    local N = 1000
    local function case(name, victim, loop, check)
      jit.flush()
      local at, i = nil, 0
      jit.attach(function()
        if i == N and not at then at = i; victim:free() end
      end, "texit")
      local ok, err = pcall(loop, function(k) i = k end)
      jit.attach(function() end)
      print(("%s: ok %s, freed at call %s of %d, %s, %s"):format(name, tostring(ok), tostring(at), N,
            tostring(err):match("bad argument") and "bad argument" or tostring(err), check()))
    end
    -- N - 1 calls of one kind, then one of the other
    local function calls(many, last)
      local t = {}
      for k = 1, N do t[k] = k < N and many or last end
      return t
    end
    local d = avxbuf.new(200)
    local function emptied() return "left " .. #d end
    local large, small = avxbuf.from(("l"):rep(100)), avxbuf.from(("s"):rep(8))
    local to_string = calls(large, ("s"):rep(8))   -- the last source's type turns a guard
    case("copy from a string, destination freed", d, function(mark)
      for k = 1, N do mark(k); avxbuf.copy(d, 1, to_string[k], 1, 8) end
    end, emptied)
    d = avxbuf.new(200)
    local to_buffer = calls(("l"):rep(100), small)
    case("copy from a buffer, destination freed", d, function(mark)
      for k = 1, N do mark(k); d:copy(1, to_buffer[k], 1, 8) end
    end, emptied)
    d = avxbuf.new(200)
    case("copy from a buffer, source freed", small, function(mark)
      for k = 1, N do mark(k); avxbuf.copy(d, 1, to_buffer[k], 1, 8) end
    end, function() return "kept " .. d:tostring(1, 8) end)
    local counts = calls(100, 300)
    d = avxbuf.new(200)
    case("fill, buffer freed", d, function(mark)
      for k = 1, N do mark(k); avxbuf.fill(d, 65, 1, counts[k]) end
    end, emptied)
    d = avxbuf.new(200)
    case("zero, buffer freed", d, function(mark)
      for k = 1, N do mark(k); d:zero(1, counts[k]) end
    end, emptied)
    local nan, finite = avxbuf.new(), avxbuf.new()
    nan:pack("<d", 0 / 0)
    finite:pack("<d", 1.5)
    local bufs = calls(nan, finite)
    case("unpack of a finite double after NaNs, buffer freed", finite, function(mark)
      for k = 1, N do mark(k); bufs[k]:unpack(1, "<d") end
    end, function() return "left " .. #finite end)
  ]])
  lu.assertEquals(status, 0, out)
  local last = "ok false, freed at call 1000 of 1000, bad argument, "
  local want = {
    ["copy from a buffer, destination freed"] = last .. "left 0",
    ["copy from a string, destination freed"] = last .. "left 0",
    ["copy from a buffer, source freed"] = last .. "kept llllllll",
    ["fill, buffer freed"] = last .. "left 0",
    ["zero, buffer freed"] = last .. "left 0",
    ["unpack of a finite double after NaNs, buffer freed"] = last .. "left 0",
  }
  for name, result in pairs(want) do lu.assertStrContains(out, name .. ": " .. result) end
end

-- LuaJIT, compiled, with the collector at its default pace (the tests
-- above collect at every allocation, so a cycle seldom waits for a trace
-- exit): spec/jit_exits.lua's random operations while finalizers free,
-- shrink, grow and replace buffers at trace exits. Before the movers read
-- the generations ahead of C's answer, 12 of 30 seeds crashed (exit 139).
function TestCollectorInCalls.test_random_compiled_operations_with_finalizers_at_trace_exits()
  if not rawget(_G, "jit") then lu.skip("LuaJIT only (this is " .. _VERSION .. ")") end
  if h.TORTURE then lu.skip("the torture build collects at every point: not the default pace this is about") end
  h.needs_children()
  -- a process per seed: the traces of one seed's run serve the next, which
  -- then exits less
  for seed = 1, h.LIGHT and 3 or 10 do
    local out, status = h.shell(string.format("LUA_CPATH=%s LUA_PATH=%s %s spec/jit_exits.lua %d 1 20000",
                                              h.sh(package.cpath:match("^[^;]*") .. ";;"),
                                              h.sh("spec/?.lua;bench/lib/?.lua;;"), h.sh(arg[-1] or "luajit"), seed))
    lu.assertEquals(status, 0, "seed " .. seed .. ": " .. out)
    lu.assertStrContains(out, "seeds 1 failures 0")
    -- the finalizers did act inside operations
    lu.assertTrue(tonumber(out:match("(%d+) finalizers acted")) > 0, out)
  end
end

-- The C API table at lua_close: a C object made before require "avxbuf" is
-- finalized after the module, and its finalizer asks for the table.
function TestCollectorInCalls.test_c_api_after_the_module_is_finalized()
  h.needs_children()
  local ok = pcall(require, "capi")
  if not ok then lu.skip("the C API test module is not built here") end
  local out, status = h.run_child({}, [[
    local capi = require "capi"
    probe = capi.close_probe()   -- finalized after avxbuf's anchor
    local avxbuf = require "avxbuf"
    local b = capi.new(10, 1)
  ]])
  lu.assertEquals(status, 0, out)
  lu.assertStrContains(out, "close probe: error: avxbuf: the C API is gone")
end

-- A finalizer that runs at lua_close and makes buffers. LuaJIT unloaded
-- the C libraries in an early round of its close-time finalizers, and a
-- buffer's own __gc, in a later round, jumped into unmapped code (exit
-- 139): the library pins itself (src/lua/lavxbuf.c). And on 5.1 and
-- LuaJIT the pace's step there ran the module anchor's finalizer, which
-- freed the record the call went on with (valgrind: an invalid read in
-- avxbuf_pace): the pace holds the record over its step and raises once
-- nothing else holds it. Either the buffer works or the call raises.
function TestCollectorInCalls.test_a_finalizer_at_lua_close_makes_buffers()
  h.needs_children()
  local out, status = h.run_child({}, [[
    local avxbuf = require "avxbuf"
    local function at_close()
      local ok, n = pcall(function()
        for _ = 1, 8 do local _ = avxbuf.new(4 * 2 ^ 20) end   -- enough to pace
        local b = avxbuf.new(10)
        b:put("abc")
        return #b
      end)
      print("the finalizer ran: " .. tostring(ok) .. " " .. tostring(n))
    end
    if rawget(_G, "newproxy") then
      kept = newproxy(true)   -- luacheck: ignore (5.1, LuaJIT)
      getmetatable(kept).__gc = at_close
    else
      kept = setmetatable({}, { __gc = at_close })
    end
  ]])
  lu.assertEquals(status, 0, out)
  local ran = out:match("the finalizer ran: ([^\n]*)")
  lu.assertNotNil(ran, out)
  if ran ~= "true 13" then lu.assertStrContains(ran, "avxbuf: the module was finalized (lua_close)") end
end
