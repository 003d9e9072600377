-- LuaJIT: the code avxbuf's FFI path (lua/avxbuf/ffi.lua) runs for a
-- pack or unpack format, made once per format from the ops C compiles it
-- to (src/lluajit.c's pack_ops), so that the format language lives in C
-- alone. Loaded by the C module under LuaJIT only, and handed to ffi.lua.
local ffi = require "ffi"

-- buf:unpack compiled: a format becomes Lua source of its own (its fields'
-- loads in order, typed), once, from the ops src/packfmt.c makes of it (C's
-- pack_ops), so the format language lives in C alone. Each load follows a
-- check of the generation, as copy and fill do; a string read may run the
-- collector, which the next check sees. Anything it does not read as the C
-- function would (another byte order, integer sizes other than 1, 2, 4, 8,
-- z, a negative index, a short buffer, a changed generation) makes it
-- return false, and the C function does the whole unpack. (false, not a
-- sentinel upvalue: comparing with an upvalue is a guard whose snapshot
-- holds the values read, so a trace made an s1 string even where the
-- caller drops it, in the part of the trace a side exit returns to:
-- lj_str_new in -jdump.)
-- The pointer type each (kind, size) is loaded through: the C function
-- turns an unsigned 8-byte integer into lua_Integer, so int64_t.
local LOADS = {
  int = { [1] = "int8_t", [2] = "int16_t", [4] = "int32_t", [8] = "int64_t" },
  uint = { [1] = "uint8_t", [2] = "uint16_t", [4] = "uint32_t", [8] = "int64_t" },
  float = { [4] = "float" }, double = { [8] = "double" }, number = { [8] = "double" },
}
local PREFIXES = { [1] = "uint8_t", [2] = "uint16_t", [4] = "uint32_t", [8] = "uint64_t" }
-- The word of a float or double that holds its exponent: all ones in it,
-- at or above this, is an infinity or a NaN.
local FLOATS = { float = "0x7F800000", double = "0x7FF00000", number = "0x7FF00000" }
local NATIVE_LITTLE = ffi.abi("le")

-- The other byte order, for 2- and 4-byte integers only: a value loaded
-- as uint16_t/uint32_t, swapped (bit.bswap works on 32 bits, signed), and
-- a value swapped before it is stored through one; nil otherwise.
local function other_order_load(kind, size, x)
  if kind ~= "int" and kind ~= "uint" then return nil end
  if size == 2 then return (kind == "int" and "arshift(bswap(%s), 16)" or "rshift(bswap(%s), 16)"):format(x) end
  if size == 4 then return (kind == "int" and "bswap(%s)" or "bswap(%s) %% 4294967296"):format(x) end
end
local function other_order_store(kind, size, v)
  if kind ~= "int" and kind ~= "uint" then return nil end
  if size == 2 then return ("rshift(bswap(%s), 16)"):format(v) end
  if size == 4 then return ("bswap(%s)"):format(v) end
end

-- What the code made for a format gets, and its first lines; ptr(ctype)
-- names a pointer type, declared once at the top.
local ARGS = { "cast", "tonumber", "band", "bswap", "rshift", "arshift", "fstring", "fcopy", "ffill", "as_buffer",
               "index", "max", "grow", "commit", "consume", "STALE", "c_path" }
local function format_code_head()
  local fields = {}
  for k, name in ipairs(ARGS) do fields[k] = "env." .. name end
  local head, types = { "local ffi_typeof, env = ...",
                        "local " .. table.concat(ARGS, ", ") .. " = " .. table.concat(fields, ", ") }, {}
  return head, function(ctype)
    if not types[ctype] then
      types[ctype] = true
      head[#head + 1] = ("local %s_p = ffi_typeof(%q)"):format(ctype, ctype .. " *")
    end
    return ctype .. "_p"
  end
end

-- The source of an unpacker for ops, or nil when one op is not for it.
-- pos is the 1-based index of the next byte. A run of fixed-size fields
-- is one segment: one bounds check, each field at pos plus a constant,
-- pos advanced once at its end. (Advancing pos after every field chained
-- one floating-point add per field from one record's index to the
-- next's, the loop's critical path in a read loop: -jdump.)
local function unpack_source(ops, stream)
  local head, ptr = format_code_head()
  local body, values = {}, {}
  local function line(fmt, ...) body[#body + 1] = "  " .. fmt:format(...) end
  local segment, off = {}, 0   -- the current segment's lines, and its size so far
  local function at() return off > 0 and ("pos + %d"):format(off) or "pos" end
  -- The stream form returns nil and the bytes missing at the least for
  -- short data, as C counts them (src/lpack.c's shortfall: the end of
  -- what is known, plus each later option's `least`, C's count in
  -- pack_ops). rest[k]: the least bytes the options after op k take.
  local rest = { [#ops] = 0 }
  for k = #ops, 1, -1 do rest[k - 1] = rest[k] + ops[k].least end
  local function short(known_end, k)   -- data that ends before the 0-based offset known_end
    return stream and ("return nil, %s + %d - len"):format(known_end, rest[k]) or "return false"
  end
  local function flush(k)   -- the segment (ending with op k): its check, its lines, pos past it
    if off > 0 then line("if pos + %d > len then %s end", off - 1, short(("pos + %d"):format(off - 1), k)) end
    for _, l in ipairs(segment) do body[#body + 1] = l end
    if off > 0 then line("pos = pos + %d", off) end
    segment, off = {}, 0
  end
  local function seg(fmt, ...) segment[#segment + 1] = "  " .. fmt:format(...) end
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
    local load = LOADS[op.kind] and LOADS[op.kind][size]
    if load then
      local value = load == "int64_t" and ("tonumber(q%d[0])"):format(k) or ("q%d[0]"):format(k)
      if size > 1 and op.little ~= NATIVE_LITTLE then
        value, load = other_order_load(op.kind, size, ("q%d[0]"):format(k)), PREFIXES[size]
        if not value then return nil end
      end
      values[#values + 1] = "v" .. k
      seg("local q%d = cast(%s, base + (%s))", k, ptr(load), at())
      if FLOATS[op.kind] then
        -- An infinity or NaN goes to C, whose lua_pushnumber canonicalises
        -- NaNs (lj_api.c): a load keeps a NaN's payload, and LuaJIT reads
        -- a negative NaN with high payload bits as the tag of a GC object
        -- (lj_obj.h's NaN tagging), at an address made of the data. (The
        -- exponent's pointer is made before the check too: a cast run by
        -- the interpreter makes a cdata, which can run a finalizer.)
        seg("local e%d = cast(%s, base + (pos + %d))", k, ptr("uint32_t"),
            off + (size == 8 and NATIVE_LITTLE and 4 or 0))
        seg("if b.gen ~= g then return false end")
        seg("if band(e%d[0], 0x7FFFFFFF) >= %s then return false end", k, FLOATS[op.kind])
        -- That test is a guard, and a trace exit there can run a finalizer
        -- (lj_trace_exit): the generation again before the load.
        seg("if b.gen ~= g then return false end")
      else
        seg("if b.gen ~= g then return false end")
      end
      seg("local v%d = %s", k, value)
    elseif op.kind == "char" then
      values[#values + 1] = "v" .. k
      seg("local q%d = base + (%s)", k, at())
      seg("if b.gen ~= g then return false end")
      seg("local v%d = fstring(q%d, %d)", k, k, size)
    elseif op.kind == "string" and PREFIXES[size] then
      local prefix = ("tonumber(q%d[0])"):format(k)
      if size > 1 and op.little ~= NATIVE_LITTLE then
        prefix = other_order_load("uint", size, ("q%d[0]"):format(k))
        if not prefix then return nil end
      end
      values[#values + 1] = "v" .. k
      seg("local q%d = cast(%s, base + (%s))", k, ptr(PREFIXES[size]), at())
      seg("if b.gen ~= g then return false end")
      seg("local n%d = %s", k, prefix)
      off = off + size
      flush(k)
      -- the string's bytes: pos .. pos + n - 1, all within len (a length
      -- of 8 bytes may be past any buffer: C raises for it)
      line("local s%d = base + pos", k)
      line("pos = pos + n%d", k)
      line("if pos > len + 1 then %s end", size < 8 and short("pos - 1", k) or "return false")
      line("if b.gen ~= g then return false end")
      line("local v%d = fstring(s%d, n%d)", k, k, k)
      size = 0
    elseif op.kind ~= "pad" then
      return nil
    end
    off = off + size
  end
  flush(#ops)
  local results = table.concat(values, ", ") .. (#values > 0 and ", " or "") .. "nxt"
  -- The index form returns the values and the next index; the stream form
  -- (buf:unpack(fmt)) the values, once it has consumed the bytes they came
  -- from (in C: as the C function, from the buffer as it is then).
  local first_value = values[1] or "nxt"
  local entry = stream and ([[
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
end]]):format(results, first_value, table.concat(values, ", "), first_value,
              values[2] or (values[1] and "nxt" or "extra")) or ([[
return function(buf, i, fmt)
  local b = as_buffer(buf)
  if b ~= nil and index(i) and i >= 1 then
    local g = b.gen
    local %s = read(b, g, i, tonumber(b.len))
    if %s then return %s end
  end
  return c_path(buf, i, fmt)
end]]):format(results, first_value, results)
  return table.concat(head, "\n") .. ([[

local function read(b, g, pos, len)
  local base = b.data - 1
%s
  return %s
end
]]):format(table.concat(body, "\n"), (results:gsub("nxt$", "pos"))) .. entry
end

-- The source of a packer for ops (buf:pack, the same way round), or nil.
-- It checks every value first, for what the C function would accept and
-- write the same way (numbers that fit, strings that fit; anything else
-- goes to the C function, which writes or raises), grows the buffer if it
-- must (src/lluajit.c's ffi_grow, C's rule, no Lua call); then
-- makes every pointer it writes through, checks the generation once,
-- stores the numbers, commits the new length and only then moves the
-- strings' bytes, with nothing in between that allocates or is a guard (a
-- trace exit can run finalizers). (Those moves are calls when their length
-- varies; with the commit after them, the trace checked the generation
-- again after the call and kept the pointers and lengths on the stack
-- across it.) A format with alignment is the C function's. What each op
-- takes (lo, hi, most) is C's, from pack_ops.
local function pack_source(ops)
  local head, ptr = format_code_head()
  local checks, ptrs, stores, moves, lengths = {}, {}, {}, {}, {}
  local fixed, nv = 0, 0
  local function at(extra)
    local terms = { tostring(fixed + (extra or 0)) }
    for _, l in ipairs(lengths) do terms[#terms + 1] = l end
    return table.concat(terms, " + ")
  end
  for k, op in ipairs(ops) do
    local size = op.size
    if op.align > 1 then return nil end
    local store = LOADS[op.kind] and LOADS[op.kind][size]
    if store then
      nv = nv + 1
      local v = "v" .. nv
      local value = v
      if size > 1 and op.little ~= NATIVE_LITTLE then
        value, store = other_order_store(op.kind, size, v), PREFIXES[size]
        if not value then return nil end
      end
      if op.kind == "float" or op.kind == "double" or op.kind == "number" then
        checks[#checks + 1] = ("type(%s) == \"number\""):format(v)
      else
        -- C's range, or none (8 bytes): then what a double converts to
        -- int64_t exactly, the FFI's own limit (the C function takes the rest).
        local lo, hi = op.lo or -2 ^ 53, op.hi or 2 ^ 53 + 1
        checks[#checks + 1] = ("type(%s) == \"number\" and %s %% 1 == 0 and %s >= %.0f and %s < %.0f")
                              :format(v, v, v, lo, v, hi)
      end
      ptrs[#ptrs + 1] = ("local q%d = cast(%s, p + %s)"):format(k, ptr(store), at())
      stores[#stores + 1] = ("q%d[0] = %s"):format(k, value)
    elseif op.kind == "char" then
      nv = nv + 1
      local v = "v" .. nv
      checks[#checks + 1] = ("type(%s) == \"string\" and #%s <= %.0f"):format(v, v, op.most)
      ptrs[#ptrs + 1] = ("local q%d = p + %s; local r%d = q%d + #%s"):format(k, at(), k, k, v)
      moves[#moves + 1] = ("fcopy(q%d, %s, #%s); ffill(r%d, %d - #%s)"):format(k, v, v, k, size, v)
    elseif op.kind == "string" and PREFIXES[size] then
      nv = nv + 1
      local v = "v" .. nv
      local prefix = "#" .. v
      if size > 1 and op.little ~= NATIVE_LITTLE then
        prefix = other_order_store("uint", size, prefix)
        if not prefix then return nil end
      end
      checks[#checks + 1] = ("type(%s) == \"string\" and #%s <= %.0f"):format(v, v, op.most)
      ptrs[#ptrs + 1] = ("local q%d = cast(%s, p + %s); local r%d = p + %s")
                        :format(k, ptr(PREFIXES[size]), at(), k, at(size))
      stores[#stores + 1] = ("q%d[0] = %s"):format(k, prefix)
      moves[#moves + 1] = ("fcopy(r%d, %s, #%s)"):format(k, v, v)
      lengths[#lengths + 1] = "#" .. v
    elseif op.kind == "pad" then
      ptrs[#ptrs + 1] = ("local q%d = p + %s"):format(k, at())
      stores[#stores + 1] = ("q%d[0] = 0"):format(k)
    else
      return nil
    end
    fixed = fixed + size
  end
  local values = {}
  for n = 1, nv do values[n] = "v" .. n end
  return table.concat(head, "\n") .. ([[

return function(buf, at, i, fmt, ...)
  %s
  local b = as_buffer(buf)
  if b ~= nil and (not at or index(i) and i >= 1) and %s then
    local g = b.gen
    local len = tonumber(b.len)
    local total = %s
    local base = at and i - 1 or len
    if base <= len then
      if base + total > tonumber(b.cap) then   -- grown here, by C's rule (src/lluajit.c)
        -- C's answer, the new generation, not b.gen read again: a trace
        -- can exit at the check below and run a finalizer before that read.
        g = grow(b, g, base + total)
        if g == STALE then return c_path(buf, at, i, fmt, ...) end
      end
      local p = b.data + base
      %s
      if b.gen == g then
        %s
        local last = base + total
        commit(b, g, max(last, len))   -- math.max: no branch, so no guard
        %s
        return last + 1
      end
    end
  end
  return c_path(buf, at, i, fmt, ...)
end]]):format(nv > 0 and "local " .. table.concat(values, ", ") .. " = ..." or "",
              #checks > 0 and table.concat(checks, "\n     and ") or "true", at(),
              table.concat(ptrs, "\n      "), table.concat(stores, "\n        "),
              table.concat(moves, "\n        "))
end

-- The function for a format's ops (what: "unpack", "stream" for the
-- stream form of unpack, or "pack"), given by name the values its code
-- uses (env: ARGS), or nil when one op is not for it.
return function(what, fmt, ops, env)
  local source
  if what == "pack" then source = pack_source(ops) else source = unpack_source(ops, what == "stream") end
  if not source then return nil end
  local chunk = assert(load(source, "=avxbuf.ffi(" .. (what == "stream" and "unpack" or what) .. " " .. fmt .. ")"))
  return chunk(ffi.typeof, env)
end
