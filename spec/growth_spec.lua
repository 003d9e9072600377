-- Buffers that grow: new() with defaults, resize, put, free and __close;
-- alignment through growth; a random-operation model test against plain Lua
-- strings; unforgeable type checks; memory the collector paces.
local lu = require "luaunit"
local h = require "helpers"
local avxbuf = h.avxbuf

local function aligned(buf)
  return h.address(buf) % 64 == 0
end

TestGrowth = {}

-- 2^62 is a size too large on every Lua (5.1, 5.2 and LuaJIT convert
-- exactly only to 2^53, and said "number has no integer representation").
function TestGrowth.test_sizes_past_2_53_are_too_large_everywhere()
  local b = avxbuf.from("keep")
  local cases = {
    { function() avxbuf.new(2 ^ 62) end, "bad argument #1 to 'new' (size too large)" },
    { function() b:resize(2 ^ 62) end, "bad argument #1 to 'resize' (size too large)" },
    { function() b:resize(2 ^ 54) end, "bad argument #1 to 'resize' (size too large)" },
    { function() b:reserve(2 ^ 62) end, "bad argument #1 to 'reserve' (the buffer would exceed" },
  }
  for _, case in ipairs(cases) do
    local ok, err = pcall(case[1])
    lu.assertFalse(ok)
    lu.assertStrContains(tostring(err), case[2])
  end
  lu.assertEquals(b:tostring(), "keep")
end

