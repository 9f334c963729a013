#!/usr/bin/env bash
# Runs every Go test of the module, as make test does (inside
# scripts/with-dynamodb-local.sh): all of them with the race detector but
# the crash tests, which run at the same time without it. A crash test
# kills processes (DynamoDB Local, an export child) and checks what
# survives across them; the race detector adds nothing to that check and,
# instrumenting every child, made them a third of make test's time.
set -uo pipefail

GO=${GO:-go}
crash='^(TestRestatementSurvivesDynamoDBBeingKilled|TestExportSurvivesSIGKILL)$'

log=$(mktemp "${TMPDIR:-/tmp}/crash-tests.XXXXXX")
trap 'rm -f "$log"' EXIT

"$GO" test -count=1 -timeout 14m -run "$crash" ./api ./export >"$log" 2>&1 &
crash_pid=$!
"$GO" test -race -count=1 -timeout 14m -skip "$crash" ./...
race=$?
wait "$crash_pid"
crashed=$?
echo "crash tests (without -race):"
cat "$log"
if ((race != 0 || crashed != 0)); then
	exit 1
fi
