#!/usr/bin/env bash
# AddressSanitizer + UBSan for the sanitizer targets: `--cflags` prints the
# flags a build takes; otherwise it runs CMD with the ASan runtime preloaded
# (the interpreter is not instrumented) and any report fatal.
#   tools/asan.sh --cflags | tools/asan.sh CMD [ARG...]   (CC: cc; needs its libasan)
set -euo pipefail
CC=${CC:-cc}
if [ "${1:-}" = --cflags ]; then
  echo "-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
  exit 0
fi
LD_PRELOAD=$($CC -print-file-name=libasan.so) AVXBUF_SPEC_SANITIZED=1 \
  ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:allocator_may_return_null=1 \
  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 exec "$@"
