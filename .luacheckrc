-- luacheck configuration (Debian lua-check). The library and benchmarks are
-- Lua 5.4; the specs run on 5.1-5.4 and LuaJIT, so they may look for the
-- older names (unpack, jit) and define luaunit's TestXxx globals.
std = "lua54"
max_line_length = 120
files["spec/"] = { std = "max", allow_defined_top = true, read_globals = { "jit" } }
-- LuaJIT-only code.
files["lua/avxbuf/ffi.lua"] = { std = "luajit" }
files["bench/ffi.lua"] = { std = "luajit" }
