#!/usr/bin/env bash
# Runs a command with one in-memory DynamoDB Local for all of it, named by
# FUNDSVC_TEST_DYNAMODB_ENDPOINT, which internal/dynamotest's Main then uses
# instead of starting a server per test binary. `make test` runs
# `go test ./...` this way. If FUNDSVC_TEST_DYNAMODB_ENDPOINT is already set,
# the command runs against that server.
#
#	scripts/with-dynamodb-local.sh go test ./...
set -euo pipefail

if [[ -n ${FUNDSVC_TEST_DYNAMODB_ENDPOINT:-} ]]; then
	exec "$@"
fi

# shellcheck source=scripts/dynamodb-local.sh
source "$(dirname "${BASH_SOURCE[0]}")/dynamodb-local.sh"

# A server for one test run: the JVM options of internal/dynamotest's
# TestRunJVM (the serial collector; the optimizing compiler pays back over
# a run of minutes, where it answers the tests sooner and for less CPU).
ddb_jvm_opts=(-XX:+UseSerialGC)

log=$(mktemp "${TMPDIR:-/tmp}/dynamodb-local.XXXXXX")
trap 'ddb_stop; rm -f "$log"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# A random high port that looks free; another process may still take it
# before the JVM binds it, so a failed start is tried again on another port.
started=
for _ in 1 2 3 4 5; do
	port=$((20000 + RANDOM % 30000))
	ddb_port_free "$port" || continue
	ddb_start "$port" -inMemory >"$log" 2>&1
	if ddb_wait "$port" 60; then
		started=1
		break
	fi
	ddb_stop
done
if [[ -z $started ]]; then
	echo "could not start DynamoDB Local; its output:" >&2
	cat "$log" >&2
	exit 1
fi

export FUNDSVC_TEST_DYNAMODB_ENDPOINT=http://127.0.0.1:$port
echo "DynamoDB Local for this run: $FUNDSVC_TEST_DYNAMODB_ENDPOINT" >&2
# Not exec: the EXIT trap must stop the server after the command, pass or fail.
"$@"
