-- buf:write and buf:read with Lua files: a multi-MiB round trip, ranges,
-- counts, end of file, and failures reported as io reports them with the
-- buffer left as it was.
local lu = require "luaunit"
local h = require "helpers"
local avxbuf = h.avxbuf

TestIO = {}

function TestIO.test_round_trip_of_a_few_mib()
  local data = h.long_pattern(3 * 1024 * 1024 + 123, 9)
  local f = io.tmpfile()
  lu.assertIs(avxbuf.from(data):write(f), f)
  f:seek("set")
  local b = avxbuf.from("head:")
  lu.assertEquals(b:read(f), #data)
  h.assert_bytes(b:tostring(), "head:" .. data, "read back")
  lu.assertEquals(b:read(f), 0, "0 at end of file")
  f:close()
end

-- Large reads that grow the buffer (the pages they fill mapped ahead:
-- src/lua/lio.c's populate), from a position within the file, with a
-- count, over the bytes from an index, and past the end.
function TestIO.test_large_reads_from_a_position_that_grow_the_buffer()
  local data = h.long_pattern(1024 * 1024 + 77, 4)
  local f = io.tmpfile()
  f:write(data)
  local b = avxbuf.from("0123456789")
  f:seek("set", 100003)
  lu.assertEquals(b:read(f, 300000, 4), 300000)
  h.assert_bytes(b:tostring(), "012" .. data:sub(100004, 400003), "over the bytes from an index")
  lu.assertEquals(b:read(f), #data - 400003)
  h.assert_bytes(b:tostring(), "012" .. data:sub(100004), "to the end")
  f:seek("set", #data + 5000)
  lu.assertEquals(b:read(f), 0, "past the end")
  f:close()
end

-- A regular file's bytes left are reserved in one step: the buffer ends
-- the size of the file (and one byte to meet its end), not a doubling
-- through the chunks a read of unknown length grows by (2 MiB for this).
function TestIO.test_a_regular_file_is_read_into_one_block_of_its_size()
  local data = h.long_pattern(1024 * 1024 + 77, 5)
  local f = io.tmpfile()
  f:write(data)
  f:seek("set")
  local b = avxbuf.new()
  lu.assertEquals(b:read(f), #data)
  h.assert_bytes(b:tostring(), data, "the file")
  lu.assertTrue(b:capacity() < #data + 4096, "capacity " .. b:capacity() .. " for " .. #data .. " bytes")
  f:seek("set", 1000)
  local c = avxbuf.from("abc")
  lu.assertEquals(c:read(f, 500000), 500000)
  h.assert_bytes(c:tostring(), "abc" .. data:sub(1001, 501000), "a count within the file")
  lu.assertTrue(c:capacity() < 500003 + 4096, "capacity " .. c:capacity() .. " for a count of 500000")
  f:close()
end

function TestIO.test_ranges_and_counts()
  local f = io.tmpfile()
  local b = avxbuf.from("0123456789")
  b:write(f, 3, 5)
  b:write(f, -2)
  b:write(f, 8, 2)   -- empty
  f:seek("set")
  lu.assertEquals(f:read("*a"), "23489")
  f:seek("set")
  local c = avxbuf.new()
  lu.assertEquals(c:read(f, 2), 2)
  lu.assertEquals(c:read(f, 0), 0)
  lu.assertEquals(c:read(f, 100), 3)
  lu.assertEquals(c:tostring(), "23489")
  f:close()
  -- a count far beyond the file costs no more than the file (2^29: within
  -- the 1 GiB a buffer may have on a 32-bit size_t)
  local g = io.tmpfile()
  g:write("xyz")
  g:seek("set")
  local d = avxbuf.new()
  lu.assertEquals(d:read(g, 2 ^ 29), 3)
  lu.assertEquals(d:tostring(), "xyz")
  g:close()
end

function TestIO.test_failures_come_back_as_io_reports_them()
  local path = os.tmpname()
  local w = assert(io.open(path, "w"))
  local b = avxbuf.from("keep")
  local count, msg, code = b:read(w)   -- reading a file opened for writing
  lu.assertNil(count)
  lu.assertEquals(type(msg), "string")
  lu.assertEquals(type(code), "number")
  lu.assertEquals(b:tostring(), "keep")
  w:close()
  local r = assert(io.open(path, "r"))
  local ok, wmsg, wcode = b:write(r)   -- writing to a file opened for reading
  lu.assertNil(ok)
  lu.assertEquals(type(wmsg), "string")
  lu.assertEquals(type(wcode), "number")
  r:close()
  os.remove(path)
  local closed = io.tmpfile()
  closed:close()
  local cok, err = pcall(b.write, b, closed)
  lu.assertFalse(cok)
  lu.assertStrContains(err, "closed file")
  lu.assertFalse(pcall(b.read, b, "not a file"))
  lu.assertFalse(pcall(b.read, b, io.stdin, -1))
end

function TestIO.test_stdout_takes_a_write()
  lu.assertIs(avxbuf.new():write(io.stdout), io.stdout)
end
