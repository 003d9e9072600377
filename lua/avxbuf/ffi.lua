-- LuaJIT: the buffer's methods through the FFI, so that the JIT compiles
-- them. C owns the buffer and every rule (src/luajit/lluajit.c's entries);
-- this file tests types, filters plain forms and calls C: what it does not
-- take goes to the C function, which does the work or raises. Loaded by the
-- C module under LuaJIT only.
local ffi = require "ffi"

-- The fields of src/core/buffer.h's buffer up to module, checked against
-- C's offsets at load: len and cap as int64_t, so that compares with Lua
-- numbers compile (size_t of 64 bits); gen, C's uint32_t, as int32_t, the
-- same steps modulo 2^32 but an integer in a trace.
if not pcall(ffi.typeof, "avxbuf_buffer") then
  ffi.cdef [[
    typedef struct {
      uintptr_t cookie; int64_t len; unsigned char *data; int64_t cap; int32_t gen;
      void *block; int64_t block_size; void *module;
    } avxbuf_buffer;
  ]]
end
-- The plan's small kernels and the largest size each serves
-- (src/core/dispatch.h: copy_small_fn and the three fields after it).
if not pcall(ffi.typeof, "avxbuf_small") then
  ffi.cdef [[
    typedef struct { void (*copy)(void *, const void *, size_t); void (*fill)(void *, int, size_t);
                     int32_t copy_upto, fill_upto; } avxbuf_small;
  ]]
end
-- The stage (src/luajit/lluajit.c's ffi_stage, checked against C's offsets and
-- size at load): its stamp, put's 64 pieces, pack's 64 values and a
-- read's 4096 bytes. The bounds are literals, and every pointer into the
-- stage is made from st itself (st.bytes): a bound or a pointer in an
-- upvalue, debug.setupvalue could move past the stage (a string given
-- ffi.string as the pointer is its bytes).
if not pcall(ffi.typeof, "avxbuf_stage") then
  ffi.cdef [[
    typedef struct {
      int32_t stamp;
      struct { const char *p; const avxbuf_buffer *buf; int32_t gen; int64_t n; } piece[64];
      struct { const char *s; int64_t len; double n; } value[64];
      unsigned char bytes[4096];
    } avxbuf_stage;
  ]]
end

local bufp = ffi.typeof("avxbuf_buffer *")
local uptr = ffi.typeof("uintptr_t")
local cast = ffi.cast
local bit = require "bit"
local band, bor, bxor, bnot, tobit = bit.band, bit.bor, bit.bxor, bit.bnot, bit.tobit
local arshift = bit.arshift
local type, tonumber, select = type, tonumber, select
-- The raw metatable: getmetatable also looks up __metatable, a hash lookup
-- that a trace does again in every iteration of a loop.
local getmetatable_raw = debug.getmetatable

-- The one test every Lua number passes before it meets a C field or
-- argument: an int32 integer (tobit's round trip is exact for those alone;
-- 2^63, a NaN, a fraction or anything past 2^31 take C's path, which
-- handles every size). One add and one compare in a trace (docs/luajit.md).
local function index(i) return type(i) == "number" and tobit(i) == i end
-- index()'s test, giving the int32 (or false): a length the plain moves
-- compare and pass on as one, not as a double (docs/luajit.md).
local function as_int(n) return index(n) and tobit(n) end
-- The iterators keep their offsets within index(): a buffer longer than
-- this is iterated by C's iterators.
local LONGEST = 2 ^ 31 - 1

-- No pointer or length survives an allocation (src/lua/lmodule.h): every
-- cdata the interpreter makes here can run the collector, a finalizer can
-- free, resize or append to any buffer, and so can a trace exit
-- (lj_trace_exit), even a guard's exit on its passing side. So a check in
-- Lua guards nothing made before it (issue 44). The ways this file uses
-- (docs/luajit.md, "The plain move"): C's entries, which check the buffer
-- as it is and move or stage where nothing runs in between; and the plain
-- moves and reads, which read the generation, make their pointers, read
-- the generation again and pass what it says as the length of the move
-- (0 when it changed), with nothing that allocates or can exit between
-- that read and the move (spec/jit_spec.lua reads the traces for it).

return function(avxbuf, c)
  local MT = getmetatable(avxbuf.new(0))
  local KEY = cast(uptr, c.cookie_key)
  local c_put_staged = cast("int (*)(avxbuf_buffer *, avxbuf_stage *, int32_t, int)", c.put)
  local c_pack_staged = cast("double (*)(avxbuf_buffer *, avxbuf_stage *, int32_t, const char *, size_t, int)", c.pack)
  local c_pack_bytes = cast("double (*)(avxbuf_buffer *, avxbuf_stage *, int32_t, int64_t)", c.pack_bytes)
  local c_pack_bits = cast("double (*)(avxbuf_buffer *, int32_t, int)", c.pack_bits)
  local c_put_strings = cast("int (*)(avxbuf_buffer *, const char *, int64_t, const char *, int64_t)", c.put_strings)
  local c_resize_at = cast("int (*)(avxbuf_buffer *, uint32_t, int64_t)", c.resize)
  local c_has_specials = cast("int (*)(const char *, size_t)", c.has_specials)
  local c_copy_from_buffer = cast(
    "void (*)(avxbuf_buffer *, int32_t, const avxbuf_buffer *, int64_t, int64_t, int64_t)", c.copy_from_buffer)
  local c_copy_from_string = cast(
    "void (*)(avxbuf_buffer *, int32_t, const char *, int64_t, int64_t, int64_t, int64_t)", c.copy_from_string)
  local c_fill_args = cast("void (*)(avxbuf_buffer *, int32_t, int64_t, int64_t, int64_t)", c.fill_args)
  local FIRST, START, ABSENT = c.first, c.start_default, c.absent
  local c_consume = cast("void (*)(avxbuf_buffer *, size_t)", c.consume)
  local c_search = cast("double (*)(const avxbuf_buffer *, uint32_t, int, int64_t, const char *, size_t)", c.search)
  local c_line = cast("double (*)(const avxbuf_buffer *, avxbuf_stage *, size_t)", c.line)
  local c_read = cast("void (*)(const avxbuf_buffer *, avxbuf_stage *, int64_t, int64_t)", c.read)
  local c_byte_at = cast("int (*)(const avxbuf_buffer *, int64_t)", c.byte)
  local c_split_step = cast("int (*)(const avxbuf_buffer *, uint32_t, size_t, const char *, size_t, double *, int)",
                            c.split)
  local c_start = cast("double (*)(const avxbuf_buffer *, int, int64_t)", c.start)
  local c_get_staged = cast("int (*)(const avxbuf_buffer *, avxbuf_stage *, int, int64_t)", c.get)
  local methods = MT.__index
  local c_copy, c_zero, c_fill = avxbuf.copy, avxbuf.zero, avxbuf.fill
  local c_put, c_resize = methods.put, methods.resize

  local layout = c.layout
  for _, field in ipairs { "len", "data", "cap", "gen", "module" } do
    if ffi.offsetof("avxbuf_buffer", field) ~= layout[field] then
      error("avxbuf.ffi: the buffer layout does not match this avxbuf.so (" .. field .. ")")
    end
  end
  local offset = ffi.offsetof
  if ffi.sizeof("int64_t") ~= layout.len_size or ffi.sizeof("int32_t") ~= layout.gen_size
     or offset("avxbuf_stage", "piece") ~= layout.stage_piece or layout.stage_pieces ~= 64
     or offset("avxbuf_stage", "value") ~= layout.stage_value or offset("avxbuf_stage", "bytes") ~= layout.stage_bytes
     or layout.stage_value ~= layout.stage_piece + 64 * layout.piece_size
     or layout.stage_bytes ~= layout.stage_value + 64 * layout.value_size
     or ffi.sizeof("avxbuf_stage") ~= layout.stage_size or offset("avxbuf_small", "fill") ~= layout.small_fill
     or offset("avxbuf_small", "copy_upto") ~= layout.small_copy_upto
     or offset("avxbuf_small", "fill_upto") ~= layout.small_fill_upto then
    error("avxbuf.ffi: the buffer's field sizes do not match this avxbuf.so")
  end
  -- The stage. A read takes st.stamp + 1 before C stages and keeps its
  -- string only if the stamp is that after ffi.string (else a finalizer's
  -- read staged in between). A read takes st into a local once: a trace
  -- holds a never-assigned upvalue as a constant, and after
  -- debug.setupvalue a trace and the interpreter it exits to would see two.
  local st = cast("avxbuf_stage *", c.stage)

  -- src/lua/lmodule.h's testbuffer: the metatable is a filter, the cookie
  -- (only avxbuf writes it) the proof; nil for anything else. A light
  -- userdata (refused while light userdata carry this metatable) and an io
  -- file (its FILE *) cast to pointers other than their own bytes.
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

  -- copy, zero and fill: the plain form (every argument given, 1 <= n <=
  -- what the plan's small kernel serves, ranges within their bytes, not
  -- within one buffer) calls that kernel here; every other form is one
  -- call to C's checking entries (c_copy_from_*, c_fill_args), which move
  -- exactly when the generation is one step on after the call. true when done.
  -- -1 when x is 0, else 0: x | -x has the sign bit of any other int32.
  -- (tobit(0 - x) is a wrapping negation in a trace; -x guards x ~= 0.)
  local function unchanged(x) return bnot(arshift(bor(x, tobit(0 - x)), 31)) end
  -- The plan's small calls, read where a buffer of this module (one whose
  -- module is the one these are of, which it keeps alive) is written.
  local small = cast("avxbuf_small *", c.small)
  local MODULE = cast("void *", c.module)
  local bytes_of = ffi.typeof("const uint8_t *")

  local function plain_copy(d, di, src, si, n)   -- d: a buffer, di: index()
    local k = as_int(n)
    if not (k and index(si) and di >= 1 and si >= 1 and k >= 1) then return false end
    local g, s = d.gen, d   -- (a string's bytes have no generation: d's stands in)
    local from_string = type(src) == "string"
    if not from_string then
      s = as_buffer(src)
      if s == nil or s == d then return false end
    end
    local gs, sm = s.gen, small
    if d.module ~= MODULE or k > sm.copy_upto or di + n - 1 > d.len then return false end
    local q
    if from_string then
      if si + n - 1 > #src then return false end
      q = cast(bytes_of, src) + (si - 1)
    else
      if si + n - 1 > s.len then return false end
      q = s.data + (si - 1)
    end
    local fn, p = sm.copy, d.data + (di - 1)
    local m = unchanged(bor(bxor(d.gen, g), bxor(s.gen, gs)))
    fn(p, q, band(k, m))
    d.gen = tobit(d.gen - m)
    return m ~= 0
  end

  local function plain_fill(b, byte, i, n)   -- b: a buffer, byte: index()
    local k = as_int(n)
    if not (k and index(i) and i >= 1 and k >= 1 and byte >= 0 and byte <= 255) then return false end
    local g, sm = b.gen, small
    if b.module ~= MODULE or k > sm.fill_upto or i + n - 1 > b.len then return false end
    local fn, p = sm.fill, b.data + (i - 1)
    local m = unchanged(bxor(b.gen, g))
    fn(p, byte, band(k, m))
    b.gen = tobit(b.gen - m)
    return m ~= 0
  end

  local ffi_string = ffi.string
  -- A plain read: n bytes from offset off, within the buffer's bytes, as a
  -- string (ffi.string copies them at once), or nil when a finalizer
  -- changed the buffer.
  local function plain_read(b, off, n)
    -- (an upvalue read first: a trace that starts in this function checks
    -- its closure at the first one, which must not lie between the pointer
    -- and the string: spec/jit_spec.lua)
    local mask_of, g = unchanged, b.gen
    if off + n > b.len then return nil end
    local p = b.data + off
    local m = mask_of(bxor(b.gen, g))
    local s = ffi_string(p, band(n, m))
    if m ~= 0 then return s end
    return nil
  end

  local function fast_copy(dst, di, src, si, n)
    local d = as_buffer(dst)
    if d == nil or not index(di) then return false end
    if plain_copy(d, di, src, si, n) then return true end
    if si == nil then si = FIRST elseif not index(si) then return false end
    if n == nil then n = ABSENT elseif not index(n) then return false end
    local g
    if type(src) == "string" then
      g = d.gen
      c_copy_from_string(d, g, src, #src, di, si, n)
    else
      local s = as_buffer(src)
      if s == nil then return false end
      g = d.gen
      c_copy_from_buffer(d, g, s, di, si, n)
    end
    return d.gen == tobit(g + 1)
  end

  local function fast_fill(buf, byte, i, n)
    local b = as_buffer(buf)
    if b == nil or not index(byte) then return false end
    if plain_fill(b, byte, i, n) then return true end
    if i == nil then i = FIRST elseif not index(i) then return false end
    if n == nil then n = ABSENT elseif not index(n) then return false end
    local g = b.gen
    c_fill_args(b, g, byte, i, n)
    return b.gen == tobit(g + 1)
  end

  -- buf:put of up to 64 strings and buffers: the pieces staged (a string, or
  -- a buffer with its generation and length), then one call (c_put_staged)
  -- that checks the stamp and each piece, grows by C's rule and moves them.
  -- Anything else (other types, more pieces, a refusal) is the C function's.
  local function staged(k, v)   -- piece v staged at k: true, or false for a type C must judge
    if type(v) == "string" then
      local e = st.piece[k]
      e.p, e.buf, e.n = v, nil, #v
      return true
    end
    local p = as_buffer(v)
    if p == nil then return false end
    local e = st.piece[k]
    e.p, e.buf, e.gen, e.n = nil, p, p.gen, p.len
    return true
  end
  -- The n items from k, each staged by one(k, v) (false: C must judge it),
  -- eight at a time, unrolled, the rest by a tail call, which the JIT
  -- unrolls too (a loop over select(k, ...) was a trace of its own).
  local function stage_all(one, k, n, v1, v2, v3, v4, v5, v6, v7, v8, ...)
    if n >= 1 and not one(k, v1) then return false end
    if n >= 2 and not one(k + 1, v2) then return false end
    if n >= 3 and not one(k + 2, v3) then return false end
    if n >= 4 and not one(k + 3, v4) then return false end
    if n >= 5 and not one(k + 4, v5) then return false end
    if n >= 6 and not one(k + 5, v6) then return false end
    if n >= 7 and not one(k + 6, v7) then return false end
    if n >= 8 and not one(k + 7, v8) then return false end
    if n > 8 then return stage_all(one, k + 8, n - 8, ...) end
    return true
  end
  local function fast_put(buf, n, v1, v2, ...)
    local b = as_buffer(buf)
    if b == nil or n > 64 then return false end
    if n <= 2 and type(v1) == "string" and (n == 1 or type(v2) == "string") then   -- no stage (lluajit.c)
      return c_put_strings(b, v1, #v1, n == 2 and v2 or "", n == 2 and #v2 or 0) == 1
    end
    local k = st.stamp + 1
    st.stamp = k
    return stage_all(staged, 0, n, v1, v2, ...) and c_put_staged(b, st, k, n) == 1
  end

  -- buf:resize(n) within the capacity: C's entry (c_resize_at), a call the
  -- trace compiles (the C function ends it); growth and errors are C's.
  local function fast_resize(buf, n)
    local b = as_buffer(buf)
    return b ~= nil and index(n) and c_resize_at(b, b.gen, n) == 1
  end

  -- Module functions and methods alike (buf:copy == avxbuf.copy). What the
  -- fast path leaves goes to the C function as a tail call, so that its
  -- errors name the caller's call (spec/errors_spec.lua), with no pcall.
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
  -- buf:pack and buf:unpack: code of its own per format (ffi_format.lua), up
  -- to 64 formats at a time (the 65th starts afresh); the rest is C's.
  local format_env = { cast = cast, tonumber = tonumber, band = band, bswap = bit.bswap, rshift = bit.rshift,
                       arshift = bit.arshift, ldexp = math.ldexp, fstring = ffi_string, as_buffer = as_buffer,
                       index = index, consume = c_consume, c_read = c_read, plain_read = plain_read, st = st,
                       floor = math.floor, copy = ffi.copy, fill = ffi.fill, pack_bytes = c_pack_bytes, type = type,
                       bor = bor, lshift = bit.lshift, pack_bits = c_pack_bits }
  local function per_format(what, c_path)
    local made, count, env = {}, 0, setmetatable({ c_path = c_path }, { __index = format_env })
    return function(fmt)
      local f = made[fmt]
      if f then return f end
      if type(fmt) ~= "string" then return c_path end
      if count >= 64 then made, count = {}, 0 end
      local ops = c.pack_ops(fmt)
      f = ops and c.format(what, fmt, ops, env) or c_path
      made[fmt], count = f, count + 1
      return f
    end
  end
  local c_unpack = methods.unpack
  local unpacker = per_format("unpack", c_unpack)
  local stream_unpacker = per_format("stream", c_unpack)
  methods.unpack = function(buf, i, ...)   -- the stream form, as in C: a string and nothing after it
    if type(i) == "string" and select("#", ...) == 0 then return stream_unpacker(i)(buf, i) end
    local fmt = ...
    return unpacker(fmt)(buf, i, fmt)
  end
  -- buf:pack(fmt, v...): code of its own per format (ffi_format.lua), which
  -- writes to the stage and appends in one call; other formats' values (up
  -- to 64 numbers and strings) staged, then one call (c_pack_staged) that
  -- checks and writes them with C's format (src/lua/lpack.c). What either
  -- would convert or refuse, and the index form, are the C function's.
  local function value_staged(k, v)   -- value v staged at k: true, or false for a type C must judge
    local e = st.value[k]
    if type(v) == "number" then
      e.s, e.n = nil, v
      return true
    end
    if type(v) ~= "string" then return false end
    e.s, e.len = v, #v
    return true
  end
  local c_pack = methods.pack
  local function staged_pack(buf, fmt, ...)
    local b = as_buffer(buf)
    local n = select("#", ...)
    if b ~= nil and type(fmt) == "string" and n <= 64 then
      local k = st.stamp + 1
      st.stamp = k
      if stage_all(value_staged, 0, n, ...) then
        local nxt = c_pack_staged(b, st, k, fmt, #fmt, n)
        if nxt > 0 then return nxt end
      end
    end
    return c_pack(buf, fmt, ...)
  end
  local packer = per_format("pack", staged_pack)
  methods.pack = function(buf, fmt, ...) return packer(fmt)(buf, fmt, ...) end

  -- Reads: plain reads (above), or C stages the bytes (c_read, c_get_staged,
  -- c_line) and the string is made from the stage; searches run in C.
  local c_byte, c_find = methods.byte, methods.find
  local c_get, c_skip, c_lines, c_split = methods.get, methods.skip, methods.lines, methods.split
  -- buf:tostring(i, j) with both given, 1 <= i <= j <= #buf: those bytes.
  -- Every other form (defaults, negative, empty or clamped ranges) is the
  -- C function's, which owns string.sub's rules.
  local c_tostring = methods.tostring
  methods.tostring = function(buf, i, j)
    local b = as_buffer(buf)
    if b ~= nil and index(i) and index(j) and i >= 1 and i <= j then
      local s = plain_read(b, i - 1, j - i + 1)
      if s then return s end
    end
    return c_tostring(buf, i, j)
  end
  -- buf:byte(i) for 1 <= i <= #buf (C's answer, -1 past the end); a
  -- default, a negative index or a range is the C function's.
  methods.byte = function(buf, i, j)
    local b = as_buffer(buf)
    if b ~= nil and j == nil and index(i) and i >= 1 then
      local v = c_byte_at(b, i - 1)
      if v >= 0 then return v end
    end
    return c_byte(buf, i, j)
  end
  -- A plain search (plain = true, or a needle without magic characters,
  -- as src/core/match.c tells them: remembered per needle, the first 64 at a
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
  -- get(n): 1 <= n <= #buf a plain read; otherwise the bytes C's rule
  -- takes (c_get_staged; n or 0: a placeholder where the flag before it
  -- says n is absent). Either way consumed from the buffer as it is once
  -- the string exists, as the C function does.
  methods.get = function(buf, n)
    local b = as_buffer(buf)
    if b ~= nil and index(n) and n >= 1 then
      local s = plain_read(b, 0, n)
      if s then
        consume(b, n)
        return s
      end
    end
    if b ~= nil and (n == nil or index(n)) then
      local sg = st
      local k = sg.stamp + 1
      local got = c_get_staged(b, sg, n ~= nil, n or 0)
      if got >= 0 then
        local s = ffi_string(sg.bytes, got)
        if sg.stamp == k then
          consume(b, got)
          return s
        end
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
  -- The iterators keep the buffer (checked each step: a replaced upvalue is
  -- an error) and a 0-based position, read the buffer afresh each step, and
  -- hand over to C's iterator when the generation changed. Their first
  -- upvalues are their own, where C's have theirs (spec/split_spec.lua).
  local function replaced(what) error("avxbuf: this " .. what .. " iterator's upvalues were replaced", 2) end
  -- An iterator's position is an offset (negative once done) that passes
  -- index(): anything else was set with debug.setupvalue, and C's
  -- iterators refuse it too. A buffer grown past LONGEST goes to C's
  -- iterator. Where an iteration starts: C's offset for init (c_start), or
  -- the one C exports for none (START).
  local function start_of(b, init) return init == nil and START or c_start(b, true, init) end
  methods.lines = function(buf, init)
    local b = as_buffer(buf)
    if b == nil or not (init == nil or index(init)) or b.len > LONGEST then return c_lines(buf, init) end
    local pos, c_iter = start_of(b, init), nil
    return function()
      local it, v, at = c_iter, buf, pos   -- (upvalues 1, 2, 3, in this order)
      if it then return it() end
      local d = as_buffer(v)
      if d == nil or not index(at) then replaced("lines") end
      if pos < 0 then return end   -- done: no value, as C's iterator
      if d.len > LONGEST then
        c_iter = c_lines(buf, pos + 1)
        return c_iter()
      end
      local sg = st
      local k = sg.stamp + 1
      local r = c_line(d, sg, pos)
      if r >= 0 then
        local newline = r % 2
        local n = (r - newline) / 2
        local s = ffi_string(sg.bytes, n)
        if sg.stamp == k then
          pos = pos + n + newline
          return s
        end
        r = -2
      end
      if r == -1 then pos = -1 return end
      c_iter = c_lines(buf, pos + 1)
      return c_iter()
    end
  end
  -- split: the separators a batch at a time from c_split_step, each piece a
  -- read of the batch while the buffer's generation is the one it was found
  -- at (else found again from the position). One batch serves every
  -- iterator, held by the one whose id is `owner` (a batch each cost an
  -- interpreted ffi.new per split). Its indices are checked against the
  -- batch's own size before a read, so no replaced upvalue reads past it.
  local batch_t = ffi.typeof("double[$]", c.split_batch + 1)
  local istype = ffi.istype
  local batch, owner, last_id = batch_t(), 0, 0
  methods.split = function(buf, sep, init)
    local b = as_buffer(buf)
    if b == nil or type(sep) ~= "string" or #sep == 0 or not (init == nil or index(init)) or b.len > LONGEST then
      return c_split(buf, sep, init)
    end
    local pos, c_iter = start_of(b, init), nil
    last_id = last_id + 1
    local id, nb, k, bgen = last_id, 0, 0, false
    return function()
      local it, v, at, m, f = c_iter, buf, pos, sep, batch   -- (upvalues 1, 2, 3, 4, 5, in this order)
      if it then return it() end
      local d = as_buffer(v)
      if d == nil or not index(at) or type(m) ~= "string" or #m == 0 or not istype(batch_t, f) then
        replaced("split")
      end
      local most = ffi.sizeof(f) / 8 - 1
      if not (index(nb) and nb >= 0 and nb <= most and index(k) and k >= 0) then replaced("split") end
      if pos < 0 then return end
      local g = d.gen
      if owner ~= id or g ~= bgen or (k >= nb and nb == most) then   -- not ours, stale, or used up
        local r = d.len > LONGEST and -2 or c_split_step(d, g, pos, sep, #sep, f, most)
        if r < 0 then
          if r == -1 then pos = -1 return end
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
  -- the closure it calls until its prototype has made three (PROTO_CLC_POLY,
  -- lj_obj.h), and later splits' pieces would leave such a trace each step.
  do
    local probe = avxbuf.from("a")
    for _ = 1, 3 do probe:lines(); probe:split(",") end
  end

  -- A number as the C function writes it (lua_tolstring's format; `..`
  -- consults no __tostring), staged as that string.
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
    elseif fast_put(buf, n, ...) then   -- a number among more pieces: staged refuses it, C writes it
      return buf
    end
    return c_put(buf, ...)
  end
end
