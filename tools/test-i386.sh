#!/usr/bin/env bash
# The suite on 32-bit x86: module and spec/runner.c built with -m32, as
# Debian's i386 baseline (no SSE2: the C library's kernels) and with -msse2.
#   tools/test-i386.sh   (what `make test-i386` runs; LUA: lua5.4, I386_EXEC: auto)
# Needs: the i386 group of tools/deps.sh (gcc's multilib package, qemu-user).
set -euo pipefail
cd "$(dirname "$0")/.."
LUA=${LUA:-lua5.4}
# I386_EXEC: auto (the runner, else qemu), native, or qemu (to test that path
# on a kernel that runs 32-bit code). Some kernels refuse 32-bit executables
# ("Exec format error", status 126: no IA32 emulation); there the runner runs
# under qemu-i386 (no -L: its loader and libraries are on the host's paths),
# which emulates its own CPU and no perf_event_open (AVXBUF_SPEC_QEMU).
# Child processes would be the 64-bit interpreter, so those specs are skipped.
I386_EXEC=${I386_EXEC:-auto}
tools/deps.sh i386
tools/deps.sh lua-for i386 build/lua-i386
# Debian's i386 Lua, unpacked by tools/deps.sh; its static library linked
# into the runner, which exports the Lua API (-Wl,-E) to the module.
lua_inc="-Ibuild/lua-i386/usr/include/lua5.4 -Ibuild/lua-i386/usr/include/i386-linux-gnu"
lua_lib="build/lua-i386/usr/lib/i386-linux-gnu/liblua5.4.a -Wl,-E -lm -ldl"
# The kernel's asm headers, as Debian's gcc-multilib links them at
# /usr/include/asm (which it alone does, and conflicts with every cross
# compiler for it): linux-libc-dev's, under the compiler's multiarch name.
mkdir -p build/i386-include
ln -sfn "/usr/include/$(gcc -print-multiarch)/asm" build/i386-include/asm
for f in build/i386 build/i386-sse2; do
  flags="-m32 -isystem build/i386-include"; [ $f = build/i386-sse2 ] && flags="$flags -msse2"
  make --no-print-directory native $f/capi.so BUILD=$f CC="gcc $flags" LUA_INC="$lua_inc"
  # shellcheck disable=SC2086 # the flags are words
  gcc $flags -O2 $lua_inc -o $f/runner spec/runner.c $lua_lib
  # shellcheck disable=SC2016 # expanded by the wrapper, not here
  printf '%s\n' '#!/bin/sh' '# make test-i386: the runner beside this script, under qemu-i386' \
    'AVXBUF_SPEC_QEMU=1; export AVXBUF_SPEC_QEMU' 'exec qemu-i386 "${0%/*}/runner" "$@"' > $f/qemu-runner
  chmod +x $f/qemu-runner
done
case "$I386_EXEC" in
  native) runner=runner ;;
  qemu) runner=qemu-runner; echo "i386: I386_EXEC=qemu; running under qemu-i386" ;;
  auto)
    status=0; build/i386/runner /dev/null || status=$?
    if [ $status = 0 ]; then runner=runner
    elif [ $status = 126 ]; then
      runner=qemu-runner; echo "i386: this kernel refuses 32-bit binaries; running under qemu-i386"
    else echo "i386: build/i386/runner /dev/null failed (status $status)" >&2; exit 1
    fi ;;
  *) echo "I386_EXEC must be auto, native or qemu" >&2; exit 2 ;;
esac
echo "$LUA spec/run.lua build/i386@build/i386/$runner build/i386-sse2@build/i386-sse2/$runner"
"$LUA" spec/run.lua build/i386@build/i386/$runner build/i386-sse2@build/i386-sse2/$runner
