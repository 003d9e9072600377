#!/usr/bin/env bash
# The source rock build/dist/avxbuf-VERSION-1.src.rock: the release rockspec
# (checked against the scm one and linted) and the tree at HEAD (git
# archive), zipped as LuaRocks packs it. VERSION is include/avxbuf.h's.
#   tools/dist.sh   (what `make dist` runs; LUA: lua5.4; needs the dist group of tools/deps.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
LUA=${LUA:-lua5.4}
VERSION=${VERSION:-$(sed -n 's/^#define AVXBUF_VERSION "\(.*\)"/\1/p' include/avxbuf.h)}
rockspec=avxbuf-$VERSION-1.rockspec
tools/deps.sh dist
set -x
"$LUA" tools/same_rockspecs.lua avxbuf-scm-1.rockspec "$rockspec"
luarocks lint "$rockspec"
rm -rf build/dist && mkdir -p build/dist/stage
git archive --format=tar --prefix=avxbuf/ HEAD | tar -x -C build/dist/stage
cp "$rockspec" build/dist/stage/
(cd build/dist/stage && zip -qr "../avxbuf-$VERSION-1.src.rock" "$rockspec" avxbuf)
{ set +x; } 2>/dev/null
echo "wrote build/dist/avxbuf-$VERSION-1.src.rock"
