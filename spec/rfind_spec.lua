-- rfind: every kernel's reverse search against a byte-by-byte reference, at
-- the sizes where the vector strategy changes, with every kind of init.
local lu = require "luaunit"
local h = require "helpers"
local avxbuf = h.avxbuf

-- Fewer cases under valgrind and the sanitizers (the collector-torture
-- build collects at every allocation).
local LIGHT = h.LIGHT or os.getenv("AVXBUF_SPEC_SANITIZED") ~= nil

-- The last occurrence of p in s starting at or before init: the positions
-- from there down, each compared with string.sub. init: negative counts
-- from the end (unclamped), below 1 finds nothing, past the last possible
-- start is that start, absent is the end (#s + 1 for the empty string).
-- sub(i) == p is remembered per text and needle, so that many inits cost
-- one pass (build_cases forgets it text by text).
local memo = {}
local function rfind_reference(s, p, init)
  local n, m = #s, #p
  if init == nil then init = n + 1 elseif init < 0 then init = n + init + 1 end
  if init < 1 then return nil end
  local by_text = memo[s] or {}
  memo[s] = by_text
  local seen = by_text[p] or {}
  by_text[p] = seen
  for i = math.min(init, n - m + 1), 1, -1 do
    local hit = seen[i]
    if hit == nil then
      hit = s:sub(i, i + m - 1) == p
      seen[i] = hit
    end
    if hit then return i, i + m - 1 end
  end
  return nil
end

local function show(a, b) return a == nil and "nil" or string.format("%d, %d", a, b) end

-- A case: text, needle (a string, or the same bytes in a buffer, made once
-- per needle), init, and the reference's answer.
local function case(list, s, p, init, what, buffer_needle)
  local i, j = rfind_reference(s, p, init)
  list[#list + 1] = { s = s, p = p, init = init, i = i, j = j, what = what, needle = buffer_needle or p }
end

-- The inits around a match at w (and around the text's ends): the match
-- itself, one before (the previous one must come out), one after, the
-- same counted from the end, and the out-of-range ones.
local function inits_around(n, w)
  local t = { 0, 1, -1, n, n + 1, n + 2, -n, -n - 1, -n - 2, h.MAXINT, h.MININT }
  if w then
    for _, k in ipairs { w - 1, w, w + 1 } do
      t[#t + 1] = k
      t[#t + 1] = k - n - 1   -- k counted from the end
    end
  end
  return t
end

-- Texts and needles where the search's strategy changes: the number of
-- start positions n - m + 1 around one vector (16, 32, 64 bytes), four and
-- eight of them and a few KiB; needles of 1, 2, 3, 17, 64 and 65 bytes at
-- the first and the last possible start, in the middle, near misses (first
-- and last byte right, the middle wrong) and absent.
local NEEDLES = { 1, 2, 3, 17, 64, 65 }
local function build_cases()
  local list = {}
  local text = h.long_pattern(6000, 31)
  local limits = {}
  for n = 1, 20 do limits[n] = true end
  for _, v in ipairs { 16, 32, 64 } do
    for _, k in ipairs { 1, 4, 5, 8 } do
      for d = -1, 1 do limits[k * v + d] = true end
    end
  end
  for _, n in ipairs { 1000, 2047, 2048, 2049, 4099, 5000 } do limits[n] = true end
  local sorted = {}
  for limit in pairs(limits) do sorted[#sorted + 1] = limit end
  table.sort(sorted)
  for li, limit in ipairs(sorted) do
    if not LIGHT or li % 3 == 0 then
      for mi, m in ipairs(NEEDLES) do
        local n = limit + m - 1
        local s = text:sub(1, n)
        local as_buffer = (li + mi) % 2 == 0
        local needles = {
          { s:sub(1, m), "at the first start" },
          { s:sub(n - m + 1), "at the last start" },
          { s:sub(math.floor(limit / 2) + 1, math.floor(limit / 2) + m), "in the middle" },
        }
        if m >= 3 then
          needles[#needles + 1] = { s:sub(1, 1) .. ("\0"):rep(m - 2) .. s:sub(m, m), "near miss at the start" }
          needles[#needles + 1] = { s:sub(n - m + 1, n - m + 1) .. ("\0"):rep(m - 2) .. s:sub(n, n),
                                    "near miss at the end" }
        end
        for _, np in ipairs(needles) do
          local p, what = np[1], np[2]
          local buffer_needle = as_buffer and avxbuf.from(p)
          local w = rfind_reference(s, p)
          for _, init in ipairs(inits_around(n, w)) do
            case(list, s, p, init, string.format("%s, %d bytes, init %s", what, n, tostring(init)), buffer_needle)
          end
          case(list, s, p, nil, string.format("%s, %d bytes, no init", what, n), buffer_needle)
        end
        memo = {}
      end
    end
  end
  -- periodic text: candidates everywhere that fail late, found only at the start
  local a, pairs_of = ("a"):rep(LIGHT and 3000 or 20000), LIGHT and 1500 or 10000
  local late = ("a"):rep(50) .. "b" .. ("a"):rep(49)
  case(list, late .. a, late, nil, "periodic, found at the start")
  case(list, a, late, nil, "periodic, absent")
  case(list, late .. a, late, 100, "periodic, found with init at the match")
  case(list, late .. a, late, 99, "periodic, init one before the only match")
  case(list, "abb" .. ("ab"):rep(pairs_of), "abb", nil, "periodic pairs, found at the start")
  case(list, "abb" .. ("ab"):rep(pairs_of), "aba", nil, "periodic pairs, the last of many")
  case(list, "abb" .. ("ab"):rep(pairs_of), "aba", -3, "periodic pairs, one before the last")
  case(list, ("ab"):rep(pairs_of), "ab" .. ("a"):rep(17), nil, "periodic pairs, absent")
  -- the only match at every place around where the checks' budget runs
  -- out: the vector part's, then the C library's (then the two-way search)
  local run, late4 = ("a"):rep(1000), "aaaabaaaaa"
  for q = 600, 991, LIGHT and 7 or 1 do
    case(list, run:sub(1, q - 1) .. late4 .. run:sub(q + 10), late4, nil, "budget spent near the match at " .. q)
  end
  memo = {}
  -- two letters: candidates everywhere, so that most of the text is left
  -- to the two-way search, with needles of many factorisations, present
  -- (from init at the match and one before) and with one byte changed
  for seed = 1, LIGHT and 10 or 60 do
    local s = h.pattern(300, seed):gsub(".", function(c) return c:byte() < 128 and "a" or "b" end)
    for k = 1, 6 do
      local m = 2 + (seed + k) % 9
      local at = 1 + (seed * 37 + k * 101) % 250
      local p = s:sub(at, at + m - 1)
      case(list, s, p, nil, string.format("two letters, seed %d, at %d", seed, at))
      case(list, s, p, at - 1, string.format("two letters, seed %d, init %d", seed, at - 1))
      local c = 1 + k % m
      local q = p:sub(1, c - 1) .. (p:sub(c, c) == "a" and "b" or "a") .. p:sub(c + 1)
      case(list, s, q, nil, string.format("two letters, seed %d, byte %d of %d changed", seed, c, m))
    end
    memo = {}
  end
  -- a large text at every misalignment of its end
  local big = h.long_pattern(LIGHT and 20000 or 100000, 5)
  for off = 0, 63, LIGHT and 21 or 7 do
    local s = big:sub(1, #big - off)
    case(list, s, big:sub(101, 140), nil, "large, the first of one, end offset " .. off)
    case(list, s, big:sub(101, 108), nil, "large, the last of several, end offset " .. off)
    case(list, s, big:sub(101, 108), -5000, "large, from 5000 before the end, end offset " .. off)
    memo = {}
  end
  return list
end

-- The cases, made once for the kernel tests and let go after the last of
-- them (kept, they would slow every later test that collects); under the
-- sanitizers made for each test.
local cached, pending = nil, 0
local function cases_for_a_test()
  if LIGHT then return build_cases() end
  local cases = cached or build_cases()
  pending = pending - 1
  cached = pending > 0 and cases or nil
  return cases
end

local function check_kernel_rfind(cfg)
  local cases = cases_for_a_test()
  h.use(cfg.knobs)
  local buffers = {}
  for _, c in ipairs(cases) do
    local b = buffers[c.s] or avxbuf.from(c.s)
    buffers[c.s] = b
    local i, j = b:rfind(c.needle, c.init)
    if i ~= c.i or j ~= c.j then
      error(string.format("%s: %s: rfind(%d-byte needle) in %d bytes gave %s, expected %s", cfg.name, c.what, #c.p,
                          #c.s, show(i, j), show(c.i, c.j)), 2)
    end
  end
  avxbuf.reset()
end

TestRfind = {}

for _, cfg in ipairs(h.kernel_configs()) do
  TestRfind["test_kernel_" .. cfg.name] = function() check_kernel_rfind(cfg) end
  pending = pending + 1
end

-- Every init from before the start to past the end, the empty needle too.
function TestRfind.test_every_init()
  local s = "hello, world, hello"
  local b = avxbuf.from(s)
  for _, p in ipairs { "hello", "o", "world", "xyz", "", "hello, world, hello", "hello, world, hello!", ",", "d, h" } do
    for init = -#s - 3, #s + 3 do
      lu.assertEquals({ b:rfind(p, init) }, { rfind_reference(s, p, init) }, string.format("%q from %d", p, init))
      lu.assertEquals({ b:rfind(avxbuf.from(p), init) }, { rfind_reference(s, p, init) }, "a buffer as the needle")
    end
    lu.assertEquals({ b:rfind(p) }, { rfind_reference(s, p) }, string.format("%q, no init", p))
    lu.assertEquals({ b:rfind(p, nil) }, { rfind_reference(s, p) }, string.format("%q, nil init", p))
  end
end

function TestRfind.test_edges()
  local b = avxbuf.from("abcabc")
  lu.assertEquals({ b:rfind("abc") }, { 4, 6 })
  lu.assertEquals({ b:rfind("abc", 3) }, { 1, 3 })
  lu.assertEquals({ b:rfind("abc", 4) }, { 4, 6 }, "a match may end past init")
  lu.assertEquals({ b:rfind("abc", 100) }, { 4, 6 })
  lu.assertNil(b:rfind("abc", 0))
  lu.assertNil(b:rfind("abc", -7), "before the start")
  lu.assertEquals({ b:rfind("abc", -6) }, { 1, 3 })
  -- the empty string: at init, at most #buf + 1; nothing before 1
  lu.assertEquals({ b:rfind("") }, { 7, 6 })
  lu.assertEquals({ b:rfind("", 100) }, { 7, 6 })
  lu.assertEquals({ b:rfind("", 3) }, { 3, 2 })
  lu.assertEquals({ b:rfind("", -1) }, { 6, 5 })
  lu.assertNil(b:rfind("", 0))
  lu.assertNil(b:rfind("", h.MININT))
  lu.assertEquals({ b:rfind("", h.MAXINT) }, { 7, 6 })
  lu.assertEquals({ avxbuf.new():rfind("") }, { 1, 0 })
  lu.assertNil(avxbuf.new():rfind("a"))
  lu.assertEquals({ b:rfind(b) }, { 1, 6 }, "itself")
  lu.assertNil(b:rfind("abcabca"), "longer than the buffer")
end

-- rfind uses the kernel find names, at the size of its window.
function TestRfind.test_kernel_is_finds()
  h.use { kernel = "libc" }
  lu.assertEquals(avxbuf.kernel("find", 100), "libc")
  local b = avxbuf.from(("x"):rep(100) .. "y")
  lu.assertEquals({ b:rfind("xy") }, { 100, 101 })
  avxbuf.reset()
end
