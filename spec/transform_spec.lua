-- The transform workload: every kernel produces the reference output, and
-- bench/transform.lua --quick completes with the documented JSON.
local lu = require "luaunit"
local h = require "helpers"
local avxbuf = h.avxbuf
local transform = require "transform"

TestTransform = {}
TestTransform.tearDown = avxbuf.reset

function TestTransform.test_parser_round_trips_text_and_attributes()
  local tree = transform.parse('<?xml version="1.0"?><a x="1&amp;2"><!-- c --><b>t &lt;u&gt;</b><c/></a>')
  local a = tree.kids[1]
  lu.assertEquals(a.tag, "a")
  lu.assertEquals(a.attrs.x, "1&2")
  lu.assertEquals(a.kids[1].tag, "b")
  lu.assertEquals(a.kids[1].kids[1], "t <u>")
  lu.assertEquals(a.kids[2].tag, "c")
  lu.assertEquals(#a.kids[2].kids, 0)
end

function TestTransform.test_fold_is_the_rolling_hash()
  local crc = 0
  for _, b in ipairs { ("hello world, a rolling hash"):byte(1, -1) } do crc = (crc * 33 + b) % 2 ^ 32 end
  lu.assertEquals(string.format("%.0f", transform.fold(0, "hello world, a rolling hash")),
                  string.format("%.0f", crc))
end

function TestTransform.test_every_kernel_matches_the_reference()
  local docs = transform.documents(true)
  if h.LIGHT then docs = { docs[2], docs[6] } end
  local want, bytes = transform.reference(docs)
  lu.assertTrue(bytes > 10000)
  for _, cfg in ipairs(h.kernel_configs()) do
    h.use(cfg.knobs)
    local got = transform.with_avxbuf(avxbuf, docs)()
    lu.assertEquals(string.format("%08x", got), string.format("%08x", want), cfg.name)
  end
end

function TestTransform.test_bench_quick_json()
  if h.LIGHT then lu.skip("the benchmark runs natively in a child; nothing for valgrind to see") end
  h.needs_children()
  if _VERSION ~= "Lua 5.4" or jit then lu.skip("the benchmarks are Lua 5.4 programs") end
  local json = os.tmpname()
  local out, status = h.run_child({}, string.format(
    "arg = {[0] = 'bench/transform.lua', '--quick', '--rounds', '2', '--pin', 'none', '--json', %q} dofile(arg[0])",
    json))
  lu.assertEquals(status, 0, out)
  local f = assert(io.open(json))
  local r = require("cjson").decode(f:read("*a"))
  f:close()
  os.remove(json)
  lu.assertEquals(type(r.cpu.vendor), "string")
  lu.assertStrContains(r.cpu.reason, r.cpu.uarch)
  lu.assertEquals(#r.rows, 7)
  local names = {}
  for _, row in ipairs(r.rows) do names[#names + 1] = row.name end
  lu.assertEquals(names, { "default", "use_avx=2", "use_avx=3 max_vector_size=64", "use_avx=3 max_vector_size=32",
                           "use_avx=3 vector_zeroing=false", "use_avx=0", "kernel=libc" })
  for _, row in ipairs(r.rows) do
    if row.skipped then
      lu.assertStrContains(row.skipped, "needs")
    else
      lu.assertEquals(row.checksum, r.reference_checksum, row.name)
      lu.assertTrue(row.score > 0)
      lu.assertEquals(#row.scores, 2)
      lu.assertEquals(#row.wall, 2)
      lu.assertEquals(#row.cpu, 2)
      if row.name ~= "default" then
        -- two rounds can never be significant: the interval is unbounded
        lu.assertTrue(row.ratio > 0)
        lu.assertNil(row.ci)
        lu.assertFalse(row.significant)
      end
      for _, name in ipairs { "cycles", "ref-cycles", "instructions", "task-clock",
                              "core_power.lvl1_turbo_license" } do
        local e = row.counters[name]
        lu.assertTrue(e.value ~= nil or type(e.unavailable) == "string", name)
      end
    end
  end
  lu.assertStrContains(out, "# unavailable counters")
  lu.assertStrContains(out, "no difference this machine can detect")
  -- two rounds give no interval: the last line keeps the default, and says why
  lu.assertStrContains(out, "\nverdict: keep the default: too few rounds to tell rows apart")
  lu.assertEquals(r.verdict.row, "default")
end
