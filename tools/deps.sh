#!/bin/sh
# Installs the Debian packages a make target needs, and nothing if they are
# there: with apt-get as root, otherwise it prints the command and fails.
#   tools/deps.sh GROUP [LUA]
# GROUP: build (what make, make test and make bench need), hardening, audit,
# lint, aarch64, i386, dist. LUA: lua5.1, lua5.2, lua5.3, lua5.4 or luajit
# (default lua5.4): the interpreter and headers the build group installs.
set -eu
group=${1:-build}
lua=${2:-lua5.4}

case $lua in
  luajit) lua_dev=libluajit-5.1-dev ;;
  lua5.1) lua_dev=liblua5.1-0-dev ;;
  *) lua_dev=lib$lua-dev ;;
esac

foreign=
case $group in
  build) pkgs="$lua $lua_dev lua-unit libsimde-dev lua-argparse lua-cjson pkg-config gcc make binutils" ;;
  hardening) pkgs="clang libclang-rt-14-dev valgrind" ;;
  audit) pkgs="clang binutils luarocks" ;;
  lint) pkgs="lua-check cppcheck" ;;
  aarch64) pkgs="gcc-aarch64-linux-gnu qemu-user liblua5.4-dev:arm64"; foreign=arm64 ;;
  i386) pkgs="gcc-multilib liblua5.4-dev:i386"; foreign=i386 ;;
  dist) pkgs="git zip luarocks" ;;
  *) echo "tools/deps.sh: unknown group '$group'" >&2; exit 2 ;;
esac

missing=
for p in $pkgs; do
  dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed' || missing="$missing $p"
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" != 0 ]; then
  echo "missing Debian packages:$missing; run: sudo tools/deps.sh $group $lua" >&2
  exit 1
fi
if [ -n "$foreign" ] && ! dpkg --print-foreign-architectures | grep -qx "$foreign"; then
  dpkg --add-architecture "$foreign"
fi
echo "installing:$missing"
apt-get update -qq
# shellcheck disable=SC2086
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null
