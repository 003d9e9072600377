#!/usr/bin/env bash
# make test-hosts: avxbuf inside real hosts on 127.0.0.1, nothing installed
# or started as a service: nginx with Debian's Lua module (OpenResty's
# LuaJIT) and HAProxy (Lua 5.3, a Lua state per thread), each under a
# bounded load (four curl processes at once, each one kept-alive connection,
# spec/hosts/lane.lua) whose every response is compared byte for byte with
# spec/hosts/expected.lua's page; then Neovim headless. Fails on
# a wrong response, a worker that died or logged an error, a worker's RSS
# that grew (beyond the bounds below), or a claim of docs/hosts.md that no
# longer holds.
#   tools/hosts/run.sh HOSTS_BUILD
# HOSTS_BUILD/luajit and HOSTS_BUILD/lua5.3 hold avxbuf built for each Lua,
# HOSTS_BUILD/nginx-lua the unpacked nginx Lua module (tools/deps.sh
# nginx-lua). AVXBUF_HOSTS_REQUESTS: the load per host (20000).
set -euo pipefail
hb=$(realpath "$1")
top=$(pwd)
requests=${AVXBUF_HOSTS_REQUESTS:-20000}
warmup=4000
lanes=4
# RSS bounds per process: over the whole load, which may still fill a worker
# that the warm-up reached little, and over its second half, which must be
# flat; a leak of one 200-byte buffer a request exceeds both (docs/hosts.md).
rss_kb=3072
rss_half_kb=1024
nl=$hb/nginx-lua
libdir=$(dirname "$(find "$nl/usr/lib" -name libluajit-5.1.so.2 | head -1)")
work=$(mktemp -d "${TMPDIR:-/tmp}/avxbuf-hosts.XXXXXX")
chmod 755 "$work"   # nginx's workers run as nobody
# Our children still running (hosts, load lanes not yet waited for): each
# PID is ours until waited for, so killing it reaches nothing else.
pids=()
lane_pids=()
ok=0

stop_all() {
  for pid in "${pids[@]}" "${lane_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}" "${lane_pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  pids=() lane_pids=()
}
finish() {
  stop_all
  if [ $ok = 1 ]; then rm -rf "$work"; else echo "test-hosts: FAILED; logs in $work" >&2; exit 1; fi
}
trap finish EXIT
trap 'exit 1' INT TERM HUP
fail() { echo "test-hosts: FAILED: $*" >&2; exit 1; }

# A port below the kernel's ephemeral range (a client's port there can take
# it between our look and nginx's bind) that no socket uses.
free_port() {
  local p low
  read -r low _ < /proc/sys/net/ipv4/ip_local_port_range
  for _ in $(seq 50); do
    p=$((low / 2 + RANDOM % (low / 2)))
    ss -Htan "sport = :$p" | grep -q . || { echo $p; return; }
  done
  fail "no free port"
}

wait_up() {   # URL PID
  for _ in $(seq 100); do
    curl -fsS -o /dev/null "$1" 2>/dev/null && return 0
    kill -0 "$2" 2>/dev/null || fail "$1: the host exited at start"
    sleep 0.1
  done
  fail "$1: no answer in 10 s"
}

rss() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }

# field INFO KEY: a line key=value of an /info answer
field() { sed -n "s/^$2=//p" <<<"$1" | head -1; }
expect() {   # WHAT GOT WANT
  [ "$2" = "$3" ] || fail "$1: got '$2', want '$3'"
  echo "  $1: $2"
}

# run_lanes NAME URL TOTAL: TOTAL requests in $lanes lanes at once, each
# lane's output compared with what it must be (cmp: the first wrong byte).
run_lanes() {
  local name=$1 url=$2 each=$(($3 / lanes)) lane pid t0 t1
  for lane in $(seq $lanes); do
    lua5.4 spec/hosts/lane.lua urls "$url" "$lane" $each > "$work/$name-$lane.curl"
    [ -f "$work/expected-$lane-$each" ] || lua5.4 spec/hosts/lane.lua expected "$lane" $each > "$work/expected-$lane-$each"
  done
  t0=$(date +%s%N)
  for lane in $(seq $lanes); do
    timeout 60 curl -sS -K "$work/$name-$lane.curl" > "$work/$name-$lane.out" 2> "$work/$name-$lane.err" &
    lane_pids+=($!)
  done
  for lane in $(seq $lanes); do
    pid=${lane_pids[0]}
    lane_pids=("${lane_pids[@]:1}")
    wait "$pid" || { cat "$work/$name-$lane.err"; fail "$name: curl lane $lane"; }
  done
  t1=$(date +%s%N)
  for lane in $(seq $lanes); do
    cmp "$work/$name-$lane.out" "$work/expected-$lane-$each" || fail "$name: lane $lane: a response not as expected"
    rm "$work/$name-$lane.out"
  done
  echo "  $name: $((each * lanes)) responses ($lanes lanes of $each, $(wc -c < "$work/expected-1-$each") bytes a lane)" \
    "equal byte for byte, in $(( (t1 - t0) / 1000000 )) ms"
}

