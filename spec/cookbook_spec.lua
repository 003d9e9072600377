-- docs/cookbook.md's programs, run: every ```lua block of it is loaded and
-- called in this process, at a smaller scale (COOKBOOK_SCALE, which the
-- programs read, is given to each as a global of its own environment, so
-- nothing leaks into _G), with print captured. A program passes when it
-- raises no error (each compares its result with the plain-Lua way and
-- raises on a difference) and its last line printed is its check line,
-- ending in ": ok". One test per block, named by its position.
local lu = require "luaunit"
local h = require "helpers"

local COOKBOOK = "docs/cookbook.md"
-- 0.05: a few hundred KB per program (the log still spans several 64 KiB
-- chunks), well under a second each; less again under valgrind.
local SCALE = h.LIGHT and 0.01 or 0.05

TestCookbook = {}

-- The blocks, each with the line of the file it starts on (for messages).
local function blocks()
  local f = io.open(COOKBOOK, "rb")
  if not f then return {} end
  local text = f:read("*a")
  f:close()
  local list, from = {}, 1
  while true do
    local open, body = text:find("\n```lua\n", from, true)
    if not open then break end
    local close = assert(text:find("\n```", body, true), "a ```lua block without its closing fence")
    local _, newlines = text:sub(1, body):gsub("\n", "")
    list[#list + 1] = { code = text:sub(body + 1, close), line = newlines + 1 }
    from = close + 4
  end
  return list
end

local PROGRAMS = blocks()

-- Loads code with env as its globals, on every Lua version.
local function load_in(code, name, env)
  local setfenv, loadstring = rawget(_G, "setfenv"), rawget(_G, "loadstring")
  if setfenv and loadstring then   -- Lua 5.1, LuaJIT
    local chunk, err = loadstring(code, name)
    if chunk then setfenv(chunk, env) end
    return chunk, err
  end
  return load(code, name, "t", env)
end

function TestCookbook.test_has_the_programs()
  lu.assertTrue(#PROGRAMS >= 3, string.format("%s: %d ```lua blocks, expected at least 3", COOKBOOK, #PROGRAMS))
end

for k, program in ipairs(PROGRAMS) do
  TestCookbook[string.format("test_program_%d_line_%d", k, program.line)] = function()
    local printed = {}
    local env = setmetatable({
      COOKBOOK_SCALE = SCALE,
      print = function(...)
        local t = {}
        for i = 1, select("#", ...) do t[i] = tostring((select(i, ...))) end
        printed[#printed + 1] = table.concat(t, "\t")
      end,
    }, { __index = _G })
    local name = string.format("=%s program %d (line %d)", COOKBOOK, k, program.line)
    local chunk, err = load_in(program.code, name, env)
    if not chunk then lu.fail(err) end
    chunk()
    local last = printed[#printed] or "(nothing printed)"
    lu.assertStrMatches(last, ".*: ok", nil, nil,
                        string.format("program %d's last line is not its check line", k))
  end
end
