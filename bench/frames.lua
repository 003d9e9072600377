-- A receiver of length-prefixed frames (a 4-byte big-endian length, then
-- the bytes) fed the wire in seeded random chunks of 1-8192 bytes: avxbuf's
-- stream (put each chunk, buf:unpack(">s4") until it says short) against
-- the plain-string receiver (concatenate the rest and the chunk, decode
-- each length, sub each frame, keep what is left). Both make every frame
-- a string and hand it on (the last 64 stay in a ring, as a queue to a
-- handler would keep them); their counts and checksums must agree. Rounds interleave the
-- two (alternating which goes first); medians and their ratio.
--   lua5.4 bench/frames.lua [--quick]     luajit bench/frames.lua [--quick]
--   (AVXBUF_BUILD=dir: avxbuf.so from dir; by default build/ or build/luajit/)
package.path = "lua/?.lua;bench/lib/?.lua;" .. package.path
local jit = rawget(_G, "jit")
local default_build = jit and "build/luajit" or (_VERSION == "Lua 5.4" and "build" or "build/lua" .. _VERSION:sub(5))
package.cpath = (os.getenv("AVXBUF_BUILD") or default_build) .. "/?.so;" .. package.cpath
local avxbuf = require "avxbuf"
local harness = require "harness"
local rng = require "rng"

local quick = arg[1] == "--quick"
local FRAMES = quick and 5000 or 20000
local ROUNDS = quick and 5 or 11
local MAX_FRAME = 1024

-- The wire, and its chunks.
local r = rng.new(31)
local pieces = {}
for i = 1, FRAMES do
  local n = r(MAX_FRAME)
  local body = string.char(i % 256):rep(n)
  pieces[i] = string.char(math.floor(n / 16777216) % 256, math.floor(n / 65536) % 256,
                          math.floor(n / 256) % 256, n % 256) .. body
end
local wire = table.concat(pieces)
local chunks, at = {}, 1
while at <= #wire do
  local n = 1 + r(8192)
  chunks[#chunks + 1] = wire:sub(at, at + n - 1)
  at = at + n
end

-- A frame's length at pos of s: string.unpack where there is one (5.3+),
-- else the bytes.
local length_at
if string.unpack then
  local unpack = string.unpack
  length_at = function(s, pos) return (unpack(">I4", s, pos)) end
else
  local byte = string.byte
  length_at = function(s, pos)
    local a, b, c, d = byte(s, pos, pos + 3)
    return ((a * 256 + b) * 256 + c) * 256 + d
  end
end

-- Every frame is stored, not only measured: LuaJIT folds #s:sub(i, j) and
-- s:sub(i, j):byte(1) into reads of s, so a frame used only for those was
-- never made (no SNEW in the trace: -jdump), where ffi.string's was.
local RING = 64
local function plain()
  local pending, count, sum, ring = "", 0, 0, {}
  for c = 1, #chunks do
    pending = pending .. chunks[c]
    local pos, n = 1, #pending
    while n - pos >= 3 do
      local len = length_at(pending, pos)
      if n - pos - 3 < len then break end
      local frame = pending:sub(pos + 4, pos + 3 + len)
      count, sum = count + 1, sum + #frame + (frame:byte(1) or 0)
      ring[count % RING + 1] = frame
      pos = pos + 4 + len
    end
    if pos > 1 then pending = pending:sub(pos) end
  end
  return count, sum, ring
end

local function stream()
  local b, count, sum, ring = avxbuf.new(), 0, 0, {}
  for c = 1, #chunks do
    b:put(chunks[c])
    while true do
      local frame = b:unpack(">s4")
      if frame == nil then break end
      count, sum = count + 1, sum + #frame + (frame:byte(1) or 0)
      ring[count % RING + 1] = frame
    end
  end
  return count, sum, ring
end

local versions = { { "plain strings", plain }, { "avxbuf stream", stream } }
local times, result = { {}, {} }, nil
for round = 1, ROUNDS do
  for k = 0, 1 do
    local v = (round + k) % 2 + 1
    collectgarbage("collect")
    local t0 = os.clock()
    local count, sum, ring = versions[v][2]()
    times[v][#times[v] + 1] = os.clock() - t0
    local got = count .. "/" .. sum
    assert(result == nil or got == result, "the receivers disagree: " .. got .. " against " .. tostring(result))
    assert(count == FRAMES and #ring == RING, "frames lost")
    result = got
  end
end
print(string.format("# %s%s: %d frames of 0-%d bytes (%.1f MB) in %d chunks of 1-8192 bytes; median of %d rounds",
                    jit and jit.version or _VERSION, avxbuf.ffi and " (FFI path)" or "", FRAMES, MAX_FRAME - 1,
                    #wire / 1e6, #chunks, ROUNDS))
local base = harness.median(times[1])
for v = 1, 2 do
  local m = harness.median(times[v])
  print(string.format("%-14s %8.4f s  %5.2fx", versions[v][1], m, m / base))
end
