-- Every kernel this build can run, and the knobs that make avxbuf use it at
-- every size: for specs that test each kernel and benchmarks that time them.
-- Derived from avxbuf.kernels(), so a kernel added there is tested here.
local M = {}

-- Thresholds off, so one family serves every size.
local function only(knobs)
  local t = { avx3_threshold = 0, rep_movsb_threshold = 0, rep_stosb_threshold = 0,
              nontemporal_threshold = 0 }
  for k, v in pairs(knobs) do t[k] = v end
  return t
end

-- The kernel avxbuf should run for an operation at use_avx = level with
-- vectors of `bytes` ("temporal" or "streaming"): of those this CPU runs, the
-- one of the highest level up to `level`, the first listed among equals.
-- Written from docs/adding-a-kernel.md, not from the C, as the specs' oracle.
function M.family(avxbuf, level, bytes, role)
  local best
  for _, k in ipairs(avxbuf.kernels()) do
    if k.available and k.role == (role or "temporal") and k.vector_bits == 8 * bytes and k.use_avx <= level
       and (not best or k.use_avx > best.use_avx) then
      best = k
    end
  end
  return best and best.name
end

-- The string-instruction kernel this CPU runs for op ("copy", "fill"), or nil.
function M.string_kernel(avxbuf, op)
  for _, k in ipairs(avxbuf.kernels()) do
    if k.available and k.role == "string" and k.op == op then return k.name end
  end
end

-- {name, knobs, copy = kernel name for copies, fill = for zero/fill (n >= 1)}
function M.list(avxbuf)
  local list = {}
  local function add(name, knobs, copy, fill)
    list[#list + 1] = { name = name, knobs = knobs, copy = copy, fill = fill or copy }
  end
  for _, k in ipairs(avxbuf.kernels()) do
    if k.available then
      if k.use_avx then   -- a vector family: its level and width, streaming or not
        add(k.name, only { use_avx = k.use_avx, max_vector_size = math.floor(k.vector_bits / 8),
                           nontemporal_threshold = k.streaming and 1 or 0 }, k.name)
      end
    end
  end
  -- the string instructions serve one operation each, and are tested as a pair
  local movsb, stosb = M.string_kernel(avxbuf, "copy"), M.string_kernel(avxbuf, "fill")
  if movsb and stosb then
    add("rep", only { rep_movsb_threshold = 1, rep_stosb_threshold = 1 }, movsb, stosb)
  end
  for _, k in ipairs(avxbuf.kernels()) do
    if k.role == "libc" then add(k.name, { kernel = "libc" }, k.name) end
  end
  return list
end

return M
