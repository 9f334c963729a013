#!/usr/bin/env bash
# Starts BINARY's serve five times against the DynamoDB Local at
# FUNDSVC_DYNAMODB_ENDPOINT (a table named starttime is created), and
# prints for each the time from exec to the first 200 from /livez and the
# process's RSS one second later.
#
#	FUNDSVC_DYNAMODB_ENDPOINT=http://127.0.0.1:8000 scripts/time-serve-start.sh ./fundsvc
set -euo pipefail

bin=${1:?usage: time-serve-start.sh BINARY}
: "${FUNDSVC_DYNAMODB_ENDPOINT:?set it to a DynamoDB Local}"
export FUNDSVC_DYNAMODB_ENDPOINT FUNDSVC_TABLE=starttime FUNDSVC_LISTEN=127.0.0.1:${PORT:-18081}
export FUNDSVC_JWT_HS256_SECRET=0123456789abcdef0123456789abcdef AWS_ACCESS_KEY_ID=local AWS_SECRET_ACCESS_KEY=local
"$bin" table create >/dev/null
for _ in 1 2 3 4 5; do
	start=$(date +%s%N)
	"$bin" serve >/dev/null 2>&1 &
	pid=$!
	until curl -sf "http://$FUNDSVC_LISTEN/livez" >/dev/null; do sleep 0.005; done
	end=$(date +%s%N)
	sleep 1
	rss=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status")
	kill "$pid"
	wait "$pid" 2>/dev/null || true
	echo "start $(((end - start) / 1000000)) ms, RSS ${rss} kB"
done
