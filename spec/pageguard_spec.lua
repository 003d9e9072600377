-- Every kernel this CPU runs, and the plan's way to them, reading and
-- writing at a page's edge (spec/pageguard.c, built with each flavour's
-- core and kernels): the guard bytes of spec/kernels_spec.lua see a write
-- past a destination, but a read past a source's end is seen only where it
-- faults.
local lu = require "luaunit"
local h = require "helpers"

TestPageGuard = {}
TestPageGuard.setUp = h.needs_children

local function run(arg)
  local bin = package.cpath:match("^([^;]*)/%?%.so") .. "/pageguard"
  local file = io.open(bin)
  lu.assertNotNil(file, bin .. " is not built")
  file:close()
  return h.shell(h.sh(bin) .. " " .. arg)
end

function TestPageGuard.test_no_read_or_write_past_either_end()
  local out, status = run(h.LIGHT and "300" or "4200")
  lu.assertEquals(status, 0, out)
  lu.assertEquals(out, "no fault\n")
end

-- The check's own test: a read of one byte past the end must die there,
-- of a signal (the shell's status 128 + N; under ASan, its report of the
-- SEGV, then an abort).
function TestPageGuard.test_a_planted_read_past_the_end_dies()
  local out, status = run("--planted")
  lu.assertTrue(status > 128 or out:find("SEGV", 1, true) ~= nil, ("status %d: %s"):format(status, out))
  lu.assertNil(out:find("no fault", 1, true), out)
end
