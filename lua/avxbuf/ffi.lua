-- LuaJIT: the buffer's methods through the FFI, so that the JIT compiles
-- them. C owns the buffer and every rule (src/luajit/lluajit.c's entries, which
-- check, move and search); this file tests types and calls them: what an
-- entry refuses (a wrong argument, a buffer that changed) goes to the C
-- function, which does the work or raises the documented error. Loaded by
-- the C module under LuaJIT only.
local ffi = require "ffi"

-- The first fields of src/core/buffer.h's buffer (len and cap as int64_t, so
-- that comparisons with Lua numbers compile: the layout holds where size_t
-- has 64 bits; gen, C's uint32_t, as int32_t: the same bytes and the same
-- steps modulo 2^32, but an integer in a trace, where a uint32_t is a
-- double converted each way at every step), checked against the C
-- module's own offsets at load. Every other fact (the plan, the kernels,
-- the pick) stays in C, behind the entry points of src/luajit/lluajit.c.
if not pcall(ffi.typeof, "avxbuf_buffer") then
  ffi.cdef [[
    typedef struct {
      uintptr_t cookie; int64_t len; unsigned char *data; int64_t cap; int32_t gen;
      void *block; int64_t block_size; void *module;
    } avxbuf_buffer;
  ]]
end
-- The plan's small calls (src/core/dispatch.h: copy_small_fn and the
-- three fields after it, offsets checked at load): the small kernels, and
-- the largest size each serves.
if not pcall(ffi.typeof, "avxbuf_small") then
  ffi.cdef [[
    typedef struct {
      void (*copy)(void *, const void *, size_t);
      void (*fill)(void *, int, size_t);
      int32_t copy_upto, fill_upto;
    } avxbuf_small;
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
local lshift, arshift = bit.lshift, bit.arshift
local type, tonumber, select = type, tonumber, select
-- The raw metatable: getmetatable also looks up __metatable, a hash lookup
-- that a trace does again in every iteration of a loop.
local getmetatable_raw = debug.getmetatable

-- A number C's entries take as an integer: the one test every Lua number
-- passes before it meets a C field or argument (what it means, range and
-- all, is C's). An int32 integer: tobit's round trip is exact for those
-- alone, so 2^63 (which converts to int64_t as a negative number), a NaN,
-- an infinity or a fraction fail, and so does any number past 2^31, whose
-- call takes C's path, which handles every size. One add and one compare
-- in the trace, where a floor and two range compares were three guards in
-- every operation (docs/luajit.md).
local function index(i) return type(i) == "number" and tobit(i) == i end
-- The iterators keep their offsets within index(): a buffer longer than
-- this is iterated by C's iterators.
local LONGEST = 2 ^ 31 - 1

-- No pointer or length survives an allocation (src/lua/lmodule.h): run by the
-- interpreter, every cdata made here (a pointer, a boxed 64-bit length)
-- can run the collector, and a finalizer can free, resize or append to any
-- buffer. Compiled, a trace exit can run finalizers too (lj_trace_exit),
-- and a check in Lua is a guard that can exit on its passing side (a trace
-- recorded where it failed), after which the interpreter goes on past the
-- check with what it had made before. So writes are C's: an entry that
-- takes the generation read here checks it and makes its pointers where
-- nothing runs in between (issue 44, docs/reliability.md). Reads too: C
-- copies the bytes a read returns to the module's stage, after its checks,
-- and the string is made from there.

return function(avxbuf, c)
  local MT = getmetatable(avxbuf.new(0))
  local KEY = cast(uptr, c.cookie_key)
  local c_put_staged = cast("int (*)(avxbuf_buffer *, avxbuf_stage *, int32_t, int)", c.put)
  local c_pack_staged = cast("double (*)(avxbuf_buffer *, avxbuf_stage *, int32_t, const char *, size_t, int)", c.pack)
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
  if ffi.sizeof("int64_t") ~= layout.len_size or ffi.sizeof("int32_t") ~= layout.gen_size
     or ffi.offsetof("avxbuf_stage", "piece") ~= layout.stage_piece or layout.stage_pieces ~= 64
     or ffi.offsetof("avxbuf_stage", "value") ~= layout.stage_value
     or layout.stage_value ~= layout.stage_piece + 64 * layout.piece_size
     or ffi.offsetof("avxbuf_stage", "bytes") ~= layout.stage_bytes
     or layout.stage_bytes ~= layout.stage_value + 64 * layout.value_size
     or ffi.sizeof("avxbuf_stage") ~= layout.stage_size or ffi.offsetof("avxbuf_small", "fill") ~= layout.small_fill
     or ffi.offsetof("avxbuf_small", "copy_upto") ~= layout.small_copy_upto
     or ffi.offsetof("avxbuf_small", "fill_upto") ~= layout.small_fill_upto then
    error("avxbuf.ffi: the buffer's field sizes do not match this avxbuf.so")
  end
  -- The stage. A read takes st.stamp + 1 before C stages and keeps its
  -- string only if the stamp is that after ffi.string; else a finalizer's
  -- read staged in between, and the C function takes the call. A read
  -- takes st into a local once: a trace holds an upvalue never assigned as
  -- a constant, so after debug.setupvalue a trace and the interpreter it
  -- exits to would see two stages in one call (C staging into one, the
  -- string read from the other's, or from nil: a crash in ffi.string).
  local st = cast("avxbuf_stage *", c.stage)

  -- src/lua/lmodule.h's testbuffer: the metatable is only a filter (anything can
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

  -- copy, zero and fill, two tiers. The plain form (plain_copy,
  -- plain_fill): n bytes, 1 <= n <= what the plan's small kernel serves
  -- (src/core/dispatch.h's small calls), to and from ranges within their
  -- bytes, from a string or another buffer: ffi.lua calls that kernel
  -- itself, with no pick and no checks in C. Every other form (defaults,
  -- larger sizes, a copy within one buffer, anything C must word an error
  -- for) is one call to C's checking entries (c_copy_from_*, c_fill_args),
  -- which check the arguments on the buffers as they are, move with the
  -- kernel the plan picks and step the generation, or refuse (the C
  -- function then raises); nothing of a buffer is read for them but the
  -- generation, and the entry moved exactly when it is one step on after
  -- the call (src/luajit/lluajit.c). true when done.
  --
  -- Why the plain form's move is safe where issue 44's inline moves were
  -- not (docs/reliability.md): a pointer made in Lua and used after a
  -- check is stale when something ran in between that freed or moved the
  -- bytes, and a finalizer runs at any allocation of the interpreter (a
  -- boxed pointer or 64-bit field) and at any trace exit, including a
  -- guard's exit on its passing side (a trace recorded where it failed).
  -- So the generations are read first, the pointers made next, and the
  -- generations read again last, whose answer reaches the move as its
  -- length (0 when either changed) through bit operations alone: between
  -- that read and the move nothing allocates (interpreted: int32 loads,
  -- numbers, a call of a cdata function with pointer and number
  -- arguments) and nothing can exit (compiled: no guard; spec/jit_spec.lua
  -- reads the trace). Then the generation steps, where the move was made.

  -- -1 when x is 0, else 0.
  local function unchanged(x)
    x = bor(x, lshift(x, 1))
    x = bor(x, lshift(x, 2))
    x = bor(x, lshift(x, 4))
    x = bor(x, lshift(x, 8))
    return bnot(arshift(bor(x, lshift(x, 16)), 31))
  end
  -- The plan's small calls, read where a buffer of this module (one whose
  -- module is the one these are of, which it keeps alive) is written.
  local small = cast("avxbuf_small *", c.small)
  local MODULE = cast("void *", c.module)
  local bytes_of = ffi.typeof("const uint8_t *")

  local function plain_copy(d, di, src, si, n)   -- d: a buffer, di: index()
    if not (index(si) and index(n) and di >= 1 and si >= 1 and n >= 1) then return false end
    local g, s = d.gen, d   -- (a string's bytes have no generation: d's stands in)
    local from_string = type(src) == "string"
    if not from_string then
      s = as_buffer(src)
      if s == nil or s == d then return false end
    end
    local gs, sm = s.gen, small
    if d.module ~= MODULE or n > sm.copy_upto or di + n - 1 > d.len then return false end
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
    fn(p, q, band(n, m))
    d.gen = tobit(d.gen - m)
    return m ~= 0
  end

  local function plain_fill(b, byte, i, n)   -- b: a buffer, byte: index()
    if not (index(i) and index(n) and i >= 1 and n >= 1 and byte >= 0 and byte <= 255) then return false end
    local g, sm = b.gen, small
    if b.module ~= MODULE or n > sm.fill_upto or i + n - 1 > b.len then return false end
    local fn, p = sm.fill, b.data + (i - 1)
    local m = unchanged(bxor(b.gen, g))
    fn(p, byte, band(n, m))
    b.gen = tobit(b.gen - m)
    return m ~= 0
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

  -- buf:put of up to 64 strings and buffers: the pieces staged (a string,
  -- or a buffer with the generation and length it has: no pointer into a
  -- buffer is made here), then one call (c_put_staged) that checks the
  -- stage's stamp and each piece buffer, grows the buffer by C's rule and
  -- moves them all with the kernel the plan picks. The stamp, set before
  -- the first piece is staged, tells C whether a finalizer's read or put
  -- staged in between. Anything else (other types, more pieces, a
  -- refusal) is the C function's.
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
  -- eight at a time, unrolled (a trace sees each item's type and width),
  -- the rest by a tail call, which the JIT unrolls too: a loop over
  -- select(k, ...) became a trace of its own, left and entered again on
  -- every put. (A side trace that starts inside this and reaches `...` is
  -- not compiled: NYI in 2.1.0-beta3; the caller's loop trace is.)
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
  local function fast_put(buf, n, ...)
    local b = as_buffer(buf)
    if b == nil or n > 64 then return false end
    local k = st.stamp + 1
    st.stamp = k
    return stage_all(staged, 0, n, ...) and c_put_staged(b, st, k, n) == 1
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
  -- buf:unpack: code of its own per format (lua/avxbuf/ffi_format.lua),
  -- for up to 64 formats at a time (the 65th starts the list afresh: a
  -- program with more hot formats than that makes some again, each costing
  -- a compile: docs/runs/figures-once-cited.md); formats it does not handle go to the C
  -- function every time.
  local format_env = { cast = cast, tonumber = tonumber, band = band, bswap = bit.bswap, rshift = bit.rshift,
                       arshift = bit.arshift, ldexp = math.ldexp, fstring = ffi.string, as_buffer = as_buffer,
                       index = index, consume = c_consume, c_read = c_read, st = st }
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
  -- buf:pack(fmt, v...), appending up to 64 numbers and strings: the values
  -- staged (as put's pieces), then one call (c_pack_staged) that checks
  -- them as string.pack would, with C's format (src/lua/lpack.c), grows and
  -- writes. Anything it would convert or refuse, and the index form, is the
  -- C function's.
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
  methods.pack = function(buf, fmt, ...)
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

  -- Reads: C stages the bytes (c_read, c_get_staged, c_line) and the
  -- string is made from the stage, kept if the stamp says no other read
  -- staged since (see st above); what searches runs in C (c_search,
  -- c_split_step). Only integer arguments in the plain cases are taken
  -- here.
  local fstring = ffi.string
  local c_byte, c_find = methods.byte, methods.find
  local c_get, c_skip, c_lines, c_split = methods.get, methods.skip, methods.lines, methods.split
  -- buf:tostring(i, j) with both given, 1 <= i <= j: those bytes, when C
  -- finds them all in the buffer. Every other form (defaults, negative or
  -- empty ranges) is the C function's, which owns string.sub's rules.
  local c_tostring = methods.tostring
  methods.tostring = function(buf, i, j)
    local b = as_buffer(buf)
    if b ~= nil and index(i) and index(j) and i >= 1 and i <= j then
      local sg = st   -- one stage throughout (see st)
      local k, n = sg.stamp + 1, j - i + 1
      c_read(b, sg, i - 1, n)
      if sg.stamp == k then   -- staged (src/luajit/lluajit.c): n bytes, within the stage
        local s = fstring(sg.bytes, n)
        if sg.stamp == k then return s end
      end
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
  -- get(n): the bytes C's rule takes (c_get_staged; n or 0: a placeholder
  -- where the flag before it says n is absent), consumed from the buffer
  -- as it is once the string exists, as the C function does.
  methods.get = function(buf, n)
    local b = as_buffer(buf)
    if b ~= nil and (n == nil or index(n)) then
      local sg = st
      local k = sg.stamp + 1
      local got = c_get_staged(b, sg, n ~= nil, n or 0)
      if got >= 0 then
        local s = fstring(sg.bytes, got)
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
  -- there by the iterator; C's iterators (src/lua/lsplit.c) refuse it too.
  -- Each step hands a buffer that has grown past LONGEST over to C's
  -- iterator first, so that no offset it stores is past index().
  -- Where an iteration starts: C's offset for init (c_start), or for no
  -- init the offset C exports (START: a call, interpreted, as the
  -- iterator's making is, cost more than a short split's pieces).
  local function start_of(b, init)
    if init == nil then return START end
    return c_start(b, true, init)
  end
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
        local s = fstring(sg.bytes, n)
        if sg.stamp == k then
          pos = pos + n + newline
          return s
        end
        r = -2
      end
      if r == -1 then
        pos = -1
        return
      end
      c_iter = c_lines(buf, pos + 1)
      return c_iter()
    end
  end
  -- split: the separators a batch at a time from c_split_step (one
  -- call), each piece then a read of the batch, which holds while the
  -- buffer's generation is the one it was found at (checked every step:
  -- otherwise found again from the position; every write of bytes steps
  -- it, src/core/buffer.h's buffer_wrote). One batch serves every
  -- iterator, held by the one whose id is `owner` (a batch of each cost
  -- an interpreted ffi.new at every split, more than a short split's
  -- pieces); another's turn finds it again from its position. The batch's
  -- indices are upvalues like the rest: checked before it is read, against
  -- what the batch itself holds (its size, a constant in the trace), so
  -- that no replaced upvalue can take a read past it. C's batch size
  -- (SPLIT_BATCH_MAX) offsets, and the last piece's end:
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
  -- iterator, and every later split's pieces would leave it at each step
  -- through a chain of side traces (the guard on the closure).
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
