#!/bin/sh
# Installs the Debian packages a make target needs, and nothing if they are
# there: with apt-get as root, otherwise it prints the command and fails.
#   tools/deps.sh GROUP [LUA]
# GROUP: build (what make, make test and make bench need), hardening, audit,
# lint, aarch64, i386, dist. LUA: lua5.1, lua5.2, lua5.3, lua5.4 or luajit
# (default lua5.4): the interpreter and headers the build group installs.
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
    apt-get update -qq && return 0
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
  rm -rf "$dir" && mkdir -p "$dir"
  (cd "$dir" && apt-get download -qq "liblua5.4-dev:$arch" "liblua5.4-0:$arch" 2>/dev/null \
     && for deb in *.deb; do dpkg-deb -x "$deb" .; done)
  touch "$dir/.unpacked"
  exit 0
fi

lua=${2:-lua5.4}
case $lua in
  luajit) lua_dev=libluajit-5.1-dev ;;
  lua5.1) lua_dev=liblua5.1-0-dev ;;
  *) lua_dev=lib$lua-dev ;;
esac

case $group in
  build) pkgs="$lua $lua_dev lua-unit cpuid bsdextrautils libsimde-dev lua-argparse lua-cjson pkg-config gcc make binutils" ;;
  hardening) pkgs="clang libclang-rt-14-dev valgrind" ;;
  audit) pkgs="clang binutils luarocks" ;;
  lint) pkgs="lua5.4 lua-argparse lua-check cppcheck gcc binutils" ;;
  aarch64) pkgs="gcc-aarch64-linux-gnu qemu-user" ;;
  i386) pkgs="gcc-multilib qemu-user" ;;
  dist) pkgs="git zip luarocks" ;;
  *) echo "tools/deps.sh: unknown group '$group'" >&2; exit 2 ;;
esac

missing=
for p in $pkgs; do
  dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed' || missing="$missing $p"
done
[ -z "$missing" ] && exit 0

need_root "missing Debian packages:$missing" "$group $lua"
echo "installing:$missing"
apt_update
# shellcheck disable=SC2086
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null
