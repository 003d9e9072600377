-- LuaJIT: the code avxbuf's FFI path (lua/avxbuf/ffi.lua) runs for a pack
-- or unpack format, made once per format from the ops C compiles it
-- to (src/luajit/lluajit.c's pack_ops), so that the format language lives in C
-- alone. Loaded by the C module under LuaJIT only, and handed to ffi.lua.
local ffi = require "ffi"
-- What the generator calls, taken when it loads: a global (or the string
-- library, which a string's methods look up) replaced later would write
-- the source of the code made per format, which holds cast and the stage.
local format, gsub, concat, ipairs, load, assert = string.format, string.gsub, table.concat, ipairs, load, assert

-- buf:unpack compiled: a format becomes Lua source of its own (its fields'
-- loads in order, typed), once, from the ops src/core/packfmt.c makes of it (C's
-- pack_ops), so the format language lives in C alone. Its loads read the
-- module's stage, never the buffer: C copies each run of fields there
-- after its checks (c_read, as the other reads: lua/avxbuf/ffi.lua), and
-- the stamp, checked after the call (staged at all?) and after the run's
-- loads, says whether another read staged in between (a finalizer, run by
-- a trace exit or an allocation). A string's bytes are a plain read
-- (ffi.lua's plain_read: the string made from the buffer, its generation
-- checked in the length).
-- Anything it does not read as the C function would (another byte order,
-- integer sizes other than 1, 2, 4, 8, z, a negative index, a short
-- buffer, a run longer than the stage, a changed generation) makes it
-- return false, and the C function does the whole unpack. (false, not a
-- sentinel upvalue: comparing with an upvalue is a guard whose snapshot
-- holds the values read, so a trace makes an s1 string even where the
-- caller drops it, in the part of the trace a side exit returns to.)
-- The pointer type each (kind, size) is loaded through: the C function
-- turns an unsigned 8-byte integer into lua_Integer, so int64_t.
local LOADS = {
  int = { [1] = "int8_t", [2] = "int16_t", [4] = "int32_t", [8] = "int64_t" },
  uint = { [1] = "uint8_t", [2] = "uint16_t", [4] = "uint32_t", [8] = "int64_t" },
  float = { [4] = "float" }, double = { [8] = "double" }, number = { [8] = "double" },
}
local PREFIXES = { [1] = "uint8_t", [2] = "uint16_t", [4] = "uint32_t", [8] = "uint64_t" }
-- A float or double's value from its bits, loaded as uint32_t words:
-- (sign, biased exponent, fraction) made a number by ldexp, exactly; an
-- infinity or a NaN (exponent all ones) goes to C, whose lua_pushnumber
-- canonicalises NaNs (lj_api.c). No double is loaded from the stage: a
-- load keeps a NaN's payload (lj_cconv.c: "Numbers are NOT canonicalized
-- here"), and LuaJIT reads a negative NaN with high payload bits as the
-- tag of a GC object (lj_obj.h's NaN tagging); the test of the exponent
-- before such a load is a guard, and a trace exit there can run a
-- finalizer that stages other bytes in between. {fraction bits, bias +
-- fraction bits, all-ones exponent}:
local FLOATS = { float = { 23, 150, 0xFF }, double = { 20, 1075, 0x7FF }, number = { 20, 1075, 0x7FF } }
local NATIVE_LITTLE = ffi.abi("le")

-- The other byte order, for 2- and 4-byte integers only: a value loaded
-- as uint16_t/uint32_t, swapped (bit.bswap works on 32 bits, signed); nil
-- otherwise.
local function other_order_load(kind, size, x)
  if kind ~= "int" and kind ~= "uint" then return nil end
  if size == 2 then return format(kind == "int" and "arshift(bswap(%s), 16)" or "rshift(bswap(%s), 16)", x) end
  if size == 4 then return format(kind == "int" and "bswap(%s)" or "bswap(%s) %% 4294967296", x) end
end

-- What the code made for a format gets, and its first lines; ptr(ctype)
-- names a pointer type, declared once at the top.
local ARGS = { "cast", "tonumber", "band", "bswap", "rshift", "arshift", "ldexp", "fstring", "as_buffer", "index",
               "consume", "c_read", "plain_read", "st", "c_path", "floor", "copy", "fill", "pack_bytes", "type",
               "bor", "lshift", "pack_bits" }
-- at(ctype, off) is a pointer of that type to byte off of the stage's
-- bytes, made from st where it is used (see lua/avxbuf/ffi.lua: no
-- pointer into the stage is kept in an upvalue); the pointer type is
-- declared once, at the top.
local function format_code_head()
  local fields = {}
  for k, name in ipairs(ARGS) do fields[k] = "env." .. name end
  local head, types = { "local ffi_typeof, env = ...",
                        "local " .. concat(ARGS, ", ") .. " = " .. concat(fields, ", ") }, {}
  return head, function(ctype, off)
    local name = gsub(ctype, " ", "_") .. "_p"
    if not types[name] then
      types[name] = true
      head[#head + 1] = format("local %s = ffi_typeof(%q)", name, ctype .. " *")
    end
    return format("cast(%s, st.bytes + %s)", name, off)
  end
end

-- The source of an unpacker for ops, or nil when one op is not for it.
-- pos is the 1-based index of the next byte. A run of fixed-size fields
-- is one segment: one bounds check, one staging, each field at a constant
-- offset of the stage, pos advanced once at its end. (Advancing pos after every field chains
-- one floating-point add per field from one record's index to the
-- next's, the critical path of a read loop.)
local function unpack_source(ops, stream)
  local head, at = format_code_head()
  local body, values = {}, {}
  local function line(fmt, ...) body[#body + 1] = "  " .. format(fmt, ...) end
  local segment, off = {}, 0   -- the current segment's lines, and its size so far
  -- The stream form returns nil and the bytes missing at the least for
  -- short data, as C counts them (src/lua/lpack.c's shortfall: the end of
  -- what is known, plus each later option's `least`, C's count in
  -- pack_ops). rest[k]: the least bytes the options after op k take.
  local rest = { [#ops] = 0 }
  for k = #ops, 1, -1 do rest[k - 1] = rest[k] + ops[k].least end
  local function short(known_end, k)   -- data that ends before the 0-based offset known_end
    return stream and format("return nil, %s + %d - len", known_end, rest[k]) or "return false"
  end
  -- n bytes from the 1-based index from staged, then what reads them, then the stamp:
  -- one step on after the call means these bytes were staged (c_read refused: it is not),
  -- and still that after the loads, that no other read staged in between
  local function staged(from, n, lines)
    line("local k = st.stamp + 1")
    line("c_read(b, st, %s - 1, %s)", from, n)
    line("if st.stamp ~= k then return false end")
    for _, l in ipairs(lines) do body[#body + 1] = l end
    line("if st.stamp ~= k then return false end")
  end
  local function flush(k)   -- the segment (ending with op k): its check, its lines, pos past it
    if off > 0 then
      line("if pos + %d > len then %s end", off - 1, short(format("pos + %d", off - 1), k))
      staged("pos", off, segment)
      line("pos = pos + %d", off)
    else   -- fields of no bytes (c0): nothing to stage
      for _, l in ipairs(segment) do body[#body + 1] = l end
    end
    segment, off = {}, 0
  end
  local function seg(fmt, ...) segment[#segment + 1] = "  " .. format(fmt, ...) end
  -- pos within the bytes, or just past them: implied by the first check
  -- when the format starts with a field of some size (one guard less in a
  -- read loop's trace)
  local first = ops[1]
  if not (first and first.size > 0) then
    line("if pos > len + 1 then return false end")
  end
  for k, op in ipairs(ops) do
    local size = op.size
    if op.align > 1 then return nil end   -- padding is C's (AVXBUF_PK_PADDING)
    local ctype = LOADS[op.kind] and LOADS[op.kind][size]
    local float = ctype and FLOATS[op.kind]
    if float then
      if size > 1 and op.little ~= NATIVE_LITTLE then return nil end
      values[#values + 1] = "v" .. k
      local frac, bias, ones = float[1], float[2], float[3]
      local hi = at("uint32_t", off + (size == 8 and NATIVE_LITTLE and 4 or 0))
      seg("local h%d = %s[0]", k, hi)
      seg("local e%d = band(rshift(h%d, %d), 0x%X)", k, k, frac, ones)
      seg("if e%d == 0x%X then return false end", k, ones)
      local fraction = format("band(h%d, 0x%X)", k, 2 ^ frac - 1)
      if size == 8 then
        fraction = format("%s * 4294967296 + %s[0]", fraction, at("uint32_t", off + (NATIVE_LITTLE and 0 or 4)))
      end
      seg("local v%d = ldexp(%s + (e%d == 0 and 0 or %d), (e%d == 0 and 1 or e%d) - %d)", k, fraction, k,
          2 ^ (size == 8 and 52 or 23), k, k, bias)
      seg("if h%d >= 2147483648 then v%d = -v%d end", k, k, k)
    elseif ctype then
      local other = size > 1 and op.little ~= NATIVE_LITTLE
      local q = at(other and PREFIXES[size] or ctype, off)
      local value = ctype == "int64_t" and format("tonumber(%s[0])", q) or format("%s[0]", q)
      if other then
        value = other_order_load(op.kind, size, format("%s[0]", q))
        if not value then return nil end
      end
      values[#values + 1] = "v" .. k
      seg("local v%d = %s", k, value)
    elseif op.kind == "char" then
      values[#values + 1] = "v" .. k
      seg("local v%d = fstring(%s, %d)", k, at("char", off), size)
    elseif op.kind == "string" and PREFIXES[size] then
      local q = at(PREFIXES[size], off)
      local prefix = format("tonumber(%s[0])", q)
      if size > 1 and op.little ~= NATIVE_LITTLE then
        prefix = other_order_load("uint", size, format("%s[0]", q))
        if not prefix then return nil end
      end
      values[#values + 1] = "v" .. k
      line("local n%d", k)   -- set in the segment, read after it
      seg("n%d = %s", k, prefix)
      off = off + size
      flush(k)
      -- the string's bytes: pos .. pos + n - 1, all within len (a length
      -- of 8 bytes may be past any buffer: C raises for it)
      line("local s%d = pos", k)
      line("pos = pos + n%d", k)
      line("if pos > len + 1 then %s end", size < 8 and short("pos - 1", k) or "return false")
      line("local v%d = plain_read(b, s%d - 1, n%d)", k, k, k)
      line("if v%d == nil then return false end", k)
      size = 0
    elseif op.kind ~= "pad" then
      return nil
    end
    off = off + size
  end
  flush(#ops)
  local results = concat(values, ", ") .. (#values > 0 and ", " or "") .. "nxt"
  -- The index form returns the values and the next index; the stream form
  -- (buf:unpack(fmt)) the values, once it has consumed the bytes they came
  -- from (in C: as the C function, from the buffer as it is then).
  local first_value = values[1] or "nxt"
  local entry = stream and format([[
return function(buf, fmt)
  local b = as_buffer(buf)
  if b ~= nil then
    local g = b.gen
    local %s, extra = read(b, g, 1, tonumber(b.len))
    if %s then
      consume(b, nxt - 1)
      return %s
    end
    if %s == nil then return nil, "short", %s end
  end
  return c_path(buf, fmt)
end]], results, first_value, concat(values, ", "), first_value,
              values[2] or (values[1] and "nxt" or "extra")) or format([[
return function(buf, i, fmt)
  local b = as_buffer(buf)
  if b ~= nil and index(i) and i >= 1 then
    local g = b.gen
    local %s = read(b, g, i, tonumber(b.len))
    if %s then return %s end
  end
  return c_path(buf, i, fmt)
end]], results, first_value, results)
  return concat(head, "\n") .. format([[

local function read(b, g, pos, len)
  local st = st   -- one stage throughout (lua/avxbuf/ffi.lua says why)
%s
  if b.gen ~= g then return false end   -- every value from the buffer as it was at the start
  return %s
end
]], concat(body, "\n"), (gsub(results, "nxt$", "pos"))) .. entry
end

-- buf:pack compiled: the source of a packer for ops, or nil when one op
-- is not for it (z, alignment, integers of other sizes, and 8-byte
-- integers, s8's length and floats in the other byte order:
-- avxbuf_pack_staged's). Its checks are C's: the
-- types avxbuf_pack_staged takes without a conversion, each integer
-- integral within the op's lo..most, each string within its most (pack_ops
-- gives both). Then it writes the bytes to the stage, under a stamp of its
-- own, and one call (pack_bytes) appends them: the stage is the module's
-- memory, so no pointer into a buffer is made in Lua, and a finalizer that
-- stages in between (at an allocation or a trace exit) moves the stamp,
-- and C refuses. The stage's size is a literal (STAGE, as ffi.lua's cdef):
-- a bound in an upvalue would let debug.setupvalue write past it.
-- A format of integers (and padding) of 4 bytes or fewer in all needs no
-- stage: its bytes go as the bits of one argument (pack_bits), the first
-- in the low 8, whatever this machine's byte order; bor(..., 0) makes
-- them an int32 (an I4 past 2^31 too), which the JIT folds away.
local STAGE = ffi.sizeof("avxbuf_stage") - ffi.offsetof("avxbuf_stage", "bytes")
-- An integer of 2 or 4 bytes in the other byte order, as the bits to store.
local SWAPPED = { [2] = "rshift(bswap(%s), 16)", [4] = "bswap(%s)" }
-- pack_bits' part for an integer of size bytes at byte off, little-endian
-- or not: its bytes in memory order, the first lowest.
local function bits_of(v, size, little, off)
  local x = (little or size == 1) and (size < 4 and format("band(%s, %d)", v, 256 ^ size - 1) or v)
            or format(SWAPPED[size], v)
  return off > 0 and format("lshift(%s, %d)", x, 8 * off) or x
end
local function pack_source(ops)
  local head, at = format_code_head()
  local checks, stores, names, lengths, bits = {}, {}, {}, {}, {}
  local function check(fmt, ...) checks[#checks + 1] = "  if not (" .. format(fmt, ...) .. ") then return false end" end
  local function store(fmt, ...) stores[#stores + 1] = "  " .. format(fmt, ...) end
  local fixed, var, sized = 0, nil, 0   -- the next byte's offset: fixed, plus var's value; sized: all fixed bytes
  local function where() return (var and var .. " + " or "") .. fixed end
  local function advance(n) fixed, sized = fixed + n, sized + n end
  local function integer(ctype, size, little, v)   -- stores v, an integer of size bytes
    if bits and not var and size <= 4 then bits[#bits + 1] = bits_of(v, size, little, fixed) else bits = nil end
    if size > 1 and little ~= NATIVE_LITTLE then
      if not SWAPPED[size] then return false end
      store("%s[0] = %s", at(PREFIXES[size], where()), format(SWAPPED[size], v))
    else
      store("%s[0] = %s", at(ctype, where()), v)
    end
    advance(size)
    return true
  end
  for k, op in ipairs(ops) do
    local v, size, kind = "v" .. k, op.size, op.kind
    if op.align > 1 then return nil end
    if kind == "int" or kind == "uint" then
      names[#names + 1] = v
      check("type(%s) == \"number\" and %s >= %.17g and %s <= %.17g and floor(%s) == %s", v, v, op.lo, v, op.most, v, v)
      if not (LOADS[kind][size] and integer(LOADS[kind][size], size, op.little, v)) then return nil end
    elseif FLOATS[kind] then
      if op.little ~= NATIVE_LITTLE then return nil end
      names[#names + 1] = v
      check("type(%s) == \"number\"", v)
      store("%s[0] = %s", at(LOADS[kind][size], where()), v)
      advance(size)
      bits = nil
    elseif kind == "char" or (kind == "string" and PREFIXES[size]) then
      names[#names + 1] = v
      local n = "n" .. k
      check("type(%s) == \"string\"", v)
      checks[#checks + 1] = format("  local %s = #%s", n, v)
      check("%s <= %.17g", n, op.most)
      if kind == "string" then
        lengths[#lengths + 1] = n
        if not integer(PREFIXES[size], size, op.little, n) then return nil end
      end
      store("copy(%s, %s, %s)", at("char", where()), v, n)
      if kind == "char" then
        store("fill(%s, %d - %s)", at("char", where() .. " + " .. n), size, n)
        advance(size)
      else
        store("local p%d = %s + %s", k, where(), n)
        var, fixed = "p" .. k, 0
      end
      bits = nil
    elseif kind == "pad" then
      store("%s[0] = 0", at("uint8_t", where()))
      advance(1)
    else
      return nil
    end
  end
  local write
  if bits and sized >= 1 and sized <= 4 then
    write = format([[
  local nxt = pack_bits(b, %s, %d)
  return nxt > 0 and nxt]], "bor(" .. concat(bits, ", ") .. (#bits > 0 and ", 0)" or "0)"), sized)
  else
    write = format([[
  local total = %s
  if total > %d then return false end
  local st = st   -- one stage throughout (lua/avxbuf/ffi.lua says why)
  local k = st.stamp + 1
  st.stamp = k
%s
  local nxt = pack_bytes(b, st, k, total)
  return nxt > 0 and nxt]], concat(lengths, " + ") .. (#lengths > 0 and " + " or "") .. sized, STAGE,
                   concat(stores, "\n"))
  end
  local params = "b" .. (#names > 0 and ", " .. concat(names, ", ") or "")
  return concat(head, "\n") .. format([[

local function write(%s)
%s
%s
end
return function(buf, fmt, ...)
  local b = as_buffer(buf)
  if b ~= nil then
    local nxt = write(b, ...)
    if nxt then return nxt end
  end
  return c_path(buf, fmt, ...)
end]], params, concat(checks, "\n"), write)
end

-- The function for a format's ops (what: "pack", "unpack", or "stream" for
-- the stream form of unpack), given by name the values its code
-- uses (env: ARGS), or nil when one op is not for it.
return function(what, fmt, ops, env)
  local source
  if what == "pack" then source = pack_source(ops) else source = unpack_source(ops, what == "stream") end
  if not source then return nil end
  local chunk = assert(load(source, "=avxbuf.ffi(" .. (what == "stream" and "unpack" or what) .. " " .. fmt .. ")"))
  return chunk(ffi.typeof, env)
end