# load NAME URL PID...: a warm-up, then the load in two halves; RSS of each
# PID before, between and after them, and each PID alive at the end.
load() {
  local name=$1 url=$2 i=0 before=() half=() after
  shift 2
  run_lanes "$name-warmup" "$url" $warmup
  for pid in "$@"; do before+=("$(rss "$pid")"); done
  run_lanes "$name-1" "$url" $((requests / 2))
  for pid in "$@"; do half+=("$(rss "$pid")"); done
  run_lanes "$name-2" "$url" $((requests / 2))
  for pid in "$@"; do
    kill -0 "$pid" 2>/dev/null || fail "$name: process $pid died"
    after=$(rss "$pid")
    echo "  $name: process $pid RSS ${before[$i]} kB before the load, ${half[$i]} kB halfway, $after kB after" \
      "(bounds: +$rss_kb kB, +$rss_half_kb kB over the second half)"
    [ $((after - before[i])) -le $rss_kb ] || fail "$name: process $pid grew by $((after - before[i])) kB"
    [ $((after - half[i])) -le $rss_half_kb ] || fail "$name: process $pid grew by $((after - half[i])) kB in the second half"
    i=$((i + 1))
  done
}

# ---- nginx ---------------------------------------------------------------
# nginx_conf DIR PORT MAIN HTTP: MAIN and HTTP go into those contexts.
nginx_conf() {
  mkdir -p "$1"
  cat > "$1/nginx.conf" <<CONF
load_module $nl/usr/lib/nginx/modules/ndk_http_module.so;
load_module $nl/usr/lib/nginx/modules/ngx_http_lua_module.so;
worker_processes 2;
daemon off;
pid $1/nginx.pid;
error_log $1/error.log notice;
$3
events { worker_connections 64; }
http {
  access_log off;
  client_body_temp_path $1/body; proxy_temp_path $1/proxy; fastcgi_temp_path $1/fastcgi;
  uwsgi_temp_path $1/uwsgi; scgi_temp_path $1/scgi;
  lua_package_path "$top/spec/hosts/?.lua;$nl/usr/share/lua/5.1/?.lua;;";
  lua_package_cpath "$hb/luajit/?.so;;";
  $4
  server {
    listen 127.0.0.1:$2;
    location = /rows { content_by_lua_block { require("nginx").rows() } }
    location = /info { content_by_lua_block { require("nginx").info() } }
    location /hello {
        content_by_lua_block {
            local avxbuf = require "avxbuf"
            local buf = avxbuf.new()
            buf:put("hello ", 42, "\n")
            ngx.print(tostring(buf))
        }
    }
  }
}
CONF
}

# nginx_run DIR PORT: nginx in the foreground (its master is our child);
# OpenResty's LuaJIT from the unpacked package, AVXBUF_OPTIONS set.
nginx_run() {
  LD_LIBRARY_PATH=$libdir AVXBUF_OPTIONS=use_avx=1 nginx -p "$1" -c "$1/nginx.conf" -e "$1/error.log" \
    > "$1/stdout.log" 2>&1 &
  nginx_pid=$!
  pids+=("$nginx_pid")
  wait_up "http://127.0.0.1:$2/info" "$nginx_pid"
}

# nginx_start DIR MAIN HTTP: nginx_conf and nginx_run on a free port (in
# $port), and its /info answer (in $info).
nginx_start() {
  port=$(free_port)
  nginx_conf "$1" "$port" "$2" "$3"
  nginx_run "$1" "$port"
  info=$(curl -fsS "http://127.0.0.1:$port/info")
}

# nginx_stop DIR: its error log checked before the stop (stopping logs
# "signal 15"), then every child stopped.
nginx_stop() {
  if grep -E 'signal|exited|lua entry thread aborted|\[(error|crit|alert|emerg)\]' "$1/error.log"; then
    fail "nginx: error log $1/error.log"
  fi
  stop_all
}

