-- The files of src/ form layers: no include cycle among the headers and
-- sources, and (with --objects) no cycle among the objects through the
-- symbols one defines and another uses. Prints the first cycle found.
--   lua5.4 tools/layers.lua [--objects DIR] SRCDIR
--   lua5.4 tools/layers.lua --planted    (its own test: a planted cycle of each kind is found)
local argparse = require "argparse"

local parser = argparse("layers.lua", "Check that src/ has no include or symbol cycle.")
parser:argument("src", "the source directory"):args("?")
parser:option("--objects", "a build's object directory (build/obj): check the symbol graph too")
parser:flag("--planted", "check that a planted include cycle and a planted symbol cycle are found")
local args = parser:parse()

local function lines_of(cmd)
  local p = assert(io.popen(cmd))
  local t = {}
  for l in p:lines() do t[#t + 1] = l end
  p:close()
  return t
end

-- A cycle in graph (node -> set of nodes), as a list of nodes, or nil.
local function find_cycle(graph)
  local state, stack = {}, {}
  local function visit(n)
    state[n] = "open"
    stack[#stack + 1] = n
    local next_nodes = {}
    for m in pairs(graph[n] or {}) do next_nodes[#next_nodes + 1] = m end
    table.sort(next_nodes)
    for _, m in ipairs(next_nodes) do
      if state[m] == "open" then
        local cycle, on = {}, false
        for _, s in ipairs(stack) do
          on = on or s == m
          if on then cycle[#cycle + 1] = s end
        end
        cycle[#cycle + 1] = m
        return cycle
      elseif not state[m] then
        local c = visit(m)
        if c then return c end
      end
    end
    stack[#stack] = nil
    state[n] = "done"
  end
  local nodes = {}
  for n in pairs(graph) do nodes[#nodes + 1] = n end
  table.sort(nodes)
  for _, n in ipairs(nodes) do
    if not state[n] then
      local c = visit(n)
      if c then return c end
    end
  end
end

-- Includes: "file" resolved against the including file's directory.
local function normalise(path)
  local parts = {}
  for p in path:gmatch("[^/]+") do
    if p == ".." and #parts > 0 and parts[#parts] ~= ".." then parts[#parts] = nil
    elseif p ~= "." then parts[#parts + 1] = p end
  end
  return (path:sub(1, 1) == "/" and "/" or "") .. table.concat(parts, "/")
end

-- --planted: this script on a directory where a.h and b.h include each
-- other and a.o and b.o call each other; both must be reported.
if args.planted then
  local dir = os.tmpname()
  os.remove(dir)
  local function write(name, text)
    local f = assert(io.open(dir .. "/" .. name, "w"))
    f:write(text)
    f:close()
  end
  assert(os.execute("mkdir -p " .. dir .. "/obj"))
  write("a.h", '#include "b.h"\n')
  write("b.h", '#include "a.h"\n')
  write("a.c", "int b(void); int a(void) { return b(); }\n")
  write("b.c", "int a(void); int b(void) { return 0 * a(); }\n")
  assert(os.execute(string.format("cc -c %s/a.c -o %s/obj/a.o && cc -c %s/b.c -o %s/obj/b.o", dir, dir, dir, dir)))
  local self = "lua5.4 " .. arg[0]
  local includes_caught = not os.execute(self .. " " .. dir .. " 2>/dev/null >/dev/null")
  os.remove(dir .. "/a.h")
  os.remove(dir .. "/b.h")
  local symbols_caught = not os.execute(self .. " --objects " .. dir .. "/obj " .. dir .. " 2>/dev/null >/dev/null")
  os.execute("rm -rf " .. dir)
  print(string.format("planted: include cycle %s, symbol cycle %s", includes_caught and "found" or "MISSED",
                      symbols_caught and "found" or "MISSED"))
  os.exit(includes_caught and symbols_caught and 0 or 1)
end
if not args.src then parser:error("a source directory is needed") end

local includes, files = {}, 0
for _, f in ipairs(lines_of("find " .. args.src .. " -name '*.[ch]' | sort")) do
  f = normalise(f)
  files = files + 1
  includes[f] = {}
  local dir = f:match("^(.*)/") or "."
  for l in io.lines(f) do
    local inc = l:match('^%s*#%s*include%s+"([^"]+)"')
    if inc then includes[f][normalise(dir .. "/" .. inc)] = true end
  end
end
local cycle = find_cycle(includes)
if cycle then
  io.stderr:write("include cycle: " .. table.concat(cycle, " -> ") .. "\n")
  os.exit(1)
end
local report = string.format("%d files of %s: no include cycle", files, args.src)

if args.objects then
  local defined, used, objects = {}, {}, lines_of("find " .. args.objects .. " -name '*.o' | sort")
  for _, o in ipairs(objects) do
    used[o] = {}
    for _, l in ipairs(lines_of("nm " .. o)) do
      local kind, sym = l:match("^%x*%s+(%a)%s+(%S+)$")
      if kind == "U" then used[o][sym] = true
      elseif kind and kind:match("[TDRBCV]") then defined[sym] = o end
    end
  end
  local graph = {}
  for _, o in ipairs(objects) do
    graph[o] = {}
    for sym in pairs(used[o]) do
      local d = defined[sym]
      if d and d ~= o then graph[o][d] = true end
    end
  end
  cycle = find_cycle(graph)
  if cycle then
    io.stderr:write("symbol cycle: " .. table.concat(cycle, " -> ") .. "\n")
    os.exit(1)
  end
  report = report .. string.format("; %d objects of %s: no symbol cycle", #objects, args.objects)
end
print(report)
