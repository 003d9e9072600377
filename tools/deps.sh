#!/bin/sh
# Installs the Debian packages a make target needs, and nothing if they are
# there: with apt-get as root, otherwise it prints the command and fails.
#   tools/deps.sh GROUP [LUA]
# GROUP: build (what make test and make bench need), headers (what make
# needs: LUA's headers), hardening, audit, lint, aarch64, i386, dist, hosts
# (make test-hosts). LUA: lua5.1, lua5.2, lua5.3, lua5.4 or luajit (default
# lua5.4): the interpreter and headers the build group installs.
# It prints what apt-get will install, and never removes a package: a plan
# that would remove one is shown and refused.
#   tools/deps.sh nginx-lua DIR
# Debian's nginx Lua module with OpenResty's LuaJIT, unpacked into DIR, not
# installed (make test-hosts): installing it would remove Debian's LuaJIT.
#   tools/deps.sh lua-for ARCH DIR
# Debian's Lua 5.4 for a foreign architecture (arm64, i386): its headers and
# static library unpacked into DIR, not installed. Installing a foreign -dev
# package pulls in that architecture's C library headers, whose versions
# must equal the native ones exactly (Multi-Arch: same), and a mirror whose
# foreign security index lags one update behind then refuses the install
# ("held broken packages"); the cross compilers bring their own C library.
set -eu
group=${1:-build}

# A mirror caught mid-sync fails one index ("File has unexpected size");
# retry, then let what follows say whether what it needs was there.
apt_update() {
  for attempt in 1 2 3; do
    apt-get update && return 0
    echo "apt-get update failed (attempt $attempt)" >&2
    sleep 5
  done
}

need_root() {
  if [ "$(id -u)" != 0 ]; then
    echo "$1; run: sudo tools/deps.sh $2" >&2
    exit 1
  fi
}

installed() {
  dpkg-query -W -f='${Status}\n' "$1" 2>/dev/null | grep -q '^install ok installed'
}

# unpack DIR PACKAGE...: the packages' files under DIR, once.
unpack() {
  dir=$1; shift
  [ -f "$dir/.unpacked" ] && return 0
  rm -rf "$dir" && mkdir -p "$dir"
  (cd "$dir" && apt-get download "$@" && for deb in *.deb; do dpkg-deb -x "$deb" .; done)
  touch "$dir/.unpacked"
}

if [ "$group" = nginx-lua ]; then
  if ! apt-cache show libnginx-mod-http-lua >/dev/null 2>&1; then
    need_root "no package index" "nginx-lua $2"
    apt_update
  fi
  unpack "$2" libnginx-mod-http-lua libnginx-mod-http-ndk lua-resty-core lua-resty-lrucache libluajit2-5.1-2
  exit 0
fi

if [ "$group" = lua-for ]; then
  arch=$2 dir=$3
  [ -f "$dir/.unpacked" ] && exit 0
  if ! dpkg --print-foreign-architectures | grep -qx "$arch"; then
    need_root "architecture $arch is not configured" "lua-for $arch $dir"
    dpkg --add-architecture "$arch"
    apt_update
  elif ! apt-cache show "liblua5.4-dev:$arch" >/dev/null 2>&1; then
    need_root "no $arch package index" "lua-for $arch $dir"
    apt_update
  fi
  unpack "$dir" "liblua5.4-dev:$arch" "liblua5.4-0:$arch"
  exit 0
fi

lua=${2:-lua5.4}
# Debian has two LuaJITs that conflict: LuaJIT's (luajit) and OpenResty's
# (luajit2), which Debian's nginx Lua module needs (lua-resty-core depends on
# libluajit2-5.1-2). Both have the headers and ABI avxbuf builds against:
# take the one whose library is installed.
case $lua in
  luajit) if installed libluajit2-5.1-2; then lua_pkg=luajit2 lua_dev=libluajit2-5.1-dev
    else lua_pkg=luajit lua_dev=libluajit-5.1-dev; fi ;;
  lua5.1) lua_pkg=lua5.1 lua_dev=liblua5.1-0-dev ;;
  *) lua_pkg=$lua lua_dev=lib$lua-dev ;;
esac

case $group in
  build) pkgs="$lua_pkg $lua_dev lua-unit cpuid bsdextrautils libsimde-dev lua-argparse lua-cjson pkg-config gcc make binutils" ;;
  hardening) pkgs="clang libclang-rt-14-dev valgrind" ;;
  audit) pkgs="clang binutils luarocks" ;;
  lint) pkgs="lua5.4 lua-argparse lua-check cppcheck gcc binutils" ;;
  aarch64) pkgs="gcc-aarch64-linux-gnu qemu-user" ;;
  # The compiler's own multilib package: Debian's gcc-multilib, which adds
  # only the /usr/include/asm link, conflicts with every cross compiler
  # (tools/test-i386.sh makes that link in build/ instead). libc6-dev-i386
  # recommends gcc-multilib, so this group takes no recommended packages.
  i386) gcc_major=$(gcc -dumpversion 2>/dev/null | cut -d. -f1)
    pkgs="gcc-${gcc_major:-12}-multilib qemu-user" apt_opts=--no-install-recommends ;;
  dist) pkgs="git zip luarocks" ;;
  headers) pkgs="$lua_dev" ;;
  hosts) pkgs="nginx haproxy neovim lua5.3 liblua5.3-dev curl iproute2" ;;
  *) echo "tools/deps.sh: unknown group '$group'" >&2; exit 2 ;;
esac

missing=
for p in $pkgs; do
  installed "$p" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0

need_root "missing Debian packages:$missing" "$group $lua"
echo "tools/deps.sh $group $lua: installing:$missing"
apt_update
# The plan first (apt-get -s): with --no-remove, one that would remove a
# package fails and says which; otherwise show every package it adds.
# shellcheck disable=SC2086
if ! plan=$(apt-get -s install --no-remove ${apt_opts:-} $missing 2>&1); then
  printf '%s\n' "$plan" >&2
  echo "tools/deps.sh: nothing installed: apt-get -s install --no-remove ${apt_opts:-}$missing failed (above)" >&2
  exit 1
fi
printf '%s\n' "$plan" | sed -n 's/^Inst /tools\/deps.sh: will install /p'
# shellcheck disable=SC2086
DEBIAN_FRONTEND=noninteractive apt-get install -y --no-remove ${apt_opts:-} $missing
