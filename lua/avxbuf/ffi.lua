-- LuaJIT: the buffer's methods through the FFI, so that the JIT compiles
-- them. C owns the buffer and every rule (src/lluajit.c's entries, which
-- check, move and search); this file tests types, admits the plain forms
-- whose result is exactly the bytes asked for, and moves those: anything
-- else (a wrong type, a default, an index out of range, a buffer that must
-- grow) goes to C, which does the work or raises the documented error.
-- Loaded by the C module under LuaJIT only.
local ffi = require "ffi"

-- The first fields of src/lmodule.h's buffer (len and cap as int64_t, so
-- that comparisons with Lua numbers compile: the layout holds where size_t
-- has 64 bits; gen, C's uint32_t, as int32_t: the same bytes and the same
-- steps modulo 2^32, but an integer in a trace, where a uint32_t is a
-- double converted each way at every step), checked against the C
-- module's own offsets at load. Every other fact (the plan, the kernels,
-- the pick) stays in C, behind the entry points of src/lluajit.c.
if not pcall(ffi.typeof, "avxbuf_buffer") then
  ffi.cdef [[
    typedef struct { uintptr_t cookie; int64_t len; unsigned char *data; int64_t cap; int32_t gen; } avxbuf_buffer;
  ]]
end

local bufp = ffi.typeof("avxbuf_buffer *")
local bytep = ffi.typeof("const unsigned char *")
local uptr = ffi.typeof("uintptr_t")
local cast, fcopy, ffill = ffi.cast, ffi.copy, ffi.fill
local bit = require "bit"
local band = bit.band
local type, tonumber, select = type, tonumber, select
-- The raw metatable: getmetatable also looks up __metatable, a hash lookup
-- the JIT repeated in every iteration of a put loop (-jdump).
local getmetatable_raw = debug.getmetatable
local EXACT = 2 ^ 52   -- integers up to this convert to int64_t exactly, sums of three too

-- A number C's entries take as an int64_t exactly: the one test every Lua
-- number passes before it meets a C field or argument (what it means, range
-- and all, is C's). A whole number alone is not enough: 2^63 converts to
-- int64_t as a negative number, and 2^63 <= b.len held.
local function index(i) return type(i) == "number" and i % 1 == 0 and i >= -EXACT and i <= EXACT end

-- No pointer or length survives an allocation (src/lmodule.h): run by the
-- interpreter, every cdata made here (a pointer, a boxed 64-bit length)
-- can run the collector, and a finalizer can free, resize or append to any
-- buffer; compiled, a trace exit can run finalizers too (lj_trace_exit). So
-- every operation reads the buffers' generation (a plain number: no
-- allocation) first, then makes every cdata it needs and takes every
-- branch, and checks the generation last, right before the buffer is
-- touched, with nothing between that allocates, calls or is a guard. A
-- change leaves the work to the C function.

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
local FORMAT_CODE_ARGS =
  "ffi_typeof, cast, tonumber, band, bswap, rshift, arshift, fstring, fcopy, ffill, as_buffer, index, "
  .. "max, grow, commit, consume, STALE, c_path"
local function format_code_head()
  local head, types = { "local " .. FORMAT_CODE_ARGS .. " = ..." }, {}
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

