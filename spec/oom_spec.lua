-- Allocation failure: spec/oom_host runs spec/oom_cases.lua, where every
-- operation meets an allocator that fails from its k-th allocation on, for
-- every k until it gets through. Each failure must be a clean Lua error
-- that leaves every buffer, and the settings, as they were.
local lu = require "luaunit"
local h = require "helpers"

TestAllocationFailure = {}

function TestAllocationFailure.test_every_failure_is_a_clean_error_and_changes_nothing()
  h.needs_children()
  local dir = package.cpath:match("^([^;]*)/%?%.so")
  local host = dir:gsub("/emul$", "") .. "/oom_host"   -- built once per Lua version
  local out, status = h.shell(string.format("%s %s spec/oom_cases.lua 2>&1", h.sh(host), h.sh(dir)))
  lu.assertEquals(status, 0, out)
  lu.assertNil(out:find("BAD", 1, true), out)
  local runs, failures, bad = out:match("runs (%d+) failures (%d+) bad (%d+)")
  lu.assertNotNil(runs, out)
  lu.assertEquals(tonumber(bad), 0, out)
  lu.assertTrue(tonumber(failures) > 100, "allocation failures were injected: " .. out)
end