function TestGrowth.test_new_defaults_to_empty()
  lu.assertEquals(#avxbuf.new(), 0)
  lu.assertEquals(#avxbuf.new(nil), 0)
  lu.assertEquals(avxbuf.new(3, 7):tostring(), "\7\7\7")
end

function TestGrowth.test_resize_keeps_prefix_and_zeroes_the_rest()
  local b = avxbuf.from("abcdef")
  lu.assertIs(b:resize(10), b)
  lu.assertEquals(b:tostring(), "abcdef\0\0\0\0")
  b:resize(3)
  lu.assertEquals(b:tostring(), "abc")
  b:fill(0x41)
  b:resize(5)   -- bytes past the old length are zero, whatever the capacity held
  lu.assertEquals(b:tostring(), "AAA\0\0")
  b:resize(0)
  lu.assertEquals(#b, 0)
  b:resize(70000)
  lu.assertEquals(b:tostring(), ("\0"):rep(70000))
end

-- A doubling that would take the block past glibc's largest dynamic mmap
-- threshold (4 MiB per byte of a long) stops 64 KiB below it when the need
-- fits, so that glibc can reuse the block (src/lua/lbuffer.c); past it, growth
-- doubles again.
function TestGrowth.test_a_doubling_stops_below_the_mmap_threshold_when_the_need_fits()
  if h.LIGHT or h.QEMU or os.getenv("AVXBUF_SPEC_SANITIZED") then lu.skip("allocates 64 MiB") end
  local ok, ffi = pcall(require, "ffi")
  local long_bytes = string.packsize and string.packsize("l") or ok and ffi.sizeof("long")
  if not long_bytes then lu.skip("no way to know the size of a long here") end
  local limit = 4 * 2 ^ 20 * long_bytes - 64 * 2 ^ 10
  local b = avxbuf.new(limit * 0.75)   -- the first block is exact
  lu.assertEquals(b:capacity(), limit * 0.75)
  b:put("x")   -- doubling would pass the limit
  lu.assertEquals(b:capacity(), limit)
  lu.assertEquals(#b, limit * 0.75 + 1)
  b:resize(limit + 1)
  lu.assertEquals(b:capacity(), 2 * limit)
  lu.assertEquals({ b:byte(-2, -1) }, { 0, 0 })
end

function TestGrowth.test_data_stays_aligned_through_growth()
  local b = avxbuf.new()
  for n = 1, 3000, 7 do
    b:resize(n)
    lu.assertTrue(aligned(b), "after resize to " .. n)
  end
  local c = avxbuf.new()
  for i = 1, 400 do
    c:put(h.pattern(i % 37, i))
    lu.assertTrue(aligned(c), "after put " .. i)
  end
end

function TestGrowth.test_put_appends_strings_and_buffers_in_order()
  local b = avxbuf.new()
  lu.assertIs(b:put("ab", avxbuf.from("cd"), "", "e"), b)
  lu.assertEquals(b:tostring(), "abcde")
  b:put()
  lu.assertEquals(b:tostring(), "abcde")
  b:put(b)   -- itself: the value it had before the call
  lu.assertEquals(b:tostring(), "abcdeabcde")
  b:put("x", b, b)
  lu.assertEquals(b:tostring(), "abcdeabcdexabcdeabcdeabcdeabcde")
  -- more pieces than put keeps at hand, and pieces that force growth
  local many, expected = {}, {}
  for i = 1, 40 do many[i] = h.pattern(i * 3, i); expected[i] = many[i] end
  local c = avxbuf.new()
  c:put(h.unpack(many))
  lu.assertEquals(c:tostring(), table.concat(expected))
  c:put(c, h.unpack(many))
  lu.assertEquals(c:tostring(), table.concat(expected):rep(2) .. table.concat(expected))
end

function TestGrowth.test_put_checks_every_argument_before_appending()
  local b = avxbuf.from("keep")
  for k, bad in ipairs { true, {}, print, io.stdout } do
    -- (not a tail call, which would lose the method's name under LuaJIT)
    local ok, err = pcall(function() b:put("x", avxbuf.from("y"), bad, "z") end)
    lu.assertFalse(ok)
    lu.assertStrContains(err, "bad argument #3 to 'put' (string, number or avxbuf.buffer expected, got ")
    lu.assertEquals(b:tostring(), "keep", "case " .. k)
  end
  local ok, err = pcall(avxbuf.new().put, 5)
  lu.assertFalse(ok)
  lu.assertStrContains(err, "avxbuf.buffer expected")
end

function TestGrowth.test_resize_checks_its_argument()
  local b = avxbuf.from("keep")
  for _, bad in ipairs { -1, 1.5, "x", true, h.MAXINT, 2 ^ 60 } do
    local ok, err = pcall(function() b:resize(bad) end)
    lu.assertFalse(ok)
    lu.assertStrContains(err, "bad argument #1 to 'resize'")
    lu.assertEquals(b:tostring(), "keep")
  end
end

function TestGrowth.test_copy_zero_fill_never_grow()
  local b = avxbuf.new(4)
  lu.assertFalse(pcall(b.copy, b, 3, "abc"))
  lu.assertFalse(pcall(b.zero, b, 2, 4))
  lu.assertFalse(pcall(b.fill, b, 1, 5, 1))
  lu.assertEquals(#b, 4)
end

function TestGrowth.test_free_returns_the_memory_and_the_buffer_stays_usable()
  local b = avxbuf.new(1048576, 9)
  lu.assertIsNil(b:free())
  lu.assertEquals(#b, 0)
  lu.assertEquals(b:tostring(), "")
  b:free()
  b:put("again")
  lu.assertEquals(b:tostring(), "again")
  lu.assertTrue(aligned(b))
  b:resize(2)
  b:copy(1, "xy")
  lu.assertEquals(b:tostring(), "xy")
end

function TestGrowth.test_close_frees()
  if _VERSION ~= "Lua 5.4" then lu.skip("to-be-closed variables are Lua 5.4") end
  local code = [[
    local avxbuf = ...
    local outer
    do
      local b <close> = avxbuf.new(1000, 1)
      outer = b
      assert(#b == 1000)
    end
    return #outer
  ]]
  lu.assertEquals(assert(load(code))(avxbuf), 0)
end

-- A model: the same random operations on a buffer and on a Lua string.
function TestGrowth.test_random_operations_match_a_string_model()
  local rand = h.rng(12345)   -- 0 .. n-1, deterministic
  local b, s = avxbuf.new(), ""
  local other = avxbuf.from(h.pattern(300, 9))
  local steps = h.LIGHT and 600 or 3000
  for step = 1, steps do
    local op = rand(9)
    local what
    if op == 0 then
      local n = rand(200)
      b, s = avxbuf.new(n), ("\0"):rep(n)
      what = "new " .. n
    elseif op == 1 then
      local n = rand(#s + 100)
      b:resize(n)
      s = n <= #s and s:sub(1, n) or s .. ("\0"):rep(n - #s)
      what = "resize " .. n
    elseif op == 2 then
      local piece = h.pattern(rand(70), step)
      local i = rand(#other) + 1
      local part = other:tostring(i, i + rand(40))
      b:put(piece, avxbuf.from(part))
      s = s .. piece .. part
      what = "put"
    elseif op == 3 then
      local before = s
      b:put(b, "|")
      s = before .. before .. "|"
      if #s > 5000 then b:resize(100); s = s:sub(1, 100) end
      what = "put self"
    elseif op == 4 and #s > 0 then
      local n = rand(#s) + 1
      local si, di = rand(#s - n + 1) + 1, rand(#s - n + 1) + 1
      local chunk = s:sub(si, si + n - 1)
      b:copy(di, b, si, n)
      s = s:sub(1, di - 1) .. chunk .. s:sub(di + n)
      what = string.format("copy %d from %d to %d", n, si, di)
    elseif op == 5 and #s > 0 then
      local i = rand(#s) + 1
      local n = rand(#s - i + 2)
      b:zero(i, n)
      s = s:sub(1, i - 1) .. ("\0"):rep(n) .. s:sub(i + n)
      what = "zero"
    elseif op == 6 and #s > 0 then
      local i, c = rand(#s) + 1, rand(256)
      local n = rand(#s - i + 2)
      b:fill(c, i, n)
      s = s:sub(1, i - 1) .. string.char(c):rep(n) .. s:sub(i + n)
      what = "fill"
    elseif op == 7 and rand(10) == 0 then
      b:free()
      s = ""
      what = "free"
    else
      local str = h.pattern(rand(30), step + 7)
      if #s >= #str then
        local i = rand(#s - #str + 1) + 1
        b:copy(i, str)
        s = s:sub(1, i - 1) .. str .. s:sub(i + #str)
      end
      what = "copy string"
    end
    lu.assertEquals(#b, #s, what)
    h.assert_bytes(b:tostring(), s, string.format("step %d (%s)", step, what))
    lu.assertTrue(aligned(b), what)
  end
end

TestForgery = {}

-- Whatever carries the buffer metatable is not a buffer: full userdata of
-- other kinds (LuaJIT's FFI casts an io file to its FILE *, NULL once
-- closed) and light userdata (one metatable for all of them; their value
-- can be any address).
local function forgeries()
  local closed = io.tmpfile()
  closed:close()
  local list = { { "closed file", closed }, { "open file", io.tmpfile() },
                 { "light userdata", avxbuf.new(16):ref() } }
  local have_capi, capi = pcall(require, "capi")   -- spec/capi_module.c
  if have_capi then
    list[#list + 1] = { "NULL light userdata", capi.light(0) }
    list[#list + 1] = { "light userdata 0x10", capi.light(16) }
  end
  local ok, string_buffer = pcall(require, "string.buffer")
  if ok then
    list[#list + 1] = { "empty string.buffer", string_buffer.new() }
    list[#list + 1] = { "string.buffer", string_buffer.new():put(("z"):rep(100)) }
  end
  return list
end

function TestForgery.test_forged_metatable_is_refused()
  local mt = debug.getmetatable(avxbuf.new(1))
  for _, forged in ipairs(forgeries()) do
    local what, f = forged[1], forged[2]
    local saved = debug.getmetatable(f)
    debug.setmetatable(f, mt)
    local b = avxbuf.new(8)
    local calls = {
      function() avxbuf.copy(f, 1, "x") end, function() avxbuf.copy(b, 1, f) end,
      function() avxbuf.zero(f) end, function() avxbuf.fill(f, 1) end,
      function() return #f end, function() return tostring(f) end,
      function() f:put("x") end, function() b:put(f) end, function() f:resize(10) end,
      function() f:free() end, function() return f:tostring() end, function() return f:byte(1) end,
      function() return avxbuf.from(f) end,
    }
    local results = {}
    for i, call in ipairs(calls) do results[i] = { pcall(call) } end
    debug.setmetatable(f, saved)
    for i, r in ipairs(results) do
      lu.assertFalse(r[1], what .. ": call " .. i)
      lu.assertStrContains(tostring(r[2]), "avxbuf.buffer expected", false)
      lu.assertNil(tostring(r[2]):find("got avxbuf.buffer", 1, true), "a forgery named as what it forges")
    end
    lu.assertEquals(b:tostring(), ("\0"):rep(8), what)
  end
end

-- A metatable for every number: avxbuf must still see a number.
function TestForgery.test_forged_type_metatable_is_refused()
  local mt = debug.getmetatable(avxbuf.new(1))
  debug.setmetatable(0, mt)
  local ok, err = pcall(avxbuf.copy, 5, 1, "x")
  local ok2 = pcall(avxbuf.fill, 5, 1)
  debug.setmetatable(0, nil)
  lu.assertFalse(ok)
  lu.assertFalse(ok2)
  -- (luaL_typeerror names the value by the __name of the metatable it carries)
  lu.assertStrContains(err, "bad argument #1 to ")
  lu.assertStrContains(err, "(avxbuf.buffer expected, got ")
end

-- A function whose module record was replaced fails with an error.
function TestForgery.test_replaced_upvalue_is_an_error()
  if select("#", debug.getupvalue(avxbuf.new, 1)) == 0 then
    lu.skip("this Lua's debug library cannot reach the upvalues of C functions")
  end
  h.needs_children()
  local out = h.run_child({}, [[
    local avxbuf = require "avxbuf"
    debug.setupvalue(avxbuf.new, 1, newproxy and newproxy() or io.tmpfile())
    local ok, err = pcall(avxbuf.new, 4)
    print(ok, err)
  ]])
  lu.assertStrContains(out, "false")
  lu.assertStrContains(out, "module record was replaced")
end

TestMemory = {}

local function rss_mib()
  local f = io.open("/proc/self/statm")
  if not f then return nil end
  local pages = f:read("*n")
  local resident = f:read("*n")
  f:close()
  return pages and resident and resident * 4096 / 2 ^ 20
end

-- Runs drop(i) for i = 1..600 (each dropping 1 MiB of buffer) and fails
-- when the resident set grew by 48 MiB or more on the way: the collector,
-- paced by the buffer memory, must keep up. Skipped where RSS says nothing.
local function needs_rss()
  if h.LIGHT or h.QEMU or os.getenv("AVXBUF_SPEC_SANITIZED") then
    lu.skip("RSS under valgrind, qemu or a sanitizer allocator says nothing about this")
  end
  if not rss_mib() then lu.skip("no /proc/self/statm") end
end
local function assert_dropped_mib_do_not_pile_up(drop)
  needs_rss()
  collectgarbage("collect")
  local before = rss_mib()
  local peak = before
  for i = 1, 600 do
    drop(i)
    if i % 20 == 0 then peak = math.max(peak, rss_mib()) end
  end
  lu.assertTrue(peak - before < 48, string.format("RSS grew by %.0f MiB over 600 MiB of dropped buffers",
                                                  peak - before))
end

-- Buffer memory comes from the Lua allocator and is reported to the
-- collector, which therefore collects dropped buffers as it goes.
function TestMemory.test_dropped_buffers_do_not_pile_up()
  assert_dropped_mib_do_not_pile_up(function(i)
    avxbuf.new(1048576, i % 256)   -- filled, so each MiB is resident; then dropped
  end)
end

-- The same for buffers that grew by put: under LuaJIT the FFI path grows
-- them without telling the collector (no Lua call there); the next call
-- that paces, avxbuf.new here, does.
function TestMemory.test_buffers_grown_by_put_and_dropped_do_not_pile_up()
  local mib = ("m"):rep(1048576)
  assert_dropped_mib_do_not_pile_up(function() avxbuf.new():put(mib) end)
end

-- A buffer a finalizer brought back has no module; what it grows by is
-- not counted as held by the buffers, or its free() (which cannot take it
-- back) left the count inflated, and pacing waited for that many bytes:
-- 923 MiB of RSS for 1500 dropped 1 MiB buffers after such a churn.
function TestMemory.test_a_buffer_brought_back_does_not_stop_the_pacing()
  needs_rss()
  local back
  do
    local b = avxbuf.new(0)
    local on_gc = function() back = b end
    if rawget(_G, "newproxy") then
      getmetatable(newproxy(true)).__gc = on_gc   -- luacheck: ignore (5.1, LuaJIT)
    else
      setmetatable({}, { __gc = on_gc })
    end
  end
  collectgarbage("collect"); collectgarbage("collect")
  lu.assertNotNil(back, "the finalizer ran")
  local mib = ("m"):rep(1048576)
  for _ = 1, 600 do back:free(); back:put(mib) end
  assert_dropped_mib_do_not_pile_up(function(i) avxbuf.new(1048576, i % 256) end)
end

-- The pace tells the collector of buffer bytes grown and not given back
-- since it last did. Blocks dropped and not collected are paced: on 5.1
-- and LuaJIT the next avxbuf.new() runs a whole cycle for them. Blocks a
-- collection gave back (a program's own collectgarbage) are not paced
-- again: the next avxbuf.new() runs no cycle.
-- Drops a block large enough that the next call that paces steps: more
-- than the Lua heap and 32 MiB.
local function drop_big()
  collectgarbage("collect")
  local _ = avxbuf.new(math.max(32 * 2 ^ 20, 4096 * math.ceil(collectgarbage("count"))))
end

function TestMemory.test_blocks_a_collection_gave_back_are_not_paced_again()
  if h.TORTURE then lu.skip("the torture build collects at every allocation point") end
  if _VERSION == "Lua 5.1" then   -- and LuaJIT: a pace steps until the cycle ends
    drop_big()
    local cycle = h.arm(function() end)   -- cycle.ran: a collection has found it
    local _ = avxbuf.new(0)
    lu.assertTrue(cycle.ran, "no cycle ran for a dropped buffer's block")
  end
  drop_big()
  collectgarbage("collect")   -- gives its block back
  local cycle = h.arm(function() end)
  local _ = avxbuf.new(0)
  local ran = cycle.ran
  cycle.live = false
  lu.assertFalse(ran, "a cycle ran for a block a collection had given back")
end

-- 5.1's and LuaJIT's collector lets a finalizer's error out of lua_gc:
-- run by the pace's step, it is the calling function's error (the step is
-- called protected, so that the record it holds is let go of), and the
-- next call works.
function TestMemory.test_a_finalizers_error_in_the_pace_is_the_calls_error()
  if _VERSION ~= "Lua 5.1" then lu.skip("5.1 and LuaJIT: a pace steps until the cycle ends") end
  if h.TORTURE then lu.skip("the torture build collects at every allocation point") end
  drop_big()
  local armed = h.arm(function() error("the finalizer's own error") end)
  local ok, err = pcall(avxbuf.new, 10)
  armed.live = false
  lu.assertFalse(ok, "the step ran no finalizer")
  lu.assertStrContains(tostring(err), "the finalizer's own error")
  lu.assertEquals(#avxbuf.new(10), 10)
end

function TestMemory.test_a_stopped_collector_stays_stopped()
  if _VERSION == "Lua 5.1" and not rawget(_G, "jit") then
    lu.skip("Lua 5.1 cannot tell whether its collector is stopped; buffer allocations step it anyway")
  end
  collectgarbage("collect")
  collectgarbage("stop")
  local kept = setmetatable({}, { __mode = "v" })
  kept[1] = avxbuf.new(1048576)
  for _ = 1, 8 do local _ = avxbuf.new(1048576) end
  local alive = kept[1] ~= nil
  collectgarbage("restart")
  lu.assertTrue(alive, "a buffer only a weak table held was collected while the collector was stopped")
end
