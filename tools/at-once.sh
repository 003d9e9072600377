#!/bin/sh
# tools/at-once.sh CMD [CMD ...]: runs each shell command at the same time
# and, once all have ended, prints each one's output whole, in order; fails
# when any failed. The suites are single-threaded Lua processes and the CI
# machine has two cores: two at once halve a target's time.
set -u
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
i=0
for cmd in "$@"; do
  i=$((i + 1))
  sh -c "$cmd" > "$dir/$i.log" 2>&1 &
  echo $! > "$dir/$i.pid"
done
status=0
i=0
for cmd in "$@"; do
  i=$((i + 1))
  if wait "$(cat "$dir/$i.pid")"; then result=ok; else result="FAILED ($?)"; status=1; fi
  echo "---- at once, $i of $#: $cmd"
  cat "$dir/$i.log"
  echo "---- $result"
done
exit $status
