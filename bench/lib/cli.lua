-- The start of every benchmark script, which runs from the repository's
-- root: `local cli = dofile "bench/lib/cli.lua"` makes avxbuf, its built
-- modules and bench/lib loadable, and gives the command line and --pin.
package.path = "lua/?.lua;lua/?/init.lua;bench/lib/?.lua;" .. package.path
package.cpath = "build/?.so;build/bench/?.so;" .. package.cpath
local M = { argparse = require "argparse" }

-- A --pin option on parser, for M.pin to act on.
function M.pin_option(parser)
  parser:option("--pin", "pin the process to this CPU, or none; default: the last CPU it may run on, "
                .. "when it may run on more than one")
end

-- Pins the process to one CPU as --pin (value) asks, so that what it measures
-- stays on one core; returns that CPU, or nil where it runs unpinned.
function M.pin(parser, value)
  if value == "none" then return nil end
  if value and not tonumber(value) then parser:error("--pin takes a CPU number or none") end
  local counters = require "avxbuf.counters"
  local allowed = counters.cpus()
  local cpu = tonumber(value) or (#allowed > 1 and allowed[#allowed] or nil)
  if cpu then
    local ok, err = counters.pin(cpu)
    if not ok then parser:error("--pin: " .. tostring(err)) end
  end
  return cpu
end

return M