return function(avxbuf, c)
  local MT = getmetatable(avxbuf.new(0))
  local KEY = cast(uptr, c.cookie_key)
  local c_copy_at = cast("int (*)(avxbuf_buffer *, size_t, uint32_t, size_t, const avxbuf_buffer *, uint32_t, "
                         .. "const char *, size_t)", c.copy)
  local c_resize_at = cast("int (*)(avxbuf_buffer *, uint32_t, int64_t)", c.resize)
  local c_has_specials = cast("int (*)(const char *, size_t)", c.has_specials)
  local c_copy_from_buffer = cast("int (*)(avxbuf_buffer *, const avxbuf_buffer *, int64_t, int64_t, int64_t)",
                                  c.copy_from_buffer)
  local c_copy_from_string = cast("int (*)(avxbuf_buffer *, const char *, int64_t, int64_t, int64_t, int64_t)",
                                  c.copy_from_string)
  local c_fill_args = cast("int (*)(avxbuf_buffer *, int64_t, int64_t, int64_t)", c.fill_args)
  local c_move = cast("void (*)(const void *, unsigned char *, const unsigned char *, size_t)", c.move)
  local c_set = cast("void (*)(const void *, unsigned char *, int, size_t)", c.set)
  local plan, DONE = cast("const void *", c.plan), c.done
  local FIRST, START, ABSENT = c.first, c.start_default, c.absent
  local c_grow = cast("double (*)(avxbuf_buffer *, uint32_t, size_t)", c.grow)
  local c_commit = cast("int (*)(avxbuf_buffer *, uint32_t, size_t)", c.commit)
  local STALE = c.stale
  local c_consume = cast("void (*)(avxbuf_buffer *, size_t)", c.consume)
  local c_search = cast("double (*)(const avxbuf_buffer *, uint32_t, int, int64_t, const char *, size_t)", c.search)
  local c_line = cast("double (*)(const avxbuf_buffer *, uint32_t, size_t)", c.line)
  local c_split_step = cast("int (*)(const avxbuf_buffer *, uint32_t, size_t, const char *, size_t, double *, int)",
                            c.split)
  local c_start = cast("double (*)(const avxbuf_buffer *, int, int64_t)", c.start)
  local c_get_count = cast("double (*)(const avxbuf_buffer *, uint32_t, int, int64_t)", c.get)
  local methods = MT.__index
  local c_copy, c_zero, c_fill = avxbuf.copy, avxbuf.zero, avxbuf.fill
  local c_put, c_resize = methods.put, methods.resize

  local layout = c.layout
  for _, field in ipairs { "len", "data", "cap", "gen" } do
    if ffi.offsetof("avxbuf_buffer", field) ~= layout[field] then
      error("avxbuf.ffi: the buffer layout does not match this avxbuf.so (" .. field .. ")")
    end
  end
  if ffi.sizeof("int64_t") ~= layout.len_size or ffi.sizeof("int32_t") ~= layout.gen_size then
    error("avxbuf.ffi: the buffer's field sizes do not match this avxbuf.so")
  end

  -- src/lmodule.h's testbuffer: the metatable is only a filter (anything can
  -- be given it with debug.setmetatable); the cookie, which only avxbuf
  -- writes, is the proof. nil for anything else. Two userdata LuaJIT casts
  -- to a pointer other than their own bytes must not reach the cookie: a
  -- light userdata (its value: any address; refused while light userdata
  -- carry this metatable) and an io file (its FILE *, NULL once closed).
  local LIGHT = c.cookie_key
  local function as_buffer(x)
    if type(x) ~= "userdata" or getmetatable_raw(x) ~= MT or getmetatable_raw(LIGHT) == MT then return nil end
    local p = cast(bufp, x)
    if p == nil or p.cookie - cast(uptr, p) ~= KEY then return nil end
    return p
  end

  do
    local probe = avxbuf.from("avxbuf")
    local p = as_buffer(probe)
    if not p or tonumber(p.len) ~= 6 or ffi.string(p.data, 6) ~= "avxbuf" or tonumber(p.cap) < 6 then
      error("avxbuf.ffi: the buffer layout does not match this avxbuf.so")
    end
  end

  -- copy, zero and fill. The plain form (every index and count given,
  -- whole, the range within the bytes; a copy from another buffer or a
  -- string) is one call to the kernel the plan picks (c_move, c_set: no
  -- checks in C), made after the generation check. Its filter only
  -- admits: the range rule and every error stay C's. Anything else goes
  -- to C's checking entries (c_copy_from_*, c_fill_args: defaults, copies
  -- within one buffer, ranges C refuses), which check and move in one call,
  -- or, refused there, to the C function, which raises. One call whatever
  -- the size: a move inline in the trace for small sizes was a branch on
  -- the size, and a loop whose sizes crossed it left its trace for a side
  -- trace at every crossing (docs/luajit.md). true when done.
  local function fast_copy(dst, di, src, si, n)
    local d = as_buffer(dst)
    if d == nil or not index(di) then return false end
    if index(si) and index(n) and di >= 1 and si >= 1 and n >= 0 then
      local g = d.gen
      local s, sg, sp
      if type(src) == "string" then
        sp = n <= #src - (si - 1) and cast(bytep, src)
      else
        s = as_buffer(src)
        if s ~= nil and s ~= d then sg = s.gen; sp = n <= s.len - (si - 1) and s.data end
      end
      if sp and n <= d.len - (di - 1) then
        local dp = d.data + (di - 1)
        sp = sp + (si - 1)
        if d.gen == g and (s == nil or s.gen == sg) then
          c_move(plan, dp, sp, n)
          d.gen = g + 1   -- bytes changed (src/lmodule.h's buffer_wrote)
          return true
        end
      end
    end
    if si == nil then si = FIRST elseif not index(si) then return false end
    if n == nil then n = ABSENT elseif not index(n) then return false end
    if type(src) == "string" then return c_copy_from_string(d, src, #src, di, si, n) == DONE end
    local s = as_buffer(src)
    return s ~= nil and c_copy_from_buffer(d, s, di, si, n) == DONE
  end

  local function fast_fill(buf, byte, i, n)
    local b = as_buffer(buf)
    if b == nil or not index(byte) then return false end
    if index(i) and index(n) and byte >= 0 and byte <= 255 and i >= 1 and n >= 0 then
      local g = b.gen
      if n <= b.len - (i - 1) then
        local p = b.data + (i - 1)
        if b.gen == g then
          c_set(plan, p, byte, n)
          b.gen = g + 1
          return true
        end
      end
    end
    if i == nil then i = FIRST elseif not index(i) then return false end
    if n == nil then n = ABSENT elseif not index(n) then return false end
    return c_fill_args(b, byte, i, n) == DONE
  end

  -- buf:put of strings and buffers, growing the buffer as C would; anything
  -- else (other types, a failed growth) is the C function's.
  local function add(total, v)   -- total plus the length of piece v, or -1
    if total < 0 then return -1 end
    if type(v) == "string" then return total + #v end
    local p = as_buffer(v)
    return p and total + tonumber(p.len) or -1
  end
  -- Piece v at offset at of b, whose generation was g, capacity cap and
  -- length old then: the offset after it, or -1 when something changed.
  -- Pieces up to PUT_BY_MEMCPY bytes are one ffi.copy of a variable length
  -- (the trace calls memcpy, as string.buffer's put does): a choice per
  -- size (the movers' widths, or C's kernel past 64 bytes) was a branch
  -- that pieces of mixed sizes turned, and each turn left the loop's trace
  -- for a side trace, which returns to the start of the root trace and runs
  -- its head again (bench/programs.lua's frames, pieces of 7 to 330
  -- bytes, measure it: docs/benchmarks.md). Past it, the copy costs more than such a turn, and the plan's kernel
  -- (streaming ones included) does it.
  local PUT_BY_MEMCPY = 4096
  local function put_piece(b, g, cap, at, v, old)
    if at < 0 then return -1 end
    local src, sgen, str, n
    if type(v) == "string" then
      str, n = v, #v
    else
      src = cast(bufp, v)
      if src == b then
        sgen, n = g, old
      else
        sgen = src.gen
        n = tonumber(src.len)
      end
    end
    -- A piece buffer that grew since it was counted (a finalizer run by a
    -- cdata made here) moves every later piece: none may end past the room.
    if at + n > cap then return -1 end
    if n > PUT_BY_MEMCPY then
      return c_copy_at(b, n, g, at, src, sgen or 0, str, 0) == 1 and at + n or -1
    end
    local d = b.data + at
    local s = str or src.data
    if b.gen ~= g or (src and src.gen ~= sgen) then return -1 end
    fcopy(d, s, n)
    return at + n
  end
  -- The n pieces eight at a time, unrolled (a trace sees each piece's type
  -- and width), the rest by a tail call, which the JIT unrolls too: a loop
  -- over select(k, ...) became a trace of its own, left and entered again
  -- on every put. (A side trace that starts inside these and reaches `...`
  -- is not compiled: NYI in 2.1.0-beta3; the caller's loop trace is.)
  local function total_of(total, n, v1, v2, v3, v4, v5, v6, v7, v8, ...)
    if n >= 1 then total = add(total, v1) end
    if n >= 2 then total = add(total, v2) end
    if n >= 3 then total = add(total, v3) end
    if n >= 4 then total = add(total, v4) end
    if n >= 5 then total = add(total, v5) end
    if n >= 6 then total = add(total, v6) end
    if n >= 7 then total = add(total, v7) end
    if n >= 8 then total = add(total, v8) end
    if n > 8 then return total_of(total, n - 8, ...) end
    return total
  end
  local function write_pieces(b, g, cap, at, old, n, v1, v2, v3, v4, v5, v6, v7, v8, ...)
    if n >= 1 then at = put_piece(b, g, cap, at, v1, old) end
    if n >= 2 then at = put_piece(b, g, cap, at, v2, old) end
    if n >= 3 then at = put_piece(b, g, cap, at, v3, old) end
    if n >= 4 then at = put_piece(b, g, cap, at, v4, old) end
    if n >= 5 then at = put_piece(b, g, cap, at, v5, old) end
    if n >= 6 then at = put_piece(b, g, cap, at, v6, old) end
    if n >= 7 then at = put_piece(b, g, cap, at, v7, old) end
    if n >= 8 then at = put_piece(b, g, cap, at, v8, old) end
    if n > 8 then return write_pieces(b, g, cap, at, old, n - 8, ...) end
    return at
  end
  local function fast_put(buf, n, ...)
    local b = as_buffer(buf)
    if not b then return false end
    local g = b.gen
    local old = tonumber(b.len)
    local total = total_of(old, n, ...)
    if total < 0 then return false end
    local cap = tonumber(b.cap)
    if total > cap then   -- grown here, by C's rule (src/lluajit.c): the new generation
      g = c_grow(b, g, total)
      if g == STALE then return false end
      cap = tonumber(b.cap)
    end
    -- Bytes past the length are nobody's: an interrupted put leaves no trace.
    if write_pieces(b, g, cap, old, old, n, ...) ~= total or b.gen ~= g then return false end
    b.len, b.gen = total, g + 1   -- buffer_setlen (src/buffer.h): inline, see docs/luajit.md
    return true
  end

  -- buf:resize(n) where the buffer holds n bytes: C's entry (c_resize_at)
  -- checks, zeroes and sets the length in a call the trace compiles (the C
  -- function exits the trace, and a loop that empties its buffer often
  -- would leave the trace each time); growth and errors are the C
  -- function's.
  local function fast_resize(buf, n)
    local b = as_buffer(buf)
    return b ~= nil and index(n) and c_resize_at(b, b.gen, n) == 1
  end

  -- Module functions and methods alike (as in C: buf:copy == avxbuf.copy).
  -- What the fast path leaves goes to the C function as a tail call, which
  -- takes the caller's place: its errors name the caller's call and
  -- position, as if the caller had called it (spec/errors_spec.lua), and
  -- cost no pcall.
  local function copy(dst, di, src, si, n)
    if fast_copy(dst, di, src, si, n) then return end
    return c_copy(dst, di, src, si, n)
  end
  local function zero(buf, i, n)
    if fast_fill(buf, 0, i, n) then return end
    return c_zero(buf, i, n)
  end
  local function fill(buf, byte, i, n)
    if fast_fill(buf, byte, i, n) then return end
    return c_fill(buf, byte, i, n)
  end
  avxbuf.copy, avxbuf.zero, avxbuf.fill = copy, zero, fill
  methods.copy, methods.zero, methods.fill = copy, zero, fill
  -- #buf: C's __len is a C function, which ends a trace where it is met;
  -- this one compiles to a load.
  local c_len = MT.__len
  MT.__len = function(buf)
    local b = as_buffer(buf)
    if b ~= nil then return tonumber(b.len) end
    return c_len(buf)
  end
  methods.resize = function(buf, n)
    if fast_resize(buf, n) then return buf end
    return c_resize(buf, n)
  end
  -- buf:pack and buf:unpack: code of its own per format, for up to 64
  -- formats at a time each (the 65th starts the list afresh: a program
  -- with more hot formats than that makes some again, each costing a
  -- compile: docs/benchmarks.md); formats it does not handle go
  -- to the C function every time.
  local function per_format(what, source_of, c_path)
    local made, count = {}, 0
    return function(fmt)
      local f = made[fmt]
      if f then return f end
      if type(fmt) ~= "string" then return c_path end
      if count >= 64 then made, count = {}, 0 end
      local ops = c.pack_ops(fmt)
      local source = ops and source_of(ops)
      f = c_path
      if source then
        local chunk = assert(load(source, "=avxbuf.ffi(" .. what .. " " .. fmt .. ")"))
        f = chunk(ffi.typeof, cast, tonumber, band, bit.bswap, bit.rshift, bit.arshift, ffi.string, fcopy, ffill,
                  as_buffer, index, math.max, c_grow, c_commit, c_consume, STALE, c_path)
      end
      made[fmt], count = f, count + 1
      return f
    end
  end
  local c_unpack, c_pack = methods.unpack, methods.pack
  local unpacker = per_format("unpack", unpack_source, c_unpack)
  local stream_unpacker = per_format("unpack", function(ops) return unpack_source(ops, true) end, c_unpack)
  methods.unpack = function(buf, i, ...)   -- the stream form, as in C: a string and nothing after it
    if type(i) == "string" and select("#", ...) == 0 then return stream_unpacker(i)(buf, i) end
    local fmt = ...
    return unpacker(fmt)(buf, i, fmt)
  end
  local packer = per_format("pack", pack_source, function(buf, at, i, fmt, ...)
    if at then return c_pack(buf, i, fmt, ...) end
    return c_pack(buf, fmt, ...)
  end)
  methods.pack = function(buf, a, ...)
    if type(a) == "string" then return packer(a)(buf, false, nil, a, ...) end
    return packer((...))(buf, true, a, ...)
  end

  -- Reads: the string a read makes comes from a pointer made after the
  -- generation was read and checked against it right before ffi.string,
  -- which copies the bytes before it allocates (lj_str_new; the collector
  -- runs after it returns); what searches runs in C (c_search, c_line),
  -- which checks the generation itself. A check that fails (a trace exit
  -- there can run the collector) takes the path that uses nothing read
  -- before: the C function. Only integer arguments in the plain cases are
  -- taken here.
  local fstring = ffi.string
  local c_byte, c_find = methods.byte, methods.find
  local c_get, c_skip, c_lines, c_split = methods.get, methods.skip, methods.lines, methods.split
  -- buf:tostring(i, j) with both given, 1 <= i <= j <= #buf: those bytes.
  -- Every other form (defaults, negative or empty ranges) is the C
  -- function's, which owns string.sub's rules. The pointer is made before
  -- the check (run by the interpreter, pointer arithmetic makes a cdata).
  local c_tostring = methods.tostring
  methods.tostring = function(buf, i, j)
    local b = as_buffer(buf)
    if b ~= nil and index(i) and index(j) and i >= 1 and i <= j then
      local g = b.gen
      local in_range = j <= b.len
      local p = b.data + (i - 1)
      if in_range and b.gen == g then return fstring(p, j - i + 1) end
    end
    return c_tostring(buf, i, j)
  end
  -- buf:byte(i) for 1 <= i <= #buf, compared with the int64_t length
  -- itself (no conversion of it in the trace); a default, a negative index
  -- or a range is the C function's.
  methods.byte = function(buf, i, j)
    local b = as_buffer(buf)
    if b ~= nil and j == nil and index(i) and i >= 1 then
      local g = b.gen
      local in_range = i <= b.len
      local p = b.data
      if in_range and b.gen == g then return p[i - 1] end
    end
    return c_byte(buf, i, j)
  end
  -- A plain search (plain = true, or a needle without magic characters,
  -- as src/match.c tells them: remembered per needle, the first 64 at a
  -- time, as formats are).
  local is_plain, plain_count = {}, 0
  local function plain(needle, flag)
    if flag then return true end
    local known = is_plain[needle]
    if known ~= nil then return known end
    if plain_count >= 64 then is_plain, plain_count = {}, 0 end
    known = c_has_specials(needle, #needle) == 0
    is_plain[needle], plain_count = known, plain_count + 1
    return known
  end
  methods.find = function(buf, needle, init, flag)
    local b = as_buffer(buf)
    if b ~= nil and type(needle) == "string" and #needle > 0 and (init == nil or index(init))
       and plain(needle, flag) then
      local r = c_search(b, b.gen, init ~= nil, init or 0, needle, #needle)
      if r >= 0 then
        local found = r % 2
        if found == 0 then return nil end
        local at = (r - 1) / 2
        return at + 1, at + #needle
      end
      if r == -1 then return nil end
    end
    return c_find(buf, needle, init, flag)
  end
  local consume = c_consume   -- C's rule: n bytes, or all there are
  -- get(n): a count within the length takes those bytes; what any other
  -- takes (n absent, past the end, negative) is C's answer (c_get_count;
  -- n or 0: a placeholder where the flag before it says n is absent),
  -- asked only then: a call in every get showed in bench/ffi.lua --reads.
  -- The pointer is made after, the generation checked last.
  methods.get = function(buf, n)
    local b = as_buffer(buf)
    if b ~= nil and (n == nil or index(n)) then
      local g = b.gen
      local k = n
      if n == nil or n < 0 or n > b.len then k = c_get_count(b, g, n ~= nil, n or 0) end
      local p = b.data
      if k >= 0 and b.gen == g then
        local s = fstring(p, k)
        -- As the C function: consumed from the buffer as it is once s exists.
        consume(b, k)
        return s
      end
    end
    return c_get(buf, n)
  end
  methods.skip = function(buf, n)
    local b = as_buffer(buf)
    if b ~= nil and index(n) and n >= 0 then
      consume(b, n)
      return buf
    end
    return c_skip(buf, n)
  end
  -- The iterators keep the buffer (checked at every step, as C's are: a
  -- replaced upvalue is an error) and a 0-based position, and read the
  -- buffer afresh at each step; one that finds the generation changed
  -- hands over to the C iterator from where it is. Their first upvalues
  -- are their own, where C's iterators have theirs (2 the buffer, 3 the
  -- position, 4 split's separator: spec/split_spec.lua replaces them), so
  -- that debug.setupvalue there reaches no function the module shares.
  local function replaced(what) error("avxbuf: this " .. what .. " iterator's upvalues were replaced", 2) end
  -- An iterator's position is an offset, negative once done: it meets
  -- C's size_t and the data pointer, so it passes index() too. Anything
  -- else (2^64, a NaN, a fraction, set with debug.setupvalue) was not put
  -- there by the iterator; C's iterators (src/lsplit.c) refuse it too.
  -- Where an iteration starts: C's offset for init (c_start), or for no
  -- init the offset C exports (START: a call, interpreted, as the
  -- iterator's making is, cost more than a short split's pieces).
  local function start_of(b, init)
    if init == nil then return START end
    return c_start(b, true, init)
  end
  methods.lines = function(buf, init)
    local b = as_buffer(buf)
    if b == nil or not (init == nil or index(init)) then return c_lines(buf, init) end
    local pos, c_iter = start_of(b, init), nil
    return function()
      local it, v, at = c_iter, buf, pos   -- (upvalues 1, 2, 3, in this order)
      if it then return it() end
      local d = as_buffer(v)
      if d == nil or not index(at) then replaced("lines") end
      if pos < 0 then return end   -- done: no value, as C's iterator
      local g = d.gen
      local p = d.data + pos
      local r = c_line(d, g, pos)
      local newline = r % 2
      local n = (r - newline) / 2
      -- the generation again, last: a trace exit at r >= 0 can run the collector
      if r >= 0 and d.gen == g then
        pos = pos + n + newline
        return fstring(p, n)
      end
      if r == -1 then
        pos = -1
        return
      end
      c_iter = c_lines(buf, pos + 1)
      return c_iter()
    end
  end
  -- split: the separators 64 at a time from c_split_step (one
  -- call), each piece then a read of the batch, which holds while the
  -- buffer's generation is the one it was found at (checked every step:
  -- otherwise found again from the position; every write of bytes steps
  -- it, src/lmodule.h's buffer_wrote). One batch serves every
  -- iterator, held by the one whose id is `owner` (a batch of each cost
  -- an interpreted ffi.new at every split, more than a short split's
  -- pieces); another's turn finds it again from its position. The batch's
  -- indices are upvalues like the rest: checked before it is read, against
  -- the literal 64 (src/lluajit.c's SPLIT_BATCH_MAX), which, unlike an
  -- upvalue, debug.setupvalue cannot replace.
  local batch_t = ffi.typeof("double[65]")   -- 64 and the last piece's end
  local istype = ffi.istype
  local batch, owner, last_id = batch_t(), 0, 0
  methods.split = function(buf, sep, init)
    local b = as_buffer(buf)
    if b == nil or type(sep) ~= "string" or #sep == 0 or not (init == nil or index(init)) then
      return c_split(buf, sep, init)
    end
    local pos, c_iter = start_of(b, init), nil
    last_id = last_id + 1
    local id, nb, k, bgen = last_id, 0, 0, false
    return function()
      local it, v, at, m, f = c_iter, buf, pos, sep, batch   -- (upvalues 1, 2, 3, 4, 5, in this order)
      if it then return it() end
      local d = as_buffer(v)
      if d == nil or not index(at) or type(m) ~= "string" or #m == 0 or not istype(batch_t, f)
         or not (index(nb) and nb >= 0 and nb <= 64 and index(k) and k >= 0) then
        replaced("split")
      end
      if pos < 0 then return end
      local g = d.gen
      if owner ~= id or g ~= bgen or (k >= nb and nb == 64) then   -- not ours, stale, or used up
        local r = c_split_step(d, g, pos, sep, #sep, f, 64)
        if r < 0 then
          if r == -1 then
            pos = -1
            return
          end
          c_iter = c_split(buf, sep, pos + 1)
          return c_iter()
        end
        owner, nb, k, bgen = id, r, 0, g
      end
      local i = pos + 1
      if k < nb then   -- a separator at offset f[k]
        local e = f[k]
        k = k + 1
        pos = e + #sep
        return i, e
      end
      pos = -1   -- none left: the last piece, to the end
      return i, f[nb]
    end
  end

  -- Three iterators of each kind, made now: LuaJIT specialises a trace to
  -- the closure it calls until that closure's prototype has made three
  -- (PROTO_CLC_POLY, lj_obj.h; to its prototype from then on), so a loop
  -- trace recorded over a program's first split specialised to that one
  -- iterator, and every later split's pieces left it at each step through
  -- a chain of side traces (-jdump: the guard on the closure).
  do
    local probe = avxbuf.from("a")
    for _ = 1, 3 do probe:lines(); probe:split(",") end
  end

  -- A number as the C function writes it (lua_tolstring's format; `..`
  -- consults no __tostring), made before fast_put reads a pointer: making
  -- a string can run the collector.
  local function text(v)
    if type(v) == "number" then return v .. "" end
    return v
  end
  methods.put = function(buf, ...)
    local n = select("#", ...)
    if n <= 8 then
      local v1, v2, v3, v4, v5, v6, v7, v8 = ...
      v1, v2, v3, v4, v5, v6, v7, v8 = text(v1), text(v2), text(v3), text(v4), text(v5), text(v6), text(v7), text(v8)
      if fast_put(buf, n, v1, v2, v3, v4, v5, v6, v7, v8) then return buf end
    elseif fast_put(buf, n, ...) then   -- a number among more pieces: add refuses it, C writes it
      return buf
    end
    return c_put(buf, ...)
  end
end
