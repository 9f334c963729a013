#!/usr/bin/env bash
# Times `make run` in DIR (a checkout) from its start to the service's
# "listening" log line, and leaves the stack running (Ctrl-C it, or kill
# the printed process group). For a cold run, point GOMODCACHE, GOCACHE and
# npm_config_cache at empty directories first (docs/benchmarks.md).
#
#	scripts/time-make-run.sh /tmp/fresh-clone
set -euo pipefail

dir=${1:?usage: time-make-run.sh DIR}
log=$(mktemp "${TMPDIR:-/tmp}/make-run.XXXXXX")
start=$(date +%s.%N)
set -m
(cd "$dir" && exec make run) >"$log" 2>&1 &
pid=$!
set +m
until grep -q '"msg":"listening"' "$log"; do
	if ! kill -0 "$pid" 2>/dev/null; then
		echo "make run exited before listening:" >&2
		tail -20 "$log" >&2
		exit 1
	fi
	sleep 0.5
done
end=$(date +%s.%N)
printf '%.1f s from make run to "listening" (log %s; stop it with: kill -INT -- -%s)\n' "$(echo "$end - $start" | bc)" "$log" "$pid"
