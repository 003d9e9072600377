-- A Lua analog of SPECjvm2008 xml.transform: deterministic XML-like documents
-- of several shapes (3-160 KB) are parsed, transformed by ten template-like
-- rule sets, and serialised; the output is folded into a rolling hash
-- (crc = crc * 33 + byte). The serialiser has two back ends: avxbuf buffers
-- (assembled with buf:put, archived with avxbuf.copy, recycled with
-- avxbuf.zero, as a JVM zeroes new objects) and a pure-Lua reference
-- (table.concat), which must agree.
local M = {}

---------------------------------------------------------------------------
-- Documents
---------------------------------------------------------------------------

local rng = require("harness").rng   -- the same documents every run

local WORDS = { "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india",
                "juliet", "kilo", "lima", "mike", "november", "oscar", "papa", "quebec", "romeo",
                "sierra", "tango", "uniform", "victor", "whiskey", "x-ray", "yankee", "zulu",
                "<tag>", "a&b", "\"quoted\"", "x<y", "fish & chips" }

local function words(r, n)
  local t = {}
  for i = 1, n do t[i] = WORDS[r(#WORDS) + 1] end
  return table.concat(t, " ")
end

local function esc(s)
  return (s:gsub("[&<>\"]", { ["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;", ['"'] = "&quot;" }))
end

-- Each shape: an opening and a closing tag around records, generated until
-- the document reaches about `size` bytes.
local SHAPES = {}

local function generate(shape, r, t, size)
  t[#t + 1] = shape.open
  local len, id = 0, 0
  while len < size do
    id = id + 1
    local s = shape.record(r, id)
    t[#t + 1] = s
    len = len + #s
  end
  t[#t + 1] = shape.close
end

SHAPES.catalog = { open = '<catalog vendor="avxbuf">', close = '</catalog>', record = function(r, id)
  local s = string.format('<product id="p%d" price="%d.%02d" stock="%d" category="%s">'
    .. '<name>%s</name><description>%s</description><tags>', id, r(500), r(100), r(90),
    WORDS[r(8) + 1], esc(words(r, 3)), esc(words(r, 12 + r(20))))
  for _ = 1, r(4) + 1 do s = s .. '<tag>' .. esc(WORDS[r(#WORDS) + 1]) .. '</tag>' end
  return s .. '</tags></product>'
end }

SHAPES.orders = { open = '<orders region="eu">', close = '</orders>', record = function(r, id)
  local items = {}
  for k = 1, r(6) + 1 do
    items[k] = string.format('<item sku="s%d" qty="%d" unit="%d"/>', r(1000), r(9) + 1, r(300) + 1)
  end
  return string.format('<order id="o%d" customer="c%d" status="%s"><note>%s</note>%s</order>',
    id, r(200), ({ "open", "paid", "shipped", "cancelled" })[r(4) + 1], esc(words(r, r(10) + 2)),
    table.concat(items))
end }

local function section(r, depth)
  local s = { '<section title="' .. esc(words(r, 3)) .. '">' }
  for _ = 1, r(3) + 1 do
    s[#s + 1] = '<para>' .. esc(words(r, 20 + r(30))) .. ' <em>' .. esc(words(r, 2))
      .. '</em> ' .. esc(words(r, 10)) .. '</para>'
  end
  if depth < 3 then
    for _ = 1, r(3) do s[#s + 1] = section(r, depth + 1) end
  end
  s[#s + 1] = '</section>'
  return table.concat(s)
end

SHAPES.article = { open = '<article lang="en">', close = '</article>',
                   record = function(r) return section(r, 1) end }

SHAPES.inventory = { open = '<inventory>', close = '</inventory>', record = function(r, id)
  local function bin()
    return string.format('<bin code="b%d" weight="%d" fragile="%s">%s</bin>', r(9999), r(80),
                         r(2) == 0 and "yes" or "no", esc(words(r, 4)))
  end
  return string.format('<warehouse id="w%d" city="%s"><aisle n="%d"><shelf n="%d">', id,
    WORDS[r(26) + 1], r(40), r(12)) .. bin() .. bin() .. '</shelf></aisle></warehouse>'
end }

SHAPES.feed = { open = '<feed><!-- generated -->', close = '</feed>', record = function(r, id)
  return string.format('<entry id="e%d" score="%d"><author>%s</author><summary>%s</summary>'
    .. '<link href="https://example.invalid/%d?a=1&amp;b=2"/></entry>', id, r(100),
    esc(words(r, 2)), esc(words(r, 25 + r(25))), id)
end }

M.SHAPE_NAMES = { "catalog", "orders", "article", "inventory", "feed" }

-- The document set: every shape at a spread of sizes between 3 and 160 KB.
function M.documents(quick)
  local sizes = quick and { 3000, 20000, 60000 } or { 3000, 12000, 40000, 90000, 160000 }
  local docs = {}
  for i, shape in ipairs(M.SHAPE_NAMES) do
    for j, size in ipairs(sizes) do
      local t = { '<?xml version="1.0"?>' }
      generate(SHAPES[shape], rng(i * 7919 + j), t, size)
      docs[#docs + 1] = { name = shape .. "-" .. size, xml = table.concat(t) }
    end
  end
  return docs
end

---------------------------------------------------------------------------
-- Parser: elements, attributes, text, the five predefined entities,
-- comments and the XML declaration. Nodes: {tag, attrs, order, kids, parent};
-- text nodes are strings.
---------------------------------------------------------------------------

local ENTITIES = { amp = "&", lt = "<", gt = ">", quot = '"', apos = "'" }
local function unescape(s)
  if not s:find("&", 1, true) then return s end
  return (s:gsub("&(%a+);", ENTITIES))
end

function M.parse(xml)
  local root = { tag = "#document", attrs = {}, order = {}, kids = {} }
  local node, pos = root, 1
  while true do
    local lt = xml:find("<", pos, true)
    if not lt then break end
    if lt > pos then
      local text = xml:sub(pos, lt - 1)
      if text:find("%S") then node.kids[#node.kids + 1] = unescape(text) end
    end
    local c = xml:sub(lt + 1, lt + 1)
    if c == "?" then
      pos = xml:find("?>", lt, true) + 2
    elseif c == "!" then
      pos = xml:find("-->", lt, true) + 3
    elseif c == "/" then
      local gt = xml:find(">", lt, true)
      node = node.parent
      pos = gt + 1
    else
      local gt = xml:find(">", lt, true)
      local body = xml:sub(lt + 1, gt - 1)
      local closed = body:sub(-1) == "/"
      if closed then body = body:sub(1, -2) end
      local tag = body:match("^([%w:_%-%.]+)")
      local el = { tag = tag, attrs = {}, order = {}, kids = {}, parent = node }
      for k, v in body:gmatch('([%w:_%-]+)="([^"]*)"') do
        el.attrs[k] = unescape(v)
        el.order[#el.order + 1] = k
      end
      node.kids[#node.kids + 1] = el
      if not closed then node = el end
      pos = gt + 1
    end
  end
  return root
end

---------------------------------------------------------------------------
-- Output: a writer collects small pieces and flushes them in chunks.
---------------------------------------------------------------------------

local FLUSH_PIECES = 64

-- Pure-Lua reference writer.
local LuaWriter = {}
LuaWriter.__index = LuaWriter

function LuaWriter.new() return setmetatable({ pieces = {}, chunks = {} }, LuaWriter) end

function LuaWriter:put(s)
  local p = self.pieces
  p[#p + 1] = s
  if #p >= FLUSH_PIECES then self:flush() end
end

function LuaWriter:flush()
  if #self.pieces > 0 then
    self.chunks[#self.chunks + 1] = table.concat(self.pieces)
    self.pieces = {}
  end
end

function LuaWriter:result()
  self:flush()
  return table.concat(self.chunks)
end

-- avxbuf writer: pieces are appended to a recycled output buffer with one
-- buf:put per batch; finished outputs are copied into an archive buffer,
-- and the output buffer is zeroed and emptied for the next writer (its
-- capacity stays).
local BufWriter = {}
BufWriter.__index = BufWriter
local unpack = table.unpack or rawget(_G, "unpack")   -- Lua 5.1 and LuaJIT

function M.buffer_pool(avxbuf, capacity)
  return { avxbuf = avxbuf, capacity = capacity, free = {} }
end

local function take(pool)
  return table.remove(pool.free) or pool.avxbuf.new(pool.capacity):resize(0)
end

local function give(pool, b)
  -- Zeroed on return, as a JVM zeroes memory before handing out objects.
  pool.avxbuf.zero(b)
  pool.free[#pool.free + 1] = b:resize(0)
end

function BufWriter.new(pool)
  return setmetatable({ pool = pool, avxbuf = pool.avxbuf, pieces = {}, buf = take(pool) }, BufWriter)
end

BufWriter.put = LuaWriter.put

function BufWriter:flush()
  if #self.pieces == 0 then return end
  self.buf:put(unpack(self.pieces))
  self.pieces = {}
end

-- Archives the output (a large copy), recycles the buffer, returns the bytes.
function BufWriter:result(archive)
  self:flush()
  local buf = self.buf
  if archive and #archive >= #buf then self.avxbuf.copy(archive, 1, buf) end
  local out = buf:tostring()
  give(self.pool, buf)
  self.buf = nil
  return out
end

---------------------------------------------------------------------------
-- Templates: ten rule sets over the tree.
---------------------------------------------------------------------------

local function attrs_of(el, rename)
  local t = {}
  for _, k in ipairs(el.order) do
    t[#t + 1] = ' ' .. (rename and rename[k] or k) .. '="' .. esc(el.attrs[k]) .. '"'
  end
  return table.concat(t)
end

-- <tag attrs>, then go(k) for the contents, then </tag>.
local function element(w, tag, attrs, go, k)
  w:put('<' .. tag .. attrs .. '>')
  go(k)
  w:put('</' .. tag .. '>')
end

local function text_of(el)
  local t = {}
  local function walk(n)
    for _, k in ipairs(n.kids) do
      if type(k) == "string" then t[#t + 1] = k else walk(k) end
    end
  end
  walk(el)
  return table.concat(t, " ")
end

local function elements(el)
  local t = {}
  for _, k in ipairs(el.kids) do
    if type(k) == "table" then t[#t + 1] = k end
  end
  return t
end

local RENAME = { product = "item", order = "purchase", section = "div", para = "p", entry = "post",
                 warehouse = "site", name = "title", price = "cost", id = "key" }

local TEMPLATES = {}

-- 1. identity with renamed elements and attributes
TEMPLATES[1] = function(root, w)
  local function go(n)
    for _, k in ipairs(n.kids) do
      if type(k) == "string" then w:put(esc(k))
      else element(w, RENAME[k.tag] or k.tag, attrs_of(k, RENAME), go, k) end
    end
  end
  go(root)
end

-- 2. reorder: children sorted by tag, then by their first attribute
TEMPLATES[2] = function(root, w)
  local function go(n)
    local kids = elements(n)
    table.sort(kids, function(a, b)
      if a.tag ~= b.tag then return a.tag < b.tag end
      local ka, kb = a.attrs[a.order[1] or ""] or "", b.attrs[b.order[1] or ""] or ""
      return ka < kb
    end)
    for _, k in ipairs(kids) do element(w, k.tag, attrs_of(k), go, k) end
  end
  go(root)
end

-- 3. computed attributes: child count, sum of numbers, concatenated ids
TEMPLATES[3] = function(root, w)
  local function go(n, depth)
    for _, k in ipairs(elements(n)) do
      local sum, ids = 0, {}
      for _, c in ipairs(elements(k)) do
        for _, a in ipairs(c.order) do
          local v = tonumber(c.attrs[a])
          if v then sum = sum + v end
        end
        ids[#ids + 1] = c.attrs.id or c.attrs.sku or c.tag
      end
      w:put(string.format('<%s depth="%d" children="%d" sum="%.2f" ids="%s"/>', k.tag, depth,
                          #k.kids, sum, esc(table.concat(ids, ","))))
      go(k, depth + 1)
    end
  end
  go(root, 0)
end

-- 4. text only, escaped, one line per element with text
TEMPLATES[4] = function(root, w)
  local function go(n)
    for _, k in ipairs(n.kids) do
      if type(k) == "string" then w:put(esc(k)); w:put("\n") else go(k) end
    end
  end
  go(root)
end

-- 5. aggregate: a histogram of element names and attribute values
TEMPLATES[5] = function(root, w)
  local tags, values = {}, {}
  local function go(n)
    for _, k in ipairs(elements(n)) do
      tags[k.tag] = (tags[k.tag] or 0) + 1
      for _, a in ipairs(k.order) do
        local key = a .. "=" .. k.attrs[a]:sub(1, 3)
        values[key] = (values[key] or 0) + 1
      end
      go(k)
    end
  end
  go(root)
  for _, map in ipairs { tags, values } do
    local keys = {}
    for key in pairs(map) do keys[#keys + 1] = key end
    table.sort(keys)
    for _, key in ipairs(keys) do w:put('<count of="' .. esc(key) .. '">' .. map[key] .. '</count>') end
  end
end

-- 6. recursive named template: numbered outline (1, 1.2, 1.2.3 ...)
TEMPLATES[6] = function(root, w)
  local function outline(n, prefix)
    local i = 0
    for _, k in ipairs(elements(n)) do
      i = i + 1
      local number = prefix == "" and tostring(i) or prefix .. "." .. i
      local title = k.attrs.title or k.attrs.id or k.attrs.code or k.tag
      w:put(number .. " " .. esc(title) .. "\n")
      outline(k, number)
    end
  end
  outline(root, "")
end

-- 7. choose/if: classify records by their attributes
TEMPLATES[7] = function(root, w)
  local function go(n)
    for _, k in ipairs(elements(n)) do
      local class
      local price, qty = tonumber(k.attrs.price or k.attrs.unit), tonumber(k.attrs.qty or k.attrs.stock)
      if price and price > 250 then class = "expensive"
      elseif qty and qty < 3 then class = "scarce"
      elseif k.attrs.status == "cancelled" or k.attrs.fragile == "yes" then class = "attention"
      else class = "normal" end
      element(w, k.tag, ' class="' .. class .. '"', go, k)
    end
  end
  go(root)
end

-- 8. axes: every element with its ancestor path and position among siblings
TEMPLATES[8] = function(root, w)
  local function go(n, path)
    local pos = {}
    for _, k in ipairs(elements(n)) do
      pos[k.tag] = (pos[k.tag] or 0) + 1
      local p = path .. "/" .. k.tag .. "[" .. pos[k.tag] .. "]"
      w:put(p)
      w:put("\n")
      go(k, p)
    end
  end
  go(root, "")
end

-- 9. flatten records into delimited lines
TEMPLATES[9] = function(root, w)
  local function go(n)
    for _, k in ipairs(elements(n)) do
      if #k.order > 0 then
        local cells = { k.tag }
        for _, a in ipairs(k.order) do cells[#cells + 1] = k.attrs[a] end
        cells[#cells + 1] = text_of(k):sub(1, 40)
        w:put(table.concat(cells, ";"):gsub("[\n;]", " ") .. "\n")
      end
      go(k)
    end
  end
  go(root)
end

-- 10. render records as an HTML table, attribute templates and concat()
TEMPLATES[10] = function(root, w)
  w:put('<table>')
  local function go(n)
    for _, k in ipairs(elements(n)) do
      if k.attrs.id or k.attrs.code then
        w:put('<tr id="row-' .. esc(k.attrs.id or k.attrs.code) .. '"><th>' .. k.tag .. '</th>')
        for _, a in ipairs(k.order) do w:put('<td title="' .. a .. '">' .. esc(k.attrs[a]) .. '</td>') end
        w:put('<td>' .. esc(text_of(k):sub(1, 60)) .. '</td></tr>')
      end
      go(k)
    end
  end
  go(root)
  w:put('</table>')
end

M.TEMPLATE_COUNT = #TEMPLATES

---------------------------------------------------------------------------
-- Running it
---------------------------------------------------------------------------

-- Rolling hash over a string: crc = crc * 33 + byte (mod 2^32).
function M.fold(crc, s)
  local byte, M32 = string.byte, 4294967296
  for i = 1, #s, 8 do
    local a, b, c, d, e, f, g, h = byte(s, i, i + 7)
    crc = (crc * 33 + a) % M32
    if b then crc = (crc * 33 + b) % M32 end
    if c then crc = (crc * 33 + c) % M32 end
    if d then crc = (crc * 33 + d) % M32 end
    if e then crc = (crc * 33 + e) % M32 end
    if f then crc = (crc * 33 + f) % M32 end
    if g then crc = (crc * 33 + g) % M32 end
    if h then crc = (crc * 33 + h) % M32 end
  end
  return crc
end

-- One document: parse it, apply every template, fold every output into
-- the hash; -> crc, bytes, carried on from those given.
local function run_document(doc, new_writer, archive, crc, bytes)
  local tree = M.parse(doc.xml)
  for t = 1, #TEMPLATES do
    local w = new_writer()
    TEMPLATES[t](tree, w)
    local out = w:result(archive)
    bytes = bytes + #out
    crc = M.fold(crc, out)
  end
  return crc, bytes
end

-- One operation: every document in turn. new_writer() gives a writer per
-- output; after(), if given, runs after each document.
function M.run(docs, new_writer, archive, after)
  local crc, bytes = 0, 0
  for _, doc in ipairs(docs) do
    crc, bytes = run_document(doc, new_writer, archive, crc, bytes)
    if after then after() end
  end
  return crc, bytes
end

-- The order in which n rows run each block of documents (bench/transform.lua
-- runs a block per document, every row in turn): block_orders(n, seed)
-- returns order, and order(b), called for b = 1, 2, ... in turn, the row
-- numbers of block b by slot. Every row holds every slot once every n
-- blocks (a Latin square: the order turned by one slot from block to
-- block), and the square's rows are shuffled anew each n blocks by the
-- seeded generator, so that no row always follows the same one.
function M.block_orders(n, seed)
  local r, cycle = rng(seed), {}
  return function(b)
    local t = (b - 1) % n
    if t == 0 then
      for i = 1, n do cycle[i] = i end
      for i = n, 2, -1 do
        local j = r(i) + 1
        cycle[i], cycle[j] = cycle[j], cycle[i]
      end
    end
    local order = {}
    for s = 1, n do order[s] = cycle[(s - 1 + t) % n + 1] end
    return order
  end
end

-- The pure-Lua reference path.
function M.reference(docs)
  return M.run(docs, LuaWriter.new)
end

-- The avxbuf path: returns a function running one operation (with after
-- as M.run's), and one running document j alone, carrying the hash on:
-- document(j, crc, bytes) -> crc, bytes (0, 0 to start); called for j = 1
-- to #docs in order it gives the operation's checksum (bench/transform.lua
-- interleaves its rows document by document this way).
function M.with_avxbuf(avxbuf, docs, after)
  local pool = M.buffer_pool(avxbuf, 64 * 1024)
  local archive = avxbuf.new(1024 * 1024)
  local function new_writer() return BufWriter.new(pool) end
  return function() return M.run(docs, new_writer, archive, after) end,
         function(j, crc, bytes) return run_document(docs[j], new_writer, archive, crc, bytes) end
end

return M
