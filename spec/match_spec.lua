-- buf:find, buf:match and buf:gmatch against Lua 5.4's string.find,
-- string.match and string.gmatch as the oracle, result list for result list
-- (how many values too, and the error text): a hand-written table of every
-- feature and error, each with every init from -#s-2 to #s+2, and random
-- patterns from a grammar of pattern pieces over a small alphabet. On Lua
-- 5.4 the oracle is this process's string library; on 5.1-5.3 and LuaJIT
-- (whose string libraries differ) a lua5.4 child computes the same cases:
-- it runs the top of this file, up to the line that returns M.
local M = {}

-- The cases and how a result is written down are shared with the child,
-- so they are plain Lua of every version, with no avxbuf in them.

-- One line of printable bytes for any string.
function M.escape(s)
  return (s:gsub("[^%w ]", function(c) return string.format("\\%03d", c:byte()) end))
end

local function pack(...) return { n = select("#", ...), ... } end

-- pcall's results as a line: status, count, then each value with its type.
local function line(r)
  local out = { r[1] and "ok" or "error", "#" .. r.n }
  for i = 2, r.n do
    local v = r[i]
    if type(v) == "number" then out[#out + 1] = string.format("n%.17g", v)
    elseif type(v) == "string" then out[#out + 1] = "s" .. M.escape(v)
    else out[#out + 1] = type(v) end
  end
  return table.concat(out, "|")
end

-- Runs case c on subject with the functions f (find, match and gmatch
-- taking the subject first): one line. gmatch: every call of the iterator
-- up to the one that ends it (or 3 errors, or 200 calls), ";" between.
function M.run(c, subject, f)
  if c.op ~= "gmatch" then return line(pack(pcall(f[c.op], subject, c.p, c.init, c.plain))) end
  local ok, it = pcall(f.gmatch, subject, c.p, c.init)
  if not ok then return "gmatch: " .. M.escape(tostring(it)) end
  local out, errors = {}, 0
  for _ = 1, 200 do
    local r = pack(pcall(it))
    out[#out + 1] = line(r)
    if not r[1] then
      errors = errors + 1
      if errors == 3 then break end
    elseif r[2] == nil then
      break
    end
  end
  return table.concat(out, ";")
end

M.STRINGS = { find = string.find, match = string.match, gmatch = string.gmatch }

-- The suite's seeded generator (a lua5.4 child loads this file without helpers).
local random = dofile("bench/lib/rng.lua").new

-- Subjects for the hand-written patterns: every byte the patterns look for.
local HAND_SUBJECTS = {
  "", "a", "hello world", "aXb12 _c!", "(a(b)c)[d]", "a.b-c%d^e$", "aaa\0bbb", "THE end\n\t",
  "x=10, yy=20", "\200\255a\1", "[[]]%%",
}

-- Every feature of 5.4's patterns and every error.
local function hand_patterns()
  local t = {
    -- plain text and single bytes
    "", "a", "hello", "o w", "xyz", "b1", "d^e",
    -- classes escaped, other bytes escaped, other letters (themselves)
    "%.", "%%", "%-", "%(", "%)", "%[", "%]", "%^", "%$", "%*", "%+", "%?", "% ", "%\0", "%_",
    "%q", "%e", "%y", "%B", "%F", "%Q", "%E",
    -- any byte
    ".", "..", ".+", ".-", ".*", ".?", "a.b", ".$",
    -- sets
    "[abc]", "[^abc]", "[a-f]", "[^a-f]+", "[%a_][%w_]*", "[]]", "[^]]", "[]a]+", "[a-]", "[-a]", "[%]]",
    "[%-]", "[z-a]", "[%d-x]", "[\0]", "[^\0]+", "[%%]", "[.]", "[%s%p]+", "[a-a]", "[^%]]", "[%A]+", "[^%W]",
    "[a-c-e]", "[%a-]",
    -- quantifiers
    "a*", "a+", "a-", "a?", "a*b", "a-b", "a?b", ".-b", "(.-)%s", "[%a]+?", "%d+", "b*$", "^a*", "a-$", "%a*%d",
    "a+-", "a??", "%s*", "%S-",
    -- balanced pairs
    "%b()", "%b[]", "%bab", "%baa", "%b)(", "%b\0a", "(%b())", "%b()+", "%b[]%b[]",
    -- frontiers
    "%f[%w]%w+", "%f[%W]", "%f[a-z]", "%f[\0]", "%f[^\0]", "%f[%a]", "%f[]]", "%f[^a]", "%f[%z]", "%f[%a]*",
    -- captures, positions and back-references
    "(a)(b)", "((a)(b))", "()", "(()a())", "(a*(.)%w(%s*))", "(.)%1", "(%a+).-%1", "((.)%2)", "()%1", "(()%1)",
    "(h)(e)(l)(l)(o)", "(%d+)", "(.-)=(%d+)", "(a)*", "()a+()", "(.)(.)%2%1", "(%w+)=(%w+)",
    -- anchors
    "^a", "^", "^$", "a$", "$", "a$b", "^^a", "$$", "^(a)", "^%s*(.-)%s*$", "%$", "^.-$", "^()", "()$",
    -- NUL bytes
    "\0", "a\0b", "%z+", "[%z]", "\0*", "\0$", "%Z+", "(\0)(b)",
    -- malformed: an error once matching gets there
    "%", "a%", "x%", "[a", "[", "[^", "[%", "[a%]", "%f", "%fa", "%f[a", "%b", "%ba", "a%b", "%1", "%0", "%9",
    "(a)%2", "(a%1)", "(a", "((a)", "a)", ")", "(()", "(()))", "[%a-z", "x[",
    ("()"):rep(32), ("()"):rep(33), ("(a)"):rep(33), "(" .. ("()"):rep(31) .. ")",
  }
  -- every class, lower and upper case, alone and with each quantifier
  for cl in ("acdglpsuwxz"):gmatch(".") do
    local up = cl:upper()
    for _, q in ipairs { "", "+", "*", "-", "?" } do
      t[#t + 1] = "%" .. cl .. q
      t[#t + 1] = "%" .. up .. q
    end
  end
  return t
end

-- The nesting limit (5.4's 200) and the capture limit (32), which need
-- longer subjects: subject, pattern pairs.
local function deep_cases()
  local a300 = ("a"):rep(300)
  return {
    { a300, ("a?"):rep(198) }, { a300, ("a?"):rep(199) }, { a300, ("a?"):rep(200) }, { a300, ("a?"):rep(250) },
    { ("a"):rep(10), ("a?"):rep(250) }, { "", ("a*"):rep(199) }, { "aaa", ("a*"):rep(200) },
    { "b", ("a-"):rep(199) .. "b" }, { "b", ("a-"):rep(200) .. "b" }, { a300, ("(a)"):rep(32) },
    { a300, ("a?"):rep(160) .. ("(a?)"):rep(20) }, { ("a"):rep(190) .. "b", ("a?"):rep(196) .. "[" },
    { a300 .. "b", ("%f[a]a?"):rep(100) }, { a300, (".-"):rep(210) }, { ("ab"):rep(150), ("a?b?"):rep(110) },
    { a300, "(" .. ("a?"):rep(197) .. ")" }, { a300, "(" .. ("a?"):rep(198) .. ")" },
  }
end

-- Random patterns: pieces (bytes, classes, sets, %b, %f, back-references,
-- anchors and malformed bits), quantified or not, some in captures.
local SINGLES = { "a", "b", "c", "a", "b", ".", "%a", "%A", "%d", "%D", "%l", "%u", "%s", "%S", "%w", "%W", "%x",
                  "%p", "%P", "%c", "%g", "%z", "%Z", "%.", "%%", "%(", "%]", "%-", "%q", "%B", "\0", "1", "_",
                  "[ab]", "[^ab]", "[a-c]", "[%a]", "[%d_]", "[]a]", "[^]a]", "[a-]", "[%]]", "[-]", "[.]", "[%%]",
                  "[\0]", "[^%s]", "[(]", "[%)]", "^", "-", "]" }
local QUANTIFIERS = { "", "", "", "", "*", "+", "-", "?" }
local OTHERS = { "%bab", "%b()", "%b[]", "%baa", "%f[%a]", "%f[^a]", "%f[b]", "%f[%z]", "()", "%1", "%2", "$",
                 "%f[^%z]" }
local MALFORMED = { "%", "[a", "[", "%f", "%fa", "%b", "%ba", ")", "(", "%0", "%9", "[^", "[%" }
local ALPHABET = { "a", "b", "c", "a", "b", "a", "(", ")", "[", "]", ".", "-", " ", "1", "_", "\0", "A", "%",
                   "^", "$", "\200" }

local COMMON = { "a", "b", ".", "%a", "[ab]", "a", "b", "%w", "[^a]", "%p" }

local function random_pattern(r, depth)
  local n = r(4) + (depth == 0 and 1 or 0)
  local out = {}
  for _ = 1, n do
    local k = r(100)
    if k < 35 then
      out[#out + 1] = COMMON[r(#COMMON) + 1] .. QUANTIFIERS[r(#QUANTIFIERS) + 1]
    elseif k < 60 then
      out[#out + 1] = SINGLES[r(#SINGLES) + 1] .. QUANTIFIERS[r(#QUANTIFIERS) + 1]
    elseif k < 78 then
      out[#out + 1] = OTHERS[r(#OTHERS) + 1]
    elseif k < 95 and depth < 3 then
      out[#out + 1] = "(" .. random_pattern(r, depth + 1) .. ")"
    elseif k < 97 then
      out[#out + 1] = MALFORMED[r(#MALFORMED) + 1]
    end
  end
  local p = table.concat(out)
  if depth == 0 then
    if r(4) == 0 then p = "^" .. p end
    if r(5) == 0 then p = p .. "$" end
  end
  return p
end

local function random_subject(r)
  local n = r(8) == 0 and r(40) or r(16)
  local out = {}
  for i = 1, n do out[i] = ALPHABET[r(#ALPHABET) + 1] end
  return table.concat(out)
end

M.RANDOM_CASES = 4000
M.RANDOM_CASES_LIGHT = 600

-- Every case, in an order both processes agree on. Each hand-written
-- pattern meets every subject with the default init, and one subject in
-- turn (two, unless light) with every init from -#s-2 to #s+2.
function M.cases(light)
  local list = {}
  local function add(op, s, p, init, plain)
    list[#list + 1] = { op = op, s = s, p = p, init = init, plain = plain }
  end
  local ops = { "find", "match", "gmatch" }
  for i, p in ipairs(hand_patterns()) do
    for j, s in ipairs(HAND_SUBJECTS) do
      local every = j == i % #HAND_SUBJECTS + 1 or not light and j == (i * 7) % #HAND_SUBJECTS + 1
      for _, op in ipairs(ops) do
        add(op, s, p)
        if every then
          for init = -#s - 2, #s + 2 do add(op, s, p, init) end
        end
      end
      add("find", s, p, nil, true)
    end
  end
  for _, c in ipairs(deep_cases()) do
    for _, op in ipairs { "find", "match", "gmatch" } do
      add(op, c[1], c[2])
      add(op, c[1], c[2], 5)
      add(op, c[1], c[2], -3)
    end
  end
  local r = random(20240601)
  ops = { "find", "find", "match", "gmatch" }
  for _ = 1, light and M.RANDOM_CASES_LIGHT or M.RANDOM_CASES do
    local s, p = random_subject(r), random_pattern(r, 0)
    local init = r(4) > 0 and r(#s + 5) - #s - 2 or nil
    local op = ops[r(#ops) + 1]
    add(op, s, p, init, op == "find" and r(10) == 0 or nil)
  end
  return list
end

-- The cases of one test: those of the functions in `ops` (a string such as
-- "find match"), hand-written (part "hand") or random ("random"); light
-- (true or "sample") as M.cases takes it.
M.SAMPLE = 10
function M.select(light, ops, part)
  local all = M.cases(light)
  local first_random = #all - (light and M.RANDOM_CASES_LIGHT or M.RANDOM_CASES) + 1
  local list = {}
  for k, c in ipairs(all) do
    if (" " .. ops .. " "):find(" " .. c.op .. " ", 1, true) and (k < first_random) == (part == "hand")
       and (light ~= "sample" or part ~= "hand" or k % M.SAMPLE == 0) then
      list[#list + 1] = c
    end
  end
  return list
end

if os.getenv("AVXBUF_MATCH_ORACLE") then return M end   -- the lua5.4 child: M is all it needs

local lu = require "luaunit"
local h = require "helpers"
local avxbuf = h.avxbuf

-- The methods themselves, called straight from pcall as M.run calls
-- string.find: an error raised from C names the caller's line when the
-- caller is a Lua function, and then the messages would differ by that.
local METHODS = avxbuf.new()
local BUFFERS = { find = METHODS.find, match = METHODS.match, gmatch = METHODS.gmatch }

-- Fewer under valgrind and the sanitizers; in the collector-torture build,
-- which collects at every point of the binding that may allocate, every
-- SAMPLE-th hand-written case too ("sample": each op and capture kind
-- still meets those points, which are per call).
-- (The cases are made for each test and dropped after it: kept, they
-- would slow every later test that runs the collector at each allocation.)
local LIGHT = os.getenv("AVXBUF_SPEC_TORTURE") and "sample"
  or h.LIGHT or os.getenv("AVXBUF_SPEC_SANITIZED") ~= nil

-- The oracle's line for each of the cases M.select(LIGHT, ops, part) gives.
local function oracle_lines(cases, ops, part)
  if _VERSION == "Lua 5.4" then
    local t = {}
    for k, c in ipairs(cases) do t[k] = M.run(c, c.s, M.STRINGS) end
    return t
  end
  h.needs_children()
  local out, status = h.run_child({ AVXBUF_MATCH_ORACLE = "1" }, string.format([[
    local M = dofile("spec/match_spec.lua")
    for _, c in ipairs(M.select(%s, %q, %q)) do io.write(M.run(c, c.s, M.STRINGS), "\n") end]],
    type(LIGHT) == "string" and ("%q"):format(LIGHT) or tostring(LIGHT), ops, part), "lua5.4")
  lu.assertEquals(status, 0, out)
  local t = {}
  for l in out:gmatch("([^\n]*)\n") do t[#t + 1] = l end
  lu.assertEquals(#t, #cases, "the lua5.4 child's cases")
  return t
end

local function describe(c)
  return string.format("%s(%q, %q, %s%s)", c.op, M.escape(c.s), M.escape(c.p), tostring(c.init),
                       c.plain and ", true" or "")
end

-- The cases of M.select(LIGHT, ops, part) on buffers, against the oracle.
local function check_against_oracle(ops, part)
  local cases = M.select(LIGHT, ops, part)
  local want = oracle_lines(cases, ops, part)
  local bad = {}
  for k, c in ipairs(cases) do
    local got = M.run(c, avxbuf.from(c.s), BUFFERS)
    if got ~= want[k] then
      bad[#bad + 1] = describe(c) .. "\n    got  " .. got .. "\n    want " .. want[k]
      if #bad == 10 then break end
    end
  end
  lu.assertTrue(#cases > 0)
  if #bad > 0 then lu.fail(#bad .. " differences from Lua 5.4 (the first 10):\n" .. table.concat(bad, "\n")) end
end

-- Finalizers and the collector as spec/gc_spec.lua sets them (spec/helpers.lua).
local arm, aggressive = h.arm, h.aggressive

local DELAYS = h.LIGHT and 6 or 20

TestMatch = {}

function TestMatch.test_hand_table_against_lua54()
  check_against_oracle("find match", "hand")
end

function TestMatch.test_random_patterns_against_lua54()
  check_against_oracle("find match", "random")
end

-- Each error's text, as 5.4 words it (and, on 5.4, string.find's own).
function TestMatch.test_errors_say_what_lua54_says()
  local b
  for _, case in ipairs {
    { "%", "malformed pattern (ends with '%')" },
    { "a[a", "malformed pattern (missing ']')" },
    { "[^", "malformed pattern (missing ']')" },
    { "%b", "malformed pattern (missing arguments to '%b')" },
    { "a%ba", "malformed pattern (missing arguments to '%b')" },
    { "%f", "missing '[' after '%f' in pattern" },
    { "%fa", "missing '[' after '%f' in pattern" },
    { "%1", "invalid capture index %1" },
    { "(a)%2", "invalid capture index %2" },
    { "%0", "invalid capture index %0" },
    { "(a%1)", "invalid capture index %1" },
    { "a).", "invalid pattern capture" },
    { "(a", "unfinished capture" },
    { ("()"):rep(33), "too many captures" },
    { ("a?"):rep(200), "pattern too complex", ("a"):rep(200) },
  } do
    local s = case[3] or "aaa"
    b = avxbuf.from(s)
    for _, op in ipairs { "find", "match" } do
      local ok, err = pcall(b[op], b, case[1])
      lu.assertFalse(ok, op .. " " .. case[1])
      lu.assertEquals(err, case[2], op .. " " .. case[1])
      if _VERSION == "Lua 5.4" then lu.assertEquals(select(2, pcall(string[op], s, case[1])), case[2]) end
    end
    local ok, err = pcall(b:gmatch(case[1]))
    lu.assertFalse(ok)
    lu.assertEquals(err, case[2], "gmatch " .. case[1])
  end
  -- 5.4's gmatch keeps its nesting counter across calls, and an error
  -- leaves it where it was: 200 - 191 for the next call here, then no limit
  local it = avxbuf.from(("a"):rep(190) .. "b"):gmatch(("a?"):rep(196) .. "[")
  lu.assertEquals(select(2, pcall(it)), "malformed pattern (missing ']')")
  lu.assertEquals(select(2, pcall(it)), "pattern too complex")
  lu.assertEquals(select(2, pcall(it)), "malformed pattern (missing ']')")
  b = avxbuf.from("aaa")
  -- lazily, as 5.4: no error where matching never reaches the bad piece
  lu.assertNil(b:find("x%"))
  lu.assertNil(b:match("b[", 2))
  lu.assertNil(b:find("%", 5), "init beyond the end: nil before the pattern is looked at")
  local r = { b:find(("()"):rep(32)) }   -- 32 is the most
  lu.assertEquals(#r, 34)
  lu.assertEquals(r[34], 1)
end

function TestMatch.test_examples()
  local b = avxbuf.from("key=123, other = 4; x=yz")
  lu.assertEquals({ b:match("(%w+)=(%d+)") }, { "key", "123" })
  lu.assertEquals({ b:match("(%w+)=(%d+)", 2) }, { "ey", "123" })
  lu.assertEquals({ b:find("(%w+)%s*=%s*(%d+)", 5) }, { 10, 18, "other", "4" })
  lu.assertEquals({ b:match("()x()") }, { 21, 22 })
  lu.assertEquals({ b:find("^key") }, { 1, 3 })
  lu.assertEquals({ b:find("^=", 4) }, { 4, 4 }, "^ anchors at init")
  lu.assertNil(b:find("^=", 3))
  lu.assertEquals({ b:match("%f[%a]%a+", -5) }, { "x" })
  lu.assertEquals({ avxbuf.from("f(a(b)c)d"):match("%b()") }, { "(a(b)c)" })
  lu.assertEquals({ avxbuf.from("a\0b\0"):find("%z", 3) }, { 4, 4 })
  lu.assertEquals({ avxbuf.from("a\0b"):match("a%zb") }, { "a\0b" })
  lu.assertEquals({ avxbuf.new():match("") }, { "" })
  lu.assertEquals({ avxbuf.new():find("()") }, { 1, 0, 1 })
end

-- Without a magic byte in the needle, or with plain true, find searches
-- with the vector kernels and the needle may be a buffer; plain is read
-- with Lua's truthiness.
function TestMatch.test_plain_find()
  local b = avxbuf.from("a+b (a+b)? [x]")
  lu.assertEquals({ b:find("(a+b)", 1, true) }, { 5, 9 })
  lu.assertEquals({ b:find("(a%+b)") }, { 1, 3, "a+b" }, "a pattern without plain")
  lu.assertEquals({ b:find("(a%+b)", 1, false) }, { 1, 3, "a+b" })
  lu.assertNil(b:find("(a+b)"))
  lu.assertEquals({ b:find("[x]", 1, 0) }, { 12, 14 }, "0 is true")
  lu.assertEquals({ b:find("[x]", nil, "") }, { 12, 14 })
  lu.assertEquals({ b:find(avxbuf.from("[x]"), 1, true) }, { 12, 14 }, "a buffer needle")
  lu.assertEquals({ b:find(avxbuf.from("b ")) }, { 3, 4 }, "a buffer needle without magic bytes: plain")
  lu.assertEquals({ b:find(b, 1, true) }, { 1, #b })
  lu.assertNil(b:find("x", 15, true))
  lu.assertEquals({ b:find("", 15, true) }, { 15, 14 })
  lu.assertEquals({ b:find("+b", -10, true) }, { 7, 8 })
  -- a buffer is never a pattern
  local ok, err = pcall(function() return (b:find(avxbuf.from("(a+b)"))) end)
  lu.assertFalse(ok)
  lu.assertStrContains(err, "bad argument #1 to 'find' (string expected, got avxbuf.buffer")
  lu.assertStrContains(err, "plain = true")
  ok, err = pcall(function() return (b:find(5)) end)
  lu.assertFalse(ok)
  lu.assertStrContains(err, "bad argument #1 to 'find' (string or avxbuf.buffer expected, got number)")
  ok, err = pcall(function() return (b:match(avxbuf.from("a"))) end)
  lu.assertFalse(ok)
  lu.assertStrContains(err, "bad argument #1 to 'match' (string expected, got avxbuf.buffer)")
end

-- Pushing the captures makes strings, which can run a finalizer that
-- frees, shrinks or grows the buffer: the results are the match on the
-- bytes as they were, or as the finalizer left them, never a mix, and
-- never bytes read from freed memory. Both ways of copying them out: a few
-- bytes (onto the C stack) and many (a scratch userdata).
function TestMatch.test_captures_while_a_finalizer_changes_the_buffer()
  local data = h.pattern(3000, 11)
  local ops = {
    few = function(b) return pack(b:match("(.)(..)()(...)", 100)) end,
    many = function(b) return pack(b:find("^(.-)(.)()(.*)$")) end,
    positions = function(b) return pack(b:find("()(.)()", 7)) end,
  }
  local actions = {
    free = function(b) b:free() end,
    shrink = function(b) b:resize(150) end,
    grow = function(b) b:put(data) end,
    refill = function(b) b:free(); b:put(h.pattern(3000, 12)) end,
  }
  local function same(x, y)
    if x.n ~= y.n then return false end
    for i = 1, x.n do if x[i] ~= y[i] then return false end end
    return true
  end
  aggressive(function()
    for name, op in pairs(ops) do
      for what, action in pairs(actions) do
        for delay = 0, DELAYS do
          local b = avxbuf.from(data)
          local before = op(b)
          local fin = arm(function() action(b) end, delay)
          local got = op(b)
          fin.live = false
          if fin.ran then
            local after = op(b)
            lu.assertTrue(same(got, before) or same(got, after),
                          string.format("%s, %s at delay %d: the match on neither the old nor the new bytes",
                                        name, what, delay))
          else
            lu.assertTrue(same(got, before), name)
          end
        end
      end
    end
  end)
end

TestGmatch = {}

function TestGmatch.test_hand_table_against_lua54()
  check_against_oracle("gmatch", "hand")
end

function TestGmatch.test_random_patterns_against_lua54()
  check_against_oracle("gmatch", "random")
end

function TestGmatch.test_examples()
  local function all(b, p, init)
    local t = {}
    for a, c in b:gmatch(p, init) do t[#t + 1] = c and a .. "=" .. c or a end
    return t
  end
  local b = avxbuf.from("one two  three")
  lu.assertEquals(all(b, "%a+"), { "one", "two", "three" })
  lu.assertEquals(all(b, "%a+", 6), { "wo", "three" })
  lu.assertEquals(all(b, "%a+", -3), { "ree" })
  lu.assertEquals(all(b, "%a+", 100), {})
  lu.assertEquals(all(b, "()", 14), { 14, 15 })
  lu.assertEquals(all(b, "%a*"), { "one", "two", "", "three" }, "no empty match right after a match")
  lu.assertEquals(all(avxbuf.from("^a^a"), "^a"), { "^a", "^a" }, "'^' is a byte in gmatch, as in 5.4")
  lu.assertEquals(all(avxbuf.from("k=v, a=b"), "(%w+)=(%w+)"), { "k=v", "a=b" })
end

-- The iterator holds the buffer and reads its bytes at each call: shrunk
-- under the offset, it ends; what it finds is in the bytes of that call.
function TestGmatch.test_buffer_changed_between_iterations()
  local b = avxbuf.from("one two three four")
  local it = b:gmatch("%a+")
  lu.assertEquals(it(), "one")
  b:resize(5)                       -- "one t"
  lu.assertEquals(it(), "t")
  lu.assertNil(it())
  b:free()
  lu.assertNil(it())
  lu.assertNil(it())
  b:put("xyz abc")                  -- back past the offset (5): on from there
  lu.assertEquals(it(), "bc")
  lu.assertNil(it())
  b:put(" more")
  lu.assertEquals(it(), "more")
  -- an offset the buffer never reaches again
  local it2 = avxbuf.from("abc def"):gmatch("%a+", 5)
  lu.assertEquals(it2(), "def")
  lu.assertNil(it2())
  -- replaced upvalues are an error, not a crash (Lua 5.1's debug library
  -- does not touch a C function's upvalues)
  if debug and debug.setupvalue and debug.getupvalue(it, 1) ~= nil then
    local it3 = b:gmatch("%a+")
    debug.setupvalue(it3, 1, {})
    lu.assertFalse(pcall(it3))
    local it4 = b:gmatch("%a+")
    debug.setupvalue(it4, 2, io.stdout)
    lu.assertFalse(pcall(it4))
    local it5 = b:gmatch("%a+")
    debug.setupvalue(it5, 2, 42)
    lu.assertFalse(pcall(it5))
    local it6 = b:gmatch("%a+")
    debug.setupvalue(it6, 1, debug.getupvalue(b:gmatch("%d"), 2))
    lu.assertFalse(pcall(it6))
  end
end

-- Finalizers that free, shrink or grow the buffer while gmatch makes its
-- strings: the pieces are those of the bytes before, then of the bytes
-- after (a free or a shrink ends the iteration; a growth goes on into the
-- new bytes).
function TestGmatch.test_finalizer_changes_the_buffer_during_iteration()
  local data = h.pattern(1200, 21)
  local chunks = {}
  for i = 1, #data, 4 do chunks[#chunks + 1] = data:sub(i, i + 3) end
  aggressive(function()
    for _, action in ipairs { "free", "shrink", "grow" } do
      for delay = 0, DELAYS do
        local b = avxbuf.from(data)
        local fin = arm(function()
          if action == "free" then b:free() elseif action == "shrink" then b:resize(300) else b:put(data) end
        end, delay)
        local got = {}
        for piece in b:gmatch("....") do got[#got + 1] = piece end
        fin.live = false
        for i, piece in ipairs(got) do
          h.assert_bytes(piece, chunks[(i - 1) % #chunks + 1], string.format("%s at delay %d, piece %d", action,
                                                                               delay, i))
        end
        if action == "grow" and fin.ran then lu.assertEquals(#got, 2 * #chunks)
        elseif fin.ran then lu.assertTrue(#got <= #chunks)
        else lu.assertEquals(#got, #chunks) end
      end
    end
  end)
end

-- A small C stack (1 MiB, what some hosts give a thread): after "pattern
-- too complex", 5.4's gmatch has no nesting limit for the next call, and
-- avxbuf's guard bounds it; a deep find and match stay within 5.4's 200
-- levels. Each must end in an error or a result, never a crash.
function TestGmatch.test_within_a_1_mib_c_stack()
  h.needs_children()
  if os.getenv("AVXBUF_SPEC_SANITIZED") then lu.skip("sanitizer frames are larger than the build's own") end
  local code = [[
    local avxbuf = require "avxbuf"
    local s, p = ("a"):rep(30000), ("a?"):rep(30000)
    local it = avxbuf.from(s):gmatch(p)
    print(select(2, pcall(it)))
    print(select(2, pcall(it)))
    print(select(2, pcall(avxbuf.from(s).match, avxbuf.from(s), p)))
    print(select(2, pcall(avxbuf.from(s).find, avxbuf.from(s), ("(a?)"):rep(31))))
    print("survived")
  ]]
  local out, status = h.shell(string.format("ulimit -s 1024 && LUA_CPATH=%s %s -e %s",
                                            h.sh(package.cpath:match("^[^;]*") .. ";;"),
                                            h.sh(arg[-1] or "lua5.4"), h.sh(code)))
  lu.assertEquals(status, 0, out)
  lu.assertStrContains(out, "pattern too complex\npattern too complex\npattern too complex\n")
  lu.assertStrContains(out, "survived")
end
