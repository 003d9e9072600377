-- buf:lines([init]) and buf:split(sep [, init]), against references that do
-- not go through avxbuf: file:lines() of a file holding the same bytes and
-- a pure-Lua line splitter; a pure-Lua Python-style str.split (plain
-- string.find) and hand-checked Python results. Every init from -#s-2 to
-- #s+2, separators of 1..4 bytes that overlap themselves, buffers as
-- separators, 64 KiB+ texts under every search kernel, and loop bodies that
-- append to, shrink, free or reset the buffer being walked, followed step
-- by step by a string model of the same changes.
local lu = require "luaunit"
local h = require "helpers"
local avxbuf = h.avxbuf

local TORTURE = h.TORTURE
local LIGHT = h.LIGHT or TORTURE

local rng = h.rng   -- r(n): 0 .. n-1

-- string.sub's start rule (negative from the end, 0 is 1), past the end
-- clamped to #s + 1.
local function start_of(init, len)
  if init == nil then return 1 end
  if init < 0 then init = math.max(len + init + 1, 1) elseif init == 0 then init = 1 end
  return math.min(init, len + 1)
end

-- ---- references ---------------------------------------------------------------

-- Lines as file:lines() gives them, in plain Lua.
local function lines_reference(s)
  local t, pos = {}, 1
  while pos <= #s do
    local nl = s:find("\n", pos, true)
    if not nl then
      t[#t + 1] = s:sub(pos)
      break
    end
    t[#t + 1] = s:sub(pos, nl - 1)
    pos = nl + 1
  end
  return t
end

-- file:lines() itself, from byte `start` of a file holding the text (5.1,
-- 5.2 and LuaJIT read lines with fgets: texts for it have no zero bytes).
local function file_lines(f, start)
  f:seek("set", start - 1)
  local t = {}
  for line in f:lines() do t[#t + 1] = line end
  return t
end

-- Python's s.split(sep) on s:sub(start), as 1-based inclusive ranges of s.
local function split_reference(s, sep, start)
  local t, pos = {}, start
  while true do
    local a = pos <= #s - #sep + 1 and s:find(sep, pos, true)
    if not a then
      t[#t + 1] = { pos, #s }
      return t
    end
    t[#t + 1] = { pos, a - 1 }
    pos = a + #sep
  end
end

local function collect_lines(b, init)
  local t = {}
  for line in b:lines(init) do t[#t + 1] = line end
  return t
end

local function collect_split(b, sep, init)
  local t = {}
  for i, j in b:split(sep, init) do t[#t + 1] = { i, j } end
  return t
end

local function show(s)
  return (string.format("%q", s):gsub("\\\n", "\\n"))
end

local function same_lines(got, want, what)
  for k = 1, math.max(#got, #want) do
    if got[k] ~= want[k] then
      error(string.format("%s: line %d: got %s, expected %s (%d lines, expected %d)", what, k,
                          got[k] and show(got[k]) or "none", want[k] and show(want[k]) or "none", #got, #want), 2)
    end
  end
end

local function same_ranges(got, want, what)
  for k = 1, math.max(#got, #want) do
    local g, w = got[k], want[k]
    if not g or not w or g[1] ~= w[1] or g[2] ~= w[2] then
      error(string.format("%s: piece %d: got %s, expected %s (%d pieces, expected %d)", what, k,
                          g and g[1] .. ".." .. g[2] or "none", w and w[1] .. ".." .. w[2] or "none", #got, #want), 2)
    end
  end
end

-- Random text from pieces (newlines, CRLF, empty lines, CR alone).
local function text(r, len, pieces)
  local t, n = {}, 0
  while n < len do
    local p = pieces[1 + r(#pieces)]
    t[#t + 1] = p
    n = n + #p
  end
  return table.concat(t):sub(1, len)
end

-- Every init from -len - 2 to len + 2 (in the torture build: the ends and
-- a few between).
local function inits(len)
  local t = {}
  if TORTURE then
    for _, i in ipairs { -len - 2, -len - 1, -len, -1, 0, 1, 2, math.floor(len / 2), len, len + 1, len + 2 } do
      t[#t + 1] = i
    end
  else
    for i = -len - 2, len + 2 do t[#t + 1] = i end
  end
  return t
end

local LINE_PIECES = { "a", "bc", " ", "\n", "\r\n", "\n\n", "\r", "xyz", "hello world" }

TestSplit = {}

function TestSplit.tearDown()
  avxbuf.reset()
end

-- ---- lines ----------------------------------------------------------------------

function TestSplit.test_lines_known()
  local cases = {
    { "", {} }, { "\n", { "" } }, { "\n\n", { "", "" } }, { "a", { "a" } }, { "a\n", { "a" } },
    { "a\nb", { "a", "b" } }, { "a\r\nb\r\n", { "a\r", "b\r" } }, { "\r", { "\r" } },
    { "a\n\nb\n\n", { "a", "", "b", "" } },
    { "a\0b\n\0", { "a\0b", "\0" } },
  }
  for _, c in ipairs(cases) do
    same_lines(collect_lines(avxbuf.from(c[1])), c[2], show(c[1]))
    same_lines(lines_reference(c[1]), c[2], "the reference, " .. show(c[1]))
    -- inits at the ends of the integers: clamped
    same_lines(collect_lines(avxbuf.from(c[1]), h.MININT), c[2], show(c[1]) .. " from the smallest integer")
    same_lines(collect_lines(avxbuf.from(c[1]), h.MAXINT), {}, show(c[1]) .. " from the largest integer")
  end
end

function TestSplit.test_lines_against_file_lines_at_every_init()
  local r = rng(11)
  local lengths = TORTURE and { 0, 1, 2, 17, 64, 65, 129, 300 }
                  or { 0, 1, 2, 3, 4, 5, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 127, 128, 129, 200, 255, 256,
                       299, 300 }
  local texts = { "\n", "\n\n", "a\n", "\r\n", "a\r\nb", "\r", "\n\n\n\na" }
  for _, len in ipairs(lengths) do
    texts[#texts + 1] = text(r, len, LINE_PIECES)
    if not LIGHT then texts[#texts + 1] = text(r, len, { "\n", "ab", "\r\n", "c" }) end
  end
  for _, s in ipairs(texts) do
    local b = avxbuf.from(s)
    local f = io.tmpfile()
    f:write(s)
    for _, init in ipairs(inits(#s)) do
      local start = start_of(init, #s)
      local what = string.format("%d-byte text, init %d", #s, init)
      local want = file_lines(f, start)
      same_lines(lines_reference(s:sub(start)), want, what .. ": the two references")
      same_lines(collect_lines(b, init), want, what)
    end
    same_lines(collect_lines(b), file_lines(f, 1), "no init")
    f:close()
    h.assert_bytes(b:tostring(), s, "lines changes nothing")
  end
end

-- Zero bytes (which 5.1's file:lines cannot read back): the plain reference.
function TestSplit.test_lines_with_zero_bytes()
  local r = rng(12)
  for len = 0, LIGHT and 60 or 200, 7 do
    local s = text(r, len, { "\0", "a", "\n", "\r\n", "\0\n" })
    local b = avxbuf.from(s)
    for _, init in ipairs(inits(#s)) do
      same_lines(collect_lines(b, init), lines_reference(s:sub(start_of(init, #s))), "init " .. init)
    end
  end
end

function TestSplit.test_lines_of_a_large_buffer()
  local r = rng(13)
  local parts = {}
  for k = 1, 40 do
    parts[k] = h.long_pattern(({ 0, 1, 63, 64, 65, 4095, 4096, 10000 })[1 + r(8)], k):gsub("\n", "")
  end
  local s = table.concat(parts, "\n") .. ("z"):rep(70000)
  local b = avxbuf.from(s)
  -- (file:lines of 5.1, 5.2 and LuaJIT stops at a zero byte)
  local no_zero = s:gsub(".", function(c) if c == "\0" then return "0" end end)
  local f = io.tmpfile()
  f:write(no_zero)
  local plain = avxbuf.from(no_zero)
  for _, init in ipairs { 1, 2, 64, 65, 4097, #s - 70000, #s - 1, #s, #s + 1 } do
    same_lines(collect_lines(b, init), lines_reference(s:sub(init)), "init " .. init)
    same_lines(collect_lines(plain, init), file_lines(f, init), "file, init " .. init)
  end
  f:close()
end

-- ---- split -------------------------------------------------------------------------

-- What Python's str.split gives (checked by hand against CPython).
local PYTHON = {
  { "a,b,,c", ",", { "a", "b", "", "c" } }, { ",a,", ",", { "", "a", "" } }, { "", ",", { "" } },
  { "abc", "abc", { "", "" } }, { "aaa", "aa", { "", "a" } }, { "aaaa", "aa", { "", "", "" } },
  { "aaaaa", "aa", { "", "", "a" } }, { "abab", "ab", { "", "", "" } }, { "aXbXXc", "XX", { "aXb", "c" } },
  { "a\r\nb\r\n", "\r\n", { "a", "b", "" } }, { "xyz", "xyzw", { "xyz" } }, { "a\0b\0", "\0", { "a", "b", "" } },
  { "abcabcab", "cab", { "ab", "", "" } }, { "aabaab", "aab", { "", "", "" } }, { "ababa", "aba", { "", "ba" } },
}

function TestSplit.test_split_known()
  for _, c in ipairs(PYTHON) do
    local s, sep, want = c[1], c[2], c[3]
    for _, as in ipairs { sep, avxbuf.from(sep) } do
      local b = avxbuf.from(s)
      local got = {}
      for i, j in b:split(as) do
        lu.assertTrue(j >= i - 1, "a range")
        got[#got + 1] = b:tostring(i, j)
      end
      lu.assertEquals(got, want, string.format("%s split by %s", show(s), show(sep)))
      same_ranges(collect_split(b, as, h.MININT), collect_split(b, as), "from the smallest integer")
      same_ranges(collect_split(b, as, h.MAXINT), { { #s + 1, #s } }, "from the largest integer")
      -- and the reference agrees
      local ref = {}
      for k, p in ipairs(split_reference(s, sep, 1)) do ref[k] = s:sub(p[1], p[2]) end
      lu.assertEquals(ref, want, "the reference")
    end
  end
end

function TestSplit.test_split_random_at_every_init()
  local r = rng(21)
  local seps = {}
  for len = 1, 4 do   -- every separator over {a, b} of 1 to 4 bytes
    for k = 0, 2 ^ len - 1 do
      local t = {}
      for bit = 1, len do t[bit] = h.bit_is_set(k, bit - 1) and "b" or "a" end
      seps[#seps + 1] = table.concat(t)
    end
  end
  for round = 1, LIGHT and 25 or 90 do
    local len = round <= 10 and round - 1 or r(70)
    local alphabet = round % 5 == 0 and { "a", "b", "\0", "c" } or round % 3 == 0 and { "a" } or { "a", "b" }
    local s = text(r, len, alphabet)
    local b = avxbuf.from(s)
    local chosen = { "aa", seps[1 + r(#seps)], seps[1 + r(#seps)], seps[1 + r(#seps)], seps[1 + r(#seps)] }
    if round % 5 == 0 then chosen[#chosen + 1] = "\0" end
    if #s > 0 then chosen[#chosen + 1] = s end
    chosen[#chosen + 1] = s .. "a"
    for _, sep in ipairs(chosen) do
      local as = r(3) == 0 and avxbuf.from(sep) or sep
      for _, init in ipairs(inits(#s)) do
        same_ranges(collect_split(b, as, init), split_reference(s, sep, start_of(init, #s)),
                    string.format("%s split by %s%s from %d", show(s), type(as) == "string" and "" or "a buffer ",
                                  show(sep), init))
      end
    end
    if #s > 0 then same_ranges(collect_split(b, b), split_reference(s, s, 1), "split by itself") end
    h.assert_bytes(b:tostring(), s, "split changes nothing")
  end
end

-- Texts of 64 KiB and more under each search kernel: separators at vector
-- and page boundaries, long pieces, near misses, periodic text.
local function check_kernel_split(cfg)
  h.use(cfg.knobs)
  local function check(s, sep, what, init)
    local b = avxbuf.from(s)
    same_ranges(collect_split(b, sep, init), split_reference(s, sep, start_of(init, #s)),
                string.format("%s: %s (%d bytes, %d-byte separator)", cfg.name, what, #s, #sep))
  end
  local big = h.long_pattern(LIGHT and 66000 or 140000, 5)
  for _, m in ipairs { 1, 2, 3, 4, 8, 16, 33, 64, 65 } do
    check(big, big:sub(#big - 30000 + 1, #big - 30000 + m), "a separator from the text")
    check(big, big:sub(1, m), "the text's first bytes")
    check(big, big:sub(#big - m + 1), "the text's last bytes", 1000)
    if m >= 3 then
      check(big, big:sub(500, 500) .. ("\255"):rep(m - 2) .. big:sub(500 + m - 1, 500 + m - 1), "a near miss")
    end
  end
  -- the separator at every position around vector and page boundaries
  -- (at each listed index that does not overlap the one before)
  local t, len = {}, 0
  for _, at in ipairs { 1, 2, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 4095, 4096, 4097, 65535, 65536, 65537,
                        69990 } do
    if at > len then
      t[#t + 1] = ("x"):rep(at - len - 1) .. "ab"
      len = at + 1
    end
  end
  t[#t + 1] = ("x"):rep(70000 - len)
  local spaced = table.concat(t)
  lu.assertEquals({ spaced:find("ab", 4000, true) }, { 4095, 4096 })
  check(spaced, "ab", "separators at boundaries")
  check(spaced, "xab", "separators at boundaries, 3 bytes")
  for off = 0, 63, LIGHT and 21 or 7 do check(spaced:sub(off + 1), "ab", "offset " .. off) end
  check(("a"):rep(20000), "aab", "periodic, absent")
  check(("a"):rep(20001), "aa", "periodic, overlapping")
  check(("ab"):rep(30000) .. "abb", "abb", "periodic pairs")
  check(("\n"):rep(70000), "\n", "every byte a separator")
end

for _, cfg in ipairs(h.kernel_configs()) do
  TestSplit["test_split_kernel_" .. cfg.name] = function() check_kernel_split(cfg) end
end

-- ---- the loop body changes the buffer ---------------------------------------------

local function apply(b, s, m)
  if m[1] == "append" then
    b:put(m[2])
    return s .. m[2]
  elseif m[1] == "resize" then
    b:resize(m[2])
    return m[2] <= #s and s:sub(1, m[2]) or s .. ("\0"):rep(m[2] - #s)
  elseif m[1] == "free" then
    b:free()
    return ""
  elseif m[1] == "reset" then
    b:reset()
    return ""
  end
  return s
end

-- The schedule's change at this step, if any, made to b and to its model
-- s; the buffer must still hold what the model says. Returns the model.
local function follow(b, s, step, sched, what)
  local m = sched(step, s)
  if m then s = apply(b, s, m) end
  h.assert_bytes(b:tostring(), s, what .. ": the model")
  return s
end

-- Walks b:lines(init) while sched(step, s) changes the buffer after each
-- line, and follows it with a model: each step reads the buffer as it is
-- then, from just past the newline of the line before. After a line that
-- ran to the end without a newline the iteration may end, or go on with
-- the bytes appended since, but it may not skip or repeat any.
local function walk_lines(s, init, sched, what)
  local b = avxbuf.from(s)
  local it = b:lines(init)
  local pos, open = start_of(init, #s) - 1, false
  for step = 1, 10000 do
    local got = it()
    if pos >= #s then
      lu.assertNil(got, string.format("%s: step %d: the end (%d bytes), got %s", what, step, #s, tostring(got)))
      lu.assertNil(it(), what .. ": after the end")
      return
    end
    if got == nil and open then return end   -- ended after an unterminated line: allowed
    local nl = s:find("\n", pos + 1, true)
    local want = s:sub(pos + 1, (nl or #s + 1) - 1)
    if got ~= want then
      error(string.format("%s: step %d: got %s, expected %s (buffer %s)", what, step,
                          got and show(got) or "the end", show(want), show(s)), 0)
    end
    pos, open = nl or #s, not nl
    s = follow(b, s, step, sched, what)
  end
  error(what .. ": no end")
end

-- The same for b:split(sep, init): each step searches the buffer as it is
-- then, from just past the separator before; a piece with no separator
-- after it is the last.
local function walk_split(s, sep, init, sched, what)
  local b = avxbuf.from(s)
  local it = b:split(sep, init)
  local pos, done = start_of(init, #s), false
  for step = 1, 10000 do
    local i, j = it()
    if done or pos > #s + 1 then
      lu.assertNil(i, string.format("%s: step %d: the end, got %s..%s", what, step, tostring(i), tostring(j)))
      lu.assertNil(it(), what .. ": after the end")
      return
    end
    local a = pos <= #s - #sep + 1 and s:find(sep, pos, true)
    local wi, wj = pos, a and a - 1 or #s
    if i ~= wi or j ~= wj then
      error(string.format("%s: step %d: got %s..%s, expected %d..%d (buffer %s)", what, step, tostring(i),
                          tostring(j), wi, wj, show(s)), 0)
    end
    lu.assertTrue(j <= #b, what .. ": the piece lies in the buffer")
    if a then pos = a + #sep else done = true end
    s = follow(b, s, step, sched, what)
  end
  error(what .. ": no end")
end

local function at_step(n, m)
  return function(step) if step == n then return m end end
end

function TestSplit.test_lines_while_the_body_changes_the_buffer()
  walk_lines("l1\nl2\n", nil, at_step(1, { "append", "l3\n" }), "append a line")
  walk_lines("l1\nl2\n", nil, at_step(2, { "append", "l3\nl4" }), "append at the last line")
  walk_lines("l1\nl2\nl3\n", nil, at_step(1, { "resize", 4 }), "shrink into the next line")
  walk_lines("l1\nl2\nl3\n", nil, at_step(1, { "resize", 3 }), "shrink to the line's end")
  walk_lines("l1\nl2\nl3\n", nil, at_step(2, { "resize", 1 }), "shrink below the position")
  walk_lines("l1\nl2\nl3\n", nil, at_step(1, { "free" }), "free")
  walk_lines("l1\nl2\nl3\n", nil, at_step(1, { "reset" }), "reset")
  walk_lines("l1\nl2\nl3\n", 4, at_step(1, { "resize", 200 }), "grow with zero bytes")
  local r = rng(31)
  for round = 1, TORTURE and 30 or LIGHT and 100 or 400 do
    local s = text(r, r(60), { "a", "bc", "\n", "\r\n", "\n\n" })
    local init = r(#s + 5) - 2
    local budget = 1 + r(12)
    walk_lines(s, init, function(_, cur)
      if budget == 0 or r(3) == 0 then return nil end
      budget = budget - 1
      local k = r(6)
      if k <= 2 then return { "append", text(r, r(12), { "a", "\n", "bc", "\r\n" }) } end
      if k == 3 then return { "resize", r(#cur + 10) } end
      return { k == 4 and "free" or "reset" }
    end, string.format("round %d: %s from %d", round, show(s), init))
  end
end

-- A last line without a newline, then the body appends: the next line is
-- what was appended (or there is none), never part of it.
function TestSplit.test_lines_after_an_unterminated_last_line()
  walk_lines("ab", nil, at_step(1, { "append", "cd\n" }), "append after an unterminated last line")
  walk_lines("x\nab", nil, at_step(2, { "append", "cd\nef" }), "append after an unterminated last line, 2")
  walk_lines("x\nab", -2, at_step(1, { "append", "\n" }), "append a newline after an unterminated last line")
end

function TestSplit.test_split_while_the_body_changes_the_buffer()
  walk_split("a,b,c", ",", nil, at_step(1, { "append", ",d" }), "append")
  walk_split("a,b,c", ",", nil, at_step(3, { "append", ",d" }), "append after the last piece")
  walk_split("a,b,c", ",", nil, at_step(1, { "resize", 2 }), "shrink to the separator's end")
  walk_split("a,b,c", ",", nil, at_step(1, { "resize", 1 }), "shrink below the position")
  walk_split("a,b,c", ",", nil, at_step(1, { "resize", 3 }), "shrink into the next piece")
  walk_split("a,b,c", ",", nil, at_step(1, { "free" }), "free")
  walk_split(",a,b", ",", nil, at_step(1, { "reset" }), "reset after an empty first piece")
  walk_split("a::b", "::", nil, at_step(1, { "resize", 3 }), "shrink through the separator")
  local r = rng(32)
  for round = 1, LIGHT and 100 or 400 do
    local s = text(r, r(60), { "a", "b", "aa", "ab" })
    local sep = ({ "a", "b", "aa", "ab", "aba", "bb" })[1 + r(6)]
    local init = r(#s + 5) - 2
    local budget = 1 + r(12)
    walk_split(s, sep, init, function(_, cur)
      if budget == 0 or r(3) == 0 then return nil end
      budget = budget - 1
      local k = r(6)
      if k <= 2 then return { "append", text(r, r(12), { "a", "b" }) } end
      if k == 3 then return { "resize", r(#cur + 10) } end
      return { k == 4 and "free" or "reset" }
    end, string.format("round %d: %s split by %s from %d", round, show(s), sep, init))
  end
end

-- ---- writes between steps, several iterators at once -----------------------------

-- Each iterator reads the buffer as it is at its step: copy, fill, zero
-- and pack change bytes without changing the length, and LuaJIT's split
-- reads 64 separators ahead, so a separator written or overwritten between
-- two steps must be seen (it was not: ../shared/repro/split_stale_batch.lua).
-- A model string follows every write, made with the string library alone,
-- and each step is checked against string.find on it. A write is any of
-- put, copy (a string or the buffer itself), fill, zero, pack at an index,
-- resize, skip and get (which consume from the front: the iterators keep
-- their offsets into the unread bytes), in the function and method forms.
local WRITE_BYTES = { "a", "b", ",", "\n", "x", ",,", "ab" }

local function random_write(r, b, s)
  local k, n = r(11), #s
  local i = 1 + r(n + 1)                   -- 1 .. #s + 1
  local room = n - i + 1                   -- bytes from i to the end
  if k == 0 then
    local piece = text(r, r(6), WRITE_BYTES)
    b:put(piece)
    return s .. piece
  elseif k == 1 or k == 2 then
    local piece = text(r, r(room + 1), WRITE_BYTES)
    if k == 1 then avxbuf.copy(b, i, piece) else b:copy(i, piece) end
    return s:sub(1, i - 1) .. piece .. s:sub(i + #piece)
  elseif k == 3 then                       -- from the buffer itself, overlapping or not
    local si = 1 + r(n + 1)
    local len = r(math.min(room, n - si + 1) + 1)
    b:copy(i, b, si, len)
    return s:sub(1, i - 1) .. s:sub(si, si + len - 1) .. s:sub(i + len)
  elseif k == 4 or k == 5 then
    local len, byte = r(room + 1), WRITE_BYTES[1 + r(5)]:byte()
    if k == 4 then avxbuf.fill(b, byte, i, len) else b:fill(byte, i, len) end
    return s:sub(1, i - 1) .. string.char(byte):rep(len) .. s:sub(i + len)
  elseif k == 6 then
    local len = r(room + 1)
    if r(2) == 0 then avxbuf.zero(b, i, len) else b:zero(i, len) end
    return s:sub(1, i - 1) .. ("\0"):rep(len) .. s:sub(i + len)
  elseif k == 7 then
    local byte = WRITE_BYTES[1 + r(5)]:byte()
    b:pack(i, "B", byte)
    return s:sub(1, i - 1) .. string.char(byte) .. s:sub(i + 1)
  elseif k == 8 then
    local len = r(n + 6)
    b:resize(len)
    return len <= n and s:sub(1, len) or s .. ("\0"):rep(len - n)
  elseif k == 9 then
    local len = r(n + 1)
    b:skip(len)
    return s:sub(len + 1)
  end
  local len = r(n + 1)
  lu.assertEquals(b:get(len), s:sub(1, len))
  return s:sub(len + 1)
end

-- An iterator and what it must give next, from its position in the model.
local function split_walker(b, sep, init, s)
  local w = { it = b:split(sep, init), pos = start_of(init, #s), what = "split " .. show(sep) }
  function w.expect(cur)
    if w.done or w.pos > #cur + 1 then w.done = true; return nil end
    local a = w.pos <= #cur - #sep + 1 and cur:find(sep, w.pos, true)
    local i, j = w.pos, a and a - 1 or #cur
    if a then w.pos = a + #sep else w.done = true end
    return { i, j }
  end
  return w
end

local function lines_walker(b, init, s)
  local w = { it = b:lines(init), pos = start_of(init, #s) - 1, what = "lines" }
  function w.expect(cur)
    if w.done or w.pos >= #cur then w.done = true; return nil end
    local nl = cur:find("\n", w.pos + 1, true)
    local line = cur:sub(w.pos + 1, (nl or #cur + 1) - 1)
    w.pos = nl or #cur
    return { line }
  end
  return w
end

local function pack_results(...) return { n = select("#", ...), ... } end

local function interleaved_round(r, round)
  local s = text(r, r(40), WRITE_BYTES)
  local b = avxbuf.from(s)
  local walkers = {}
  for k = 1, 1 + r(3) do
    local init = r(3) == 0 and r(#s + 3) - 1 or nil
    walkers[k] = r(3) == 0 and lines_walker(b, init, s) or split_walker(b, ({ ",", ",,", "ab" })[1 + r(3)], init, s)
  end
  for step = 1, 60 do
    local w = walkers[1 + r(#walkers)]
    local want = w.expect(s)
    local got = pack_results(w.it())
    local what = string.format("round %s, step %d, %s over %s", round, step, w.what, show(s))
    if want == nil then
      lu.assertEquals(got.n, 0, what .. ": a finished iterator returns nothing")
    else
      lu.assertEquals({ got[1], got[2] }, { want[1], want[2] }, what)
    end
    if r(2) == 0 then
      s = random_write(r, b, s)
      h.assert_bytes(b:tostring(), s, what .. ": the model after a write")
    end
  end
end

function TestSplit.test_iterators_see_every_write_between_steps()
  h.each_jit_mode(function(mode)
    local r = rng(91)
    for round = 1, LIGHT and 150 or 600 do interleaved_round(r, mode .. " " .. round) end
  end)
end

-- An iterator keeps its buffer alive, and its separator's bytes as they
-- were when split was called.
-- One-byte separators, which LuaJIT's path finds many at a time (a batch
-- of offsets per call, src/kernels/offsets.c): gaps of every length from 0
-- to past the 64 bytes the scan takes before memchr, separators at every
-- offset of a 16-byte block, more pieces than a batch holds, and iterators
-- over different buffers taking turns (one batch serves them all).
function TestSplit.test_one_byte_separators_in_batches()
  local r = rng(77)
  local texts = {}
  for round = 1, LIGHT and 6 or 20 do
    local t = {}
    for _ = 1, 150 + r(150) do
      local gap = round % 4 == 0 and r(200) or round % 4 == 1 and r(3) or r(70)
      t[#t + 1] = ("x"):rep(gap)
    end
    texts[round] = table.concat(t, ",") .. (round % 2 == 0 and "," or "")
  end
  for round, s in ipairs(texts) do
    local b = avxbuf.from(s)
    same_ranges(collect_split(b, ","), split_reference(s, ",", 1), "text " .. round)
    local init = 1 + r(#s)
    same_ranges(collect_split(b, ",", init), split_reference(s, ",", init), "text " .. round .. " from " .. init)
  end
  -- Turns: each of three iterators steps in its turn, and one restarts now and then.
  local its, got, want = {}, {}, {}
  for k = 1, 3 do
    its[k] = avxbuf.from(texts[k]):split(",")
    got[k], want[k] = {}, split_reference(texts[k], ",", 1)
  end
  local live = 3
  while live > 0 do
    live = 0
    for k = 1, 3 do
      for _ = 1, 1 + r(70) do
        local i, j = its[k]()
        if i then got[k][#got[k] + 1] = { i, j } end
      end
      if #got[k] < #want[k] then live = live + 1 end
    end
  end
  for k = 1, 3 do same_ranges(got[k], want[k], "iterator " .. k .. " taking turns") end
end

-- A finished iterator returns nothing, as file:lines() does, whatever
-- ended it (the end of the bytes, a buffer shrunk or freed under it), and
-- again at every later call; LuaJIT's path returned one nil.
function TestSplit.test_finished_iterators_return_nothing()
  local function lines(b) return b:lines() end
  local function split(b) return b:split(",") end
  local function nothing() end
  local cases = {   -- text, iterator, steps with a value, what the body does after the first
    { "a\nb", lines, 2, nothing }, { "a,b", split, 2, nothing }, { "", lines, 0, nothing },
    { "", split, 1, nothing }, { "a,b,c,d", split, 1, function(b) b:free() end },
    { "a\nb\nc", lines, 1, function(b) b:resize(1) end }, { "a,b,c", split, 1, function(b) b:skip(5) end },
  }
  h.each_jit_mode(function(mode)
    for round = 1, 80 do   -- enough calls for LuaJIT to compile the loop
      for n, case in ipairs(cases) do
        local b = avxbuf.from(case[1])
        local it = case[2](b)
        for step = 1, case[3] do
          lu.assertNotNil(it())
          if step == 1 then case[4](b) end
        end
        for k = 1, 3 do
          lu.assertEquals(select("#", it()), 0, string.format("%s, round %d, case %d: call %d after the end", mode,
                                                                 round, n, k))
        end
      end
    end
  end)
end

function TestSplit.test_iterators_hold_what_they_need()
  local lines = avxbuf.from("one\ntwo"):lines()
  local sep = avxbuf.from(",")
  local pieces = avxbuf.from("a,b"):split(sep)
  sep:free()
  collectgarbage()
  collectgarbage()
  lu.assertEquals(lines(), "one")
  lu.assertEquals(lines(), "two")
  lu.assertNil(lines())
  lu.assertEquals({ pieces() }, { 1, 1 })
  lu.assertEquals({ pieces() }, { 3, 3 })
  lu.assertNil(pieces())
end

-- Hostile Lua: an iterator whose upvalues debug.setupvalue replaced raises
-- an error, whatever it was given (never reads that value as a buffer, nor
-- loops for ever on a separator that is no string).
function TestSplit.test_iterators_with_replaced_upvalues_raise()
  local b = avxbuf.from("a,b\nc")
  if not (debug and debug.setupvalue and debug.setupvalue(b:lines(), 2, b)) then
    lu.skip("this Lua's debug library cannot touch a C function's upvalues (5.1)")
  end
  local iterators = {
    lines = { function() return b:lines() end, 2 },
    split = { function() return b:split(",") end, 2 },
    gmatch = { function() return b:gmatch("%a") end, 1 },
  }
  for name, it in pairs(iterators) do
    for _, v in ipairs { "not a buffer", io.stdout, 12345, {}, avxbuf.new } do
      local f = it[1]()
      debug.setupvalue(f, it[2], v)
      local ok, err = pcall(f)
      lu.assertFalse(ok, name .. " with a " .. type(v))
      lu.assertStrContains(err, "iterator's upvalues were replaced")
    end
  end
  for _, v in ipairs { {}, 5, "" } do
    local f = b:split(",")
    debug.setupvalue(f, 4, v)
    local ok, err = pcall(f)
    lu.assertFalse(ok, "split with a separator " .. type(v))   -- (split takes no number either)
    lu.assertStrContains(err, "iterator's upvalues were replaced")
  end
  -- The position: anything but an offset the iterator could have made
  -- (../shared/repro/lines_pos_upvalue.lua: 2^64 read a wild address on
  -- LuaJIT; a NaN or a fraction gave NaN or fractional indices) raises;
  -- a negative offset is the end, as the iterator marks it.
  for name, make in pairs { lines = function() return b:lines() end, split = function() return b:split(",") end } do
    for _, v in ipairs { 2 ^ 64, 2 ^ 63, -2 ^ 64, 1e300, 0 / 0, 0.5, -0.5, 1 / 0 } do
      local f = make()
      f()
      local at = 3   -- C's iterators: upvalue 3 is the position
      for up = 1, 20 do
        if debug.getupvalue(f, up) == "pos" then at = up end
      end
      debug.setupvalue(f, at, v)
      local ok, err = pcall(f)
      lu.assertFalse(ok, name .. " at position " .. tostring(v))
      lu.assertStrContains(err, "iterator's upvalues were replaced")
    end
    local f = make()
    debug.setupvalue(f, 3, -2)
    for up = 1, 20 do
      if debug.getupvalue(f, up) == "pos" then debug.setupvalue(f, up, -2) end
    end
    lu.assertEquals(select("#", f()), 0, name .. " at position -2: the end")
  end
  -- LuaJIT's split keeps a batch of offsets and its place in it: an index
  -- past the batch, or something else as the batch, raises too.
  if avxbuf.ffi then
    local hostile = { nb = { 1e6, -1, 0 / 0 }, k = { -5 }, batch = { "x", 7, {} } }
    for name, values in pairs(hostile) do
      for _, v in ipairs(values) do
        local f = b:split(",")
        local at
        for up = 1, 20 do
          if debug.getupvalue(f, up) == name then at = up end
        end
        lu.assertNotNil(at, "split's upvalue " .. name)
        local saved = select(2, debug.getupvalue(f, at))
        debug.setupvalue(f, at, v)
        local ok, err = pcall(f)
        debug.setupvalue(f, at, saved)   -- the batch is every iterator's
        lu.assertFalse(ok, "split with " .. name .. " = " .. tostring(v))
        lu.assertStrContains(err, "iterator's upvalues were replaced")
      end
    end
  end
end
