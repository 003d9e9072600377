-- A small SVG line chart: y against x on a log2 x axis, one line per series,
-- one panel per chart, stacked. No dependencies.
local M = {}

local COLOURS = { "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
                  "#7f7f7f", "#bcbd22", "#17becf", "#000000", "#aec7e8", "#ffbb78", "#98df8a" }

local function esc(s)
  return (tostring(s):gsub("[<>&\"]", { ["<"] = "&lt;", [">"] = "&gt;", ["&"] = "&amp;", ['"'] = "&quot;" }))
end

local function label_size(n)
  if n >= 1 << 20 then return string.format("%gM", n / (1 << 20)) end
  if n >= 1 << 10 then return string.format("%gK", n / (1 << 10)) end
  return string.format("%d", n)
end

-- charts: list of {title = , series = {{name = , points = {{x, y}, ...}}, ...}}
function M.render(charts, opts)
  opts = opts or {}
  local W, H, L, R, T, B = 900, 320, 60, 150, 30, 40
  local out = { string.format('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
    .. 'font-family="sans-serif" font-size="11">', W, H * #charts + 20) }
  local function add(fmt, ...) out[#out + 1] = string.format(fmt, ...) end
  add('<rect width="100%%" height="100%%" fill="white"/>')
  if opts.caption then add('<text x="%d" y="%d">%s</text>', L, H * #charts + 12, esc(opts.caption)) end
  for c, chart in ipairs(charts) do
    local oy = (c - 1) * H
    local xmin, xmax, ymax = math.huge, 0, 0
    for _, s in ipairs(chart.series) do
      for _, p in ipairs(s.points) do
        xmin, xmax, ymax = math.min(xmin, p[1]), math.max(xmax, p[1]), math.max(ymax, p[2])
      end
    end
    if ymax == 0 then ymax = 1 end
    local lx0, lx1 = math.log(xmin, 2), math.log(xmax, 2)
    if lx1 == lx0 then lx1 = lx0 + 1 end
    local pw, ph = W - L - R, H - T - B
    local function px(x) return L + (math.log(x, 2) - lx0) / (lx1 - lx0) * pw end
    local function py(y) return oy + T + ph - y / ymax * ph end
    add('<text x="%d" y="%d" font-size="13" font-weight="bold">%s</text>', L, oy + 18, esc(chart.title))
    add('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#999"/>', L, oy + T, pw, ph)
    for i = 0, 4 do
      local y = ymax * i / 4
      add('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#eee"/>', L, L + pw, py(y), py(y))
      add('<text x="%d" y="%.1f" text-anchor="end">%.0f</text>', L - 4, py(y) + 4, y)
    end
    for e = math.ceil(lx0), math.floor(lx1), 2 do
      local x = 2 ^ e
      add('<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="#eee"/>', px(x), px(x), oy + T, oy + T + ph)
      add('<text x="%.1f" y="%d" text-anchor="middle">%s</text>', px(x), oy + T + ph + 14, label_size(x))
    end
    add('<text x="%d" y="%d" transform="rotate(-90 %d %d)" text-anchor="middle">%s</text>',
        14, oy + T + ph // 2, 14, oy + T + ph // 2, esc(chart.ylabel or "GB/s"))
    add('<text x="%d" y="%d" text-anchor="middle">%s</text>', L + pw // 2, oy + H - 4,
        esc(chart.xlabel or "size (bytes, log scale)"))
    for i, s in ipairs(chart.series) do
      local colour = COLOURS[(i - 1) % #COLOURS + 1]
      local pts = {}
      for _, p in ipairs(s.points) do pts[#pts + 1] = string.format("%.1f,%.1f", px(p[1]), py(p[2])) end
      add('<polyline fill="none" stroke="%s" stroke-width="%s" points="%s"/>', colour,
          s.bold and "2.5" or "1.2", table.concat(pts, " "))
      add('<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="%s" stroke-width="2"/>', L + pw + 10,
          L + pw + 30, oy + T + 8 + 14 * (i - 1), oy + T + 8 + 14 * (i - 1), colour)
      add('<text x="%d" y="%d">%s</text>', L + pw + 34, oy + T + 12 + 14 * (i - 1), esc(s.name))
    end
  end
  add('</svg>')
  return table.concat(out, "\n")
end

return M
