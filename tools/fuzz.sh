#!/usr/bin/env bash
# Runs the libFuzzer harnesses, each FUZZ_SECONDS (20) seeded from
# fuzz/corpus/, as many at once as the machine has cores (each one thread).
#   tools/fuzz.sh [FUZZER...]   (what `make fuzz` runs; default: every build/fuzz/* program)
# Needs: the harnesses built (`make fuzz` builds them with clang first).
set -euo pipefail
cd "$(dirname "$0")/.."
FUZZ_SECONDS=${FUZZ_SECONDS:-20}
if [ $# = 0 ]; then
  for f in build/fuzz/*; do if [ -f "$f" ] && [ -x "$f" ]; then set -- "$@" "$f"; fi; done
fi
[ $# -gt 0 ] || { echo "fuzz: no harness built in build/fuzz (make fuzz builds them)" >&2; exit 1; }
rm -f build/fuzz/*.status
# A fuzzer's findings go to build/fuzz/NAME-*, its log to build/fuzz/NAME.log.
# shellcheck disable=SC2016 # expanded by the sh that xargs starts
printf '%s\n' "$@" | FUZZ_SECONDS=$FUZZ_SECONDS xargs -P "$(nproc)" -n 1 sh -c '
  f=$1; name=$(basename "$f"); seeds=fuzz/corpus/${name%_emul}; work=build/fuzz/corpus-$name
  rm -rf "$work"; mkdir -p "$work"
  if "$f" -max_total_time="$FUZZ_SECONDS" -print_final_stats=1 -artifact_prefix="build/fuzz/$name-" \
    "$work" "$seeds" 2> "build/fuzz/$name.log"; then echo ok; else echo failed; fi > "build/fuzz/$name.status"' sh
for f in "$@"; do
  name=$(basename "$f"); echo "fuzz $name: $FUZZ_SECONDS s ($(nproc) at a time)"
  if [ "$(cat "build/fuzz/$name.status")" != ok ]; then tail -40 "build/fuzz/$name.log"; exit 1; fi
  grep -E 'stat::number_of_executed_units|stat::new_units_added' "build/fuzz/$name.log"
done
