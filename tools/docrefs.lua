-- References to a section of a page resolve: every `docs/NAME.md, "Title"`,
-- `docs/NAME.md ("Title")` or `docs/NAME.md "Title"` in the tree, and in a
-- page every `[text](PATH.md), "Title"` (PATH relative to the page), names a
-- file that exists and a heading of it that starts with Title. A reference
-- may break across comment lines. Prints each one that does not resolve.
--   lua5.4 tools/docrefs.lua [ROOT]     (default: the current directory)
--   lua5.4 tools/docrefs.lua --planted  (its own test: planted bad references are found)
local argparse = require "argparse"

local parser = argparse("docrefs.lua", "Check that docs/NAME.md, \"Title\" references resolve.")
parser:argument("root", "the tree's top directory"):args("?")
parser:flag("--planted", "check that a planted missing file and a planted missing heading are found")
local args = parser:parse()

-- What is scanned, relative to the root.
local PLACES = "src lua bench spec tools docs README.md CHANGELOG.md Makefile"
local SELF = "tools/docrefs.lua" -- its patterns are not references

local function read(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("a")
  f:close()
  return s
end

-- The headings of a Markdown page, outside fenced code.
local headings_cache = {}
local function headings(path)
  if headings_cache[path] == nil then
    local text = read(path)
    local list = false
    if text then
      list = {}
      local fenced = false
      for line in (text .. "\n"):gmatch("(.-)\r?\n") do
        if line:match("^%s*```") then
          fenced = not fenced
        elseif not fenced then
          local h = line:match("^#+%s+(.-)%s*#*%s*$")
          if h then list[#list + 1] = h end
        end
      end
    end
    headings_cache[path] = list
  end
  return headings_cache[path]
end

local function has_heading(list, title)
  for _, h in ipairs(list) do
    if h:sub(1, #title) == title then return true end
  end
  return false
end

-- The text with line breaks inside comments joined, so that a reference
-- split over two comment lines reads as one.
local function joined(text)
  return (text:gsub("\r?\n[ \t]*[%*#/%-]*[ \t]*", " "))
end

local function normalise(path)
  local parts = {}
  for p in path:gmatch("[^/]+") do
    if p == ".." then parts[#parts] = nil elseif p ~= "." then parts[#parts + 1] = p end
  end
  return table.concat(parts, "/")
end

-- Every reference in one file: {target = path from root, title = ...}.
local function references(rel, text)
  local found = {}
  local flat = joined(text)
  for target, title in flat:gmatch('(docs/[%w_%-/]+%.md)[, (]+"([^"]+)"') do
    found[#found + 1] = { target = target, title = title }
  end
  if rel:match("%.md$") then
    local dir = rel:match("^(.*)/") or ""
    for target, title in flat:gmatch('%]%(([%w_%-/%.]+%.md)%)[, (]+"([^"]+)"') do
      if not target:match("^docs/") then
        target = normalise((dir ~= "" and dir .. "/" or "") .. target)
      end
      found[#found + 1] = { target = target, title = title }
    end
  end
  return found
end

-- Checks the tree at root; returns the number of references and a list of problems.
local function check(root)
  local find = assert(io.popen(string.format(
    "cd '%s' && find %s -type f \\( -name '*.c' -o -name '*.h' -o -name '*.lua' -o -name '*.md'"
    .. " -o -name '*.sh' -o -name Makefile \\) 2>/dev/null | sort", root, PLACES)))
  local files = {}
  for rel in find:lines() do files[#files + 1] = rel end
  find:close()
  local count, problems = 0, {}
  for _, rel in ipairs(files) do
    rel = rel:gsub("^%./", "")
    if rel ~= SELF then
      local text = read(root .. "/" .. rel)
      for _, ref in ipairs(text and references(rel, text) or {}) do
        count = count + 1
        local list = headings(root .. "/" .. ref.target)
        if not list then
          problems[#problems + 1] = string.format('%s: %s, "%s": no such file', rel, ref.target, ref.title)
        elseif not has_heading(list, ref.title) then
          problems[#problems + 1] = string.format('%s: %s, "%s": no such heading', rel, ref.target, ref.title)
        end
      end
    end
  end
  return count, problems
end

if args.planted then
  local dir = os.tmpname()
  os.remove(dir)
  assert(os.execute("mkdir -p " .. dir .. "/docs/runs " .. dir .. "/src"))
  local function write(name, text)
    local f = assert(io.open(dir .. "/" .. name, "w"))
    f:write(text)
    f:close()
  end
  local q = '"'
  write("docs/a.md", "# A page\n\n## Alpha: the first\n\n```\n# Not a heading\n```\n")
  write("docs/runs/b.md", "# B\n\n## Beta\n")
  write("src/x.c", table.concat({
    "/* good: docs/a.md, " .. q .. "Alpha" .. q .. " */",
    "/* good, across lines: docs/a.md, " .. q .. "Alpha: the",
    " * first" .. q .. " */",
    "/* bad heading: docs/a.md (" .. q .. "Gamma" .. q .. ") */",
    "/* bad heading, in a fence: docs/a.md " .. q .. "Not a heading" .. q .. " */",
    "/* bad file: docs/c.md, " .. q .. "Alpha" .. q .. " */",
  }, "\n") .. "\n")
  write("docs/d.md", "# D\n\n[b](runs/b.md), " .. q .. "Beta" .. q .. "; [b](runs/b.md), " .. q .. "Delta" .. q .. "\n")
  local count, problems = check(dir)
  os.execute("rm -rf " .. dir)
  local ok = count == 7 and #problems == 4
  print(string.format("planted: %d references, %d unresolved (want 7 and 4): %s", count, #problems,
                      ok and "found" or "MISSED"))
  for _, p in ipairs(problems) do print("  " .. p) end
  os.exit(ok and 0 or 1)
end

local count, problems = check(args.root or ".")
for _, p in ipairs(problems) do io.stderr:write("docrefs: ", p, "\n") end
print(string.format("docrefs: %d references, %d unresolved", count, #problems))
os.exit(#problems == 0 and 0 or 1)