echo "test-hosts: $(nginx -v 2>&1), Lua module $(dpkg-deb -f "$(ls "$nl"/libnginx-mod-http-lua_*.deb)" Version)," \
  "LuaJIT $(dpkg-deb -f "$(ls "$nl"/libluajit2-5.1-2_*.deb)" Version) (OpenResty's)"
nginx_start "$work/nginx" "env AVXBUF_OPTIONS;" ""
expect "nginx: OpenResty's LuaJIT" "$(field "$info" openresty_luajit)" true
expect "nginx: FFI path" "$(field "$info" ffi)" true
expect "nginx: with env AVXBUF_OPTIONS, the worker's AVXBUF_OPTIONS" "$(field "$info" options)" use_avx=1
expect "nginx: with env AVXBUF_OPTIONS, use_avx" "$(field "$info" use_avx)" 1
expect "nginx: ngx.print(tostring(buf))" "$(field "$info" print_tostring)" true
print_buffer=$(field "$info" print_buffer)
case $print_buffer in *"got userdata"*) echo "  nginx: ngx.print(buf): $print_buffer" ;;
  *) fail "nginx: ngx.print(buf) gave '$print_buffer', want an error naming userdata" ;; esac
expect "nginx: docs/hosts.md's /hello" "$(curl -fsS "http://127.0.0.1:$port/hello")" "hello 42"
workers=$(pgrep -P "$nginx_pid" | tr '\n' ' ')
[ "$(wc -w <<<"$workers")" = 2 ] || fail "nginx: workers '$workers', want 2"
for w in $workers; do grep -q "$libdir/libluajit" "/proc/$w/maps" || fail "nginx: worker $w without OpenResty's LuaJIT"; done
# shellcheck disable=SC2086 # the worker PIDs, one argument each
load nginx "http://127.0.0.1:$port" $workers
[ "$(pgrep -P "$nginx_pid" | tr '\n' ' ')" = "$workers" ] || fail "nginx: workers replaced during the load"
nginx_stop "$work/nginx"

# Without `env AVXBUF_OPTIONS;` the workers do not see it; required in
# init_by_lua (the master, before it forks), avxbuf has read it already.
nginx_start "$work/nginx-noenv" "" ""
expect "nginx: without env, the worker's AVXBUF_OPTIONS" "$(field "$info" options)" nil
[ "$(field "$info" use_avx)" != 1 ] || fail "nginx: without env, use_avx=1 all the same"
echo "  nginx: without env, use_avx: $(field "$info" use_avx) (the default)"
nginx_stop "$work/nginx-noenv"
nginx_start "$work/nginx-init" "" 'init_by_lua_block { require "avxbuf" }'
expect "nginx: init_by_lua, the worker's AVXBUF_OPTIONS" "$(field "$info" options)" nil
expect "nginx: init_by_lua, use_avx" "$(field "$info" use_avx)" 1
nginx_stop "$work/nginx-init"

# ---- HAProxy -------------------------------------------------------------
# haproxy_run DIR PORT LOAD: HAProxy in the foreground, two threads, the
# services loaded by LOAD (lua-load-per-thread or lua-load).
haproxy_run() {
  mkdir -p "$1"
  cat > "$1/haproxy.cfg" <<CONF
global
  nbthread 2
  log stderr format raw local0 err
  lua-prepend-path $top/spec/hosts/?.lua
  lua-prepend-path $hb/lua5.3/?.so cpath
  $3 $top/spec/hosts/haproxy.lua
defaults
  mode http
  log global
  timeout connect 5s
  timeout client 30s
  timeout server 30s
frontend web
  bind 127.0.0.1:$2
  http-request use-service lua.rows if { path /rows }
  http-request use-service lua.info if { path /info }
  http-request use-service lua.hello if { path /hello }
CONF
  AVXBUF_OPTIONS=use_avx=1 haproxy -f "$1/haproxy.cfg" -db > "$1/stderr.log" 2>&1 &
  haproxy_pid=$!
  pids+=("$haproxy_pid")
  wait_up "http://127.0.0.1:$2/info" "$haproxy_pid"
}

haproxy_log_clean() {   # DIR
  if grep -Ei 'alert|error|signal|aborted' "$1/stderr.log"; then fail "haproxy: $1/stderr.log"; fi
}

