-- The files of src/ (every subfolder) form layers: no cycle among the
-- headers and sources, and (with --objects) no cycle among the objects
-- through the symbols one defines and another uses. Prints the first cycle
-- found. And the folders are the layers: nothing under core/ or kernels/
-- (the Lua-free code) includes anything under lua/, luajit/, measure/ or
-- counters/ (the code that calls Lua), nor Lua's own headers.
--
-- An include "file" resolves as the compiler's does under -ISRCDIR: against
-- the including file's folder when the file is there, else against SRCDIR.
--
-- A file depends on what it includes, and on a header that redefines
-- (#undef, then #define) a name the file uses: what the file's code calls
-- then depends on which of the two the compiler sees first. Both kinds are
-- read in one configuration of the build: -D NAME and -U NAME decide
-- #ifdef NAME, #ifndef NAME and #if [!]defined(NAME); any other condition
-- is read both ways. `make lint` checks the normal and the collector-torture
-- configuration (-U and -D AVXBUF_GC_TORTURE).
--   lua5.4 tools/layers.lua [-D NAME]... [-U NAME]... [--objects DIR] SRCDIR
--   lua5.4 tools/layers.lua --planted    (its own test: a planted cycle of each kind, and a
--                                          core file that includes the binding or lua.h, are found)
local argparse = require "argparse"

local parser = argparse("layers.lua", "Check that src/ has no include, redefinition or symbol cycle, "
                        .. "and that core/ and kernels/ include nothing of the Lua binding or of Lua.")
parser:argument("src", "the source directory"):args("?")
parser:option("-D --define", "a macro the configuration defines"):count("*")
parser:option("-U --undefine", "a macro the configuration leaves undefined"):count("*")
parser:option("--objects", "a build's object directory (build/obj): check the symbol graph too")
parser:flag("--planted", "check that planted include, redefinition and symbol cycles and a planted "
            .. "core-includes-binding and core-includes-lua.h are found")
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

-- The folders: Lua-free code, and what may not be included from it.
local LUA_FREE = { "core", "kernels" }
local CALLS_LUA = { "lua", "luajit", "measure", "counters" }
local LUA_HEADERS = { "lua.h", "lauxlib.h", "lualib.h", "luaconf.h", "luajit.h" }

local function normalise(path)
  local parts = {}
  for p in path:gmatch("[^/]+") do
    if p == ".." and #parts > 0 and parts[#parts] ~= ".." then parts[#parts] = nil
    elseif p ~= "." then parts[#parts + 1] = p end
  end
  return (path:sub(1, 1) == "/" and "/" or "") .. table.concat(parts, "/")
end

-- --planted: this script on a directory where a.h and b.h include each
-- other; where e.h, only when PLANTED is defined, includes f.h and redefines
-- a name f.h uses; where a.o and b.o call each other; and where
-- core/c.h includes "lua/l.h" (found through the top, as -Isrc finds it)
-- and then "lua.h". Each must be reported, e.h, f.h and core/c.h not when
-- PLANTED is undefined, and lua/l.h including core/c.h not at all.
if args.planted then
  local dir = os.tmpname()
  os.remove(dir)
  local function write(name, text)
    local f = assert(io.open(dir .. "/" .. name, "w"))
    f:write(text)
    f:close()
  end
  local self = "lua5.4 " .. arg[0]
  local function passes(options) return os.execute(self .. " " .. options .. " 2>/dev/null >/dev/null") == true end
  assert(os.execute("mkdir -p " .. dir .. "/obj"))
  write("a.h", '#include "b.h"\n')
  write("b.h", '#include "a.h"\n')
  write("a.c", "int b(void); int a(void) { return b(); }\n")
  write("b.c", "int a(void); int b(void) { return 0 * a(); }\n")
  assert(os.execute(string.format("cc -c %s/a.c -o %s/obj/a.o && cc -c %s/b.c -o %s/obj/b.o", dir, dir, dir, dir)))
  local includes_caught = not passes(dir)
  os.remove(dir .. "/a.h")
  os.remove(dir .. "/b.h")
  write("e.h", '#ifdef PLANTED\n#include "f.h"\n#undef lua_pushstring\n#define lua_pushstring planted_push\n#endif\n')
  write("f.h", "#define f_push(L, s) lua_pushstring(L, s)\n")
  local redefinition_caught = not passes("-D PLANTED " .. dir) and passes("-U PLANTED " .. dir)
  os.remove(dir .. "/e.h")
  os.remove(dir .. "/f.h")
  local symbols_caught = not passes("--objects " .. dir .. "/obj " .. dir)
  os.execute("rm -rf " .. dir .. "/obj " .. dir .. "/a.c " .. dir .. "/b.c")
  assert(os.execute("mkdir -p " .. dir .. "/core " .. dir .. "/lua"))
  write("lua/l.h", '#include "core/c.h"\n')
  write("core/c.h", "#define C 1\n")
  local binding_over_core = passes(dir)
  write("core/c.h", '#ifdef PLANTED\n#include "lua/l.h"\n#endif\n')
  write("lua/l.h", "#define L 1\n")
  local layer_caught = binding_over_core and not passes("-D PLANTED " .. dir) and passes("-U PLANTED " .. dir)
  write("core/c.h", '#ifdef PLANTED\n#include "lua.h"\n#endif\n')
  local lua_caught = not passes("-D PLANTED " .. dir) and passes("-U PLANTED " .. dir)
  os.execute("rm -rf " .. dir)
  local function said(caught) return caught and "found" or "MISSED" end
  print(string.format("planted: include cycle %s, redefinition cycle %s (under its -D only), symbol cycle %s, "
                      .. "core including the binding %s, core including lua.h %s (each under its -D only)",
                      said(includes_caught), said(redefinition_caught), said(symbols_caught), said(layer_caught),
                      said(lua_caught)))
  os.exit(includes_caught and redefinition_caught and symbols_caught and layer_caught and lua_caught and 0 or 1)
end
if not args.src then parser:error("a source directory is needed") end

local decided = {}
for _, name in ipairs(args.define) do decided[name] = true end
for _, name in ipairs(args.undefine) do decided[name] = false end

-- A condition's value in this configuration: true, false, or nil (not decided).
local function condition(directive, rest)
  local name = rest:match("^%s*([%w_]+)")
  if directive == "ifdef" then return decided[name] end
  if directive == "ifndef" then
    if decided[name] == nil then return nil end
    return not decided[name]
  end
  local negated, defined = rest:match("^%s*(!?)%s*defined%s*%(?%s*([%w_]+)%s*%)?%s*$")
  if defined == nil or decided[defined] == nil then return nil end
  if negated == "!" then return not decided[defined] end
  return decided[defined]
end

-- The lines of file f that this configuration compiles (undecided branches
-- both), comments removed, with continuation lines joined.
local function compiled_lines(f)
  local handle = assert(io.open(f))
  local text = handle:read("a"):gsub("/%*.-%*/", " "):gsub("//[^\n]*", ""):gsub("\\\n", " ")
  handle:close()
  local out, frames = {}, {}   -- frames: {taken = true/false/nil, seen = a branch was taken}
  local function live()
    for _, fr in ipairs(frames) do if fr.taken == false then return false end end
    return true
  end
  for l in text:gmatch("[^\n]*") do
    local directive, rest = l:match("^%s*#%s*(%a+)(.*)$")
    if directive == "if" or directive == "ifdef" or directive == "ifndef" then
      local c = condition(directive, rest)
      frames[#frames + 1] = { taken = c, seen = c }
    elseif directive == "elif" and #frames > 0 then
      local fr = frames[#frames]
      if fr.seen == true then fr.taken = false else fr.taken, fr.seen = nil, nil end
    elseif directive == "else" and #frames > 0 then
      local fr = frames[#frames]
      if fr.seen == true then fr.taken = false elseif fr.seen == false then fr.taken = true end
    elseif directive == "endif" then
      frames[#frames] = nil
    elseif live() then
      out[#out + 1] = l
    end
  end
  return out
end

-- The graph: f -> g where f includes g (resolved as the compiler does: f's
-- folder, then SRCDIR), and f -> h where h is a header that redefines (#undef, then
-- #define) a name f's compiled code uses (a call through the name in parentheses, (name)(...),
-- reaches the function and not the macro, and is not a use).
local function exists(path)
  local h = io.open(path)
  if h then h:close() end
  return h ~= nil
end
local top = normalise(args.src)
local function folder_of(f)   -- the first folder under SRCDIR, or nil
  local rel = f:sub(1, #top + 1) == top .. "/" and f:sub(#top + 2)
  return rel and rel:match("^([^/]+)/")
end
local function among(name, list)
  for _, x in ipairs(list) do if x == name then return true end end
  return false
end
local graph, why, files = {}, {}, 0
local redefines, uses = {}, {}
local crossings = {}   -- "f includes g": a Lua-free file including the binding
for _, f in ipairs(lines_of("find " .. args.src .. " -name '*.[ch]' | sort")) do
  f = normalise(f)
  files = files + 1
  graph[f], why[f], redefines[f], uses[f] = {}, {}, {}, {}
  local dir = f:match("^(.*)/") or "."
  local undone = {}   -- names this file has #undef'd so far (a template's clean-up: no redefinition)
  for _, l in ipairs(compiled_lines(f)) do
    local inc = l:match('^%s*#%s*include%s+"([^"]+)"')
    local undef = l:match("^%s*#%s*undef%s+([%w_]+)")
    local define = l:match("^%s*#%s*define%s+([%w_]+)")
    if inc then
      local g = normalise(dir .. "/" .. inc)
      if not exists(g) then g = normalise(top .. "/" .. inc) end
      graph[f][g], why[f][g] = true, "includes"
      if among(folder_of(f), LUA_FREE) and (among(folder_of(g), CALLS_LUA) or among(inc, LUA_HEADERS)) then
        crossings[#crossings + 1] = f .. " includes " .. inc
      end
    elseif undef then
      undone[undef] = true
    else
      if define and undone[define] and f:match("%.h$") then redefines[f][define] = true end
      local body = l:gsub("^%s*#%s*define%s+[%w_]+", ""):gsub("%(%s*[%a_][%w_]*%s*%)%s*%(", "(")
      for name in body:gmatch("[%a_][%w_]*") do uses[f][name] = true end
    end
  end
end
for h, names in pairs(redefines) do
  for f, used in pairs(uses) do
    if f ~= h then
      local common = {}
      for name in pairs(names) do if used[name] then common[#common + 1] = name end end
      if #common > 0 then
        table.sort(common)
        graph[f][h] = true
        why[f][h] = why[f][h] or "uses " .. table.concat(common, ", ") .. ", which redefines"
      end
    end
  end
end
if #crossings > 0 then
  io.stderr:write(string.format("%s/ must not include %s/ or Lua's headers: %s\n", table.concat(LUA_FREE, "/ and "),
                                table.concat(CALLS_LUA, "/, "), table.concat(crossings, "; ")))
  os.exit(1)
end
local cycle = find_cycle(graph)
if cycle then
  local parts = { cycle[1] }
  for i = 2, #cycle do parts[#parts + 1] = string.format("(%s) %s", why[cycle[i - 1]][cycle[i]], cycle[i]) end
  io.stderr:write("include or redefinition cycle: " .. table.concat(parts, " ") .. "\n")
  os.exit(1)
end
local configuration = {}
for _, name in ipairs(args.define) do configuration[#configuration + 1] = "-D " .. name end
for _, name in ipairs(args.undefine) do configuration[#configuration + 1] = "-U " .. name end
local report = string.format("%d files of %s%s: no include or redefinition cycle, %s/ include no %s/ "
                             .. "and no Lua header",
                             files, args.src,
                             #configuration > 0 and " (" .. table.concat(configuration, " ") .. ")" or "",
                             table.concat(LUA_FREE, "/ or "), table.concat(CALLS_LUA, "/, "))

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
  local calls = {}
  for _, o in ipairs(objects) do
    calls[o] = {}
    for sym in pairs(used[o]) do
      local d = defined[sym]
      if d and d ~= o then calls[o][d] = true end
    end
  end
  cycle = find_cycle(calls)
  if cycle then
    io.stderr:write("symbol cycle: " .. table.concat(cycle, " -> ") .. "\n")
    os.exit(1)
  end
  report = report .. string.format("; %d objects of %s: no symbol cycle", #objects, args.objects)
end
print(report)
