-- The page every host serves in `make test-hosts` (tools/hosts/run.sh),
-- made with avxbuf: n rows appended with putf and put and filled runs, the
-- whole doubled by one copy inside the buffer, a packed trailer.
-- spec/hosts/expected.lua makes the same bytes with the string library.
local avxbuf = require "avxbuf"

local M = {}
local kept = avxbuf.new()

function M.render(n)
  -- Even n reuse one buffer, odd n leave a new one to the collector: a
  -- worker's RSS must stay flat under both.
  local buf = n % 2 == 0 and kept:reset() or avxbuf.new()
  buf:put("n=", n, "\n")
  for i = 1, n do
    buf:putf("%4d %04x ", i, i * 40503 % 65536)
    local at, run = #buf + 1, i % 17
    buf:resize(#buf + run)
    buf:fill(97 + i % 26, at, run)
    buf:put("\n")
  end
  local half = #buf
  buf:resize(2 * half)
  buf:copy(half + 1, buf, 1, half)
  buf:pack("<I4", n)
  return tostring(buf)
end

return M