echo "test-hosts: $(haproxy -v | head -1 | cut -d' ' -f1-3), $(lua5.3 -v 2>&1 | cut -d' ' -f1-2)"
port=$(free_port)
haproxy_run "$work/haproxy" "$port" lua-load-per-thread
info=$(curl -fsS "http://127.0.0.1:$port/info")
expect "haproxy: Lua" "$(field "$info" lua)" "Lua 5.3"
expect "haproxy: AVXBUF_OPTIONS" "$(field "$info" options)" use_avx=1
expect "haproxy: use_avx" "$(field "$info" use_avx)" 1
send_buffer=$(field "$info" send_buffer)
case $send_buffer in *"string expected, got avxbuf.buffer"*) echo "  haproxy: applet:send(buf): $send_buffer" ;;
  *) fail "haproxy: applet:send(buf) gave '$send_buffer', want 'string expected'" ;; esac
expect "haproxy: docs/hosts.md's /hello" "$(curl -fsS "http://127.0.0.1:$port/hello")" "hello 42"
# Each thread has its own Lua state, so its own avxbuf: new connections
# spread over the threads until both have answered.
states=
for _ in $(seq 60); do
  info=$(curl -fsS "http://127.0.0.1:$port/info")
  [ "$(field "$info" use_avx)" = 1 ] || fail "haproxy: thread $(field "$info" thread): use_avx $(field "$info" use_avx)"
  states=$(printf '%s\n%s' "$states" "thread $(field "$info" thread): avxbuf table $(field "$info" state)" | sed '/^$/d' | sort -u)
  [ "$(wc -l <<<"$states")" -ge 2 ] && break
done
[ "$(cut -d' ' -f5 <<<"$states" | sort -u | wc -l)" = 2 ] || fail "haproxy: per-thread states: $states"
echo "  haproxy: lua-load-per-thread: $(tr '\n' ';' <<<"$states")"
load haproxy "http://127.0.0.1:$port" "$haproxy_pid"
haproxy_log_clean "$work/haproxy"
stop_all
# lua-load: one Lua state for every thread (core.thread 0 there).
port=$(free_port)
haproxy_run "$work/haproxy-shared" "$port" lua-load
states=
for _ in $(seq 6); do
  info=$(curl -fsS "http://127.0.0.1:$port/info")
  states=$(printf '%s\n%s' "$states" "thread $(field "$info" thread): avxbuf table $(field "$info" state)" | sed '/^$/d' | sort -u)
done
[ "$(cut -d' ' -f2 <<<"$states" | tr '\n' ' ')" = "0: " ] || fail "haproxy: lua-load: $states"
echo "  haproxy: lua-load: $states, for 6 connections"
run_lanes haproxy-shared "http://127.0.0.1:$port" $warmup
haproxy_log_clean "$work/haproxy-shared"
stop_all

# ---- Neovim --------------------------------------------------------------
echo "test-hosts: $(nvim --version | head -1)"
# nvim_run NAME ARGS...: spec/hosts/nvim.lua in nvim ARGS, AVXBUF_OPTIONS set
# ("cquit 2": should the script not run to its end).
nvim_run() {
  local name=$1
  shift
  AVXBUF_OPTIONS=use_avx=1 AVXBUF_HOSTS_OUT=$work/$name.txt timeout 60 nvim --headless -i NONE -n "$@" \
    -c "luafile spec/hosts/nvim.lua" -c "cquit 2" > "$work/$name.log" 2>&1 || { cat "$work/$name.log"; fail "$name"; }
  grep -q '^ok .*AVXBUF_OPTIONS=use_avx=1, use_avx=1$' "$work/$name.txt" || { cat "$work/$name.txt"; fail "$name"; }
  echo "  $name: $(cat "$work/$name.txt")"
}
# package.cpath set in an init.lua (nvim -u), as a user's config would;
# then avxbuf.so in a runtimepath directory's lua/, which Neovim searches.
printf 'package.cpath = "%s/?.so;" .. package.cpath\n' "$hb/luajit" > "$work/init.lua"
nvim_run nvim-init.lua -u "$work/init.lua"
mkdir -p "$work/rtp/lua"
ln -s "$hb/luajit/avxbuf.so" "$work/rtp/lua/avxbuf.so"
nvim_run nvim-runtimepath -u NONE --cmd "set rtp^=$work/rtp"

ok=1
echo "test-hosts: passed"
