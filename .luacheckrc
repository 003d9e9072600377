-- luacheck configuration (Debian lua-check): Lua 5.4 for the library and
-- benchmarks; the specs define luaunit's TestXxx globals.
std = "lua54"
max_line_length = 120
files["spec/"] = { allow_defined_top = true, globals = { "arg" } }
files["spec/errors_spec.lua"] = { allow_defined_top = true }
