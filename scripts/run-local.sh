#!/usr/bin/env bash
# Runs the local stack `make run` promises: DynamoDB Local persisting under
# .data/dynamodb on DYNAMODB_PORT (8000), the table, the demo data, a local
# token secret with an admin and an investor token printed, and fundsvc
# serving on FUNDSVC_LISTEN (127.0.0.1:8080: loopback only, as the tokens
# are printed) until it exits or Ctrl-C, after which DynamoDB Local is
# stopped too. The stack's settings go to .data/stack.env (0600), which
# every other fundsvc command reads when its flags and environment leave a
# setting unset, so that `./fundsvc export` in another terminal reads this
# database and no other.
#
#	scripts/run-local.sh --check   only check that both ports are free
#	scripts/run-local.sh           check them again and start (./fundsvc is built)
#
# make run runs the first, then installs DynamoDB Local and Swagger UI and
# builds fundsvc, then the second: a port in use stops it before it builds
# or starts anything.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=scripts/dynamodb-local.sh
source scripts/dynamodb-local.sh

port=${DYNAMODB_PORT:-8000}
listen=${FUNDSVC_LISTEN:-127.0.0.1:8080}
stack_file=.data/stack.env

if ! [[ $port =~ ^[0-9]+$ ]] || ((port < 1 || port > 65535)); then
	echo "make run: DYNAMODB_PORT=$port: want a port number, such as 8000" >&2
	exit 2
fi
listen_host=${listen%:*}
listen_port=${listen##*:}
if [[ $listen != *:* ]] || ! [[ $listen_port =~ ^[0-9]+$ ]] || ((listen_port < 1 || listen_port > 65535)); then
	echo "make run: FUNDSVC_LISTEN=$listen: want HOST:PORT with a port, such as 127.0.0.1:8080" >&2
	exit 2
fi
# The address clients use: a wildcard listener is reached on loopback.
case $listen_host in
"" | 0.0.0.0) client_host=127.0.0.1 ;;
"[::]") client_host="[::1]" ;;
*) client_host=$listen_host ;;
esac
base=http://$client_host:$listen_port

if ((listen_port == port)); then
	echo "make run: FUNDSVC_LISTEN=$listen and DYNAMODB_PORT=$port are the same port; move one of them" >&2
	exit 1
fi
if ! ddb_port_free "$port"; then
	echo "make run: port $port, where DynamoDB Local would listen, is in use; choose another with DYNAMODB_PORT, e.g. DYNAMODB_PORT=18001 make run" >&2
	exit 1
fi
probe_host=${client_host#[}
if ! ddb_port_free "$listen_port" "${probe_host%]}"; then
	echo "make run: $listen, where fundsvc would listen, is in use; choose another with FUNDSVC_LISTEN, e.g. FUNDSVC_LISTEN=127.0.0.1:18080 make run" >&2
	exit 1
fi
if [[ ${1:-} == --check ]]; then
	exit 0
fi

trap ddb_stop EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

mkdir -p .data/dynamodb
echo "starting DynamoDB Local on port $port (its data in .data/dynamodb)..."
ddb_start "$port" -dbPath .data/dynamodb
ddb_wait "$port" 60

# A local signing secret for development tokens, made once and kept (0600).
secret_file=.data/jwt-secret
if [ ! -s "$secret_file" ]; then
	(umask 077 && od -An -N32 -tx1 /dev/urandom | tr -d ' \n' >"$secret_file")
fi
# The key sealing webhook signing secrets (AES-256, base64), likewise.
webhook_key_file=.data/webhook-secret-key
if [ ! -s "$webhook_key_file" ]; then
	(umask 077 && head -c 32 /dev/urandom | base64 >"$webhook_key_file")
fi

# The stack's settings, for this script's commands and every later one.
# Written whole and then renamed, so no command reads half of it.
(
	umask 077
	cat >"$stack_file.tmp" <<STACK
# The settings of the stack make run started ($(date -u +%Y-%m-%dT%H:%M:%SZ)). fundsvc commands
# read each one their flags and environment leave unset (FUNDSVC_STACK_FILE names another file).
FUNDSVC_DYNAMODB_ENDPOINT=http://127.0.0.1:$port
FUNDSVC_TABLE=fundsvc
FUNDSVC_REGION=us-east-1
FUNDSVC_LISTEN=$listen
FUNDSVC_JWT_HS256_SECRET=$(cat "$secret_file")
FUNDSVC_WEBHOOK_SECRET_KEY=$(cat "$webhook_key_file")
# Development only: webhook endpoints may be http:// receivers on this machine.
FUNDSVC_WEBHOOK_ALLOW_LOOPBACK=true
# Development only: one instance on DynamoDB Local, so the event feed (and
# webhook delivery) trails the present by 5s rather than 5m.
FUNDSVC_FEED_SETTLE=5s
STACK
	mv "$stack_file.tmp" "$stack_file"
)

# This script's own commands take the same settings from the environment,
# over whatever the shell had set. DynamoDB Local accepts any credentials;
# these make sure no real ones, and so no real account, are ever involved.
while IFS= read -r line; do # split at the first '=' only: a base64 value ends with '='
	[[ $line == FUNDSVC_*=* ]] && export "${line%%=*}=${line#*=}"
done <"$stack_file"
export AWS_REGION=us-east-1 AWS_ACCESS_KEY_ID=local AWS_SECRET_ACCESS_KEY=local
unset AWS_SESSION_TOKEN AWS_PROFILE

./fundsvc table create
./fundsvc seed

admin=$(./fundsvc token --role admin --funds '*' --subject dev-admin)
investor=$(./fundsvc token --role investor --investor INVESTOR_1 --subject dev-investor)
cat <<TOKENS

Development tokens (valid 12 hours; signed with the secret in $secret_file):
  export ADMIN=$admin
  export INVESTOR=$investor
Try:
  curl -s -H "Authorization: Bearer \$ADMIN" $base/v1/documents/DOC001
  curl -s -H "Authorization: Bearer \$INVESTOR" $base/v1/investors/INVESTOR_1/positions
  open $base/docs for the API reference
In another terminal, ./fundsvc export, ./fundsvc token and the other commands use this
stack (its settings are in $stack_file); make reset-demo restores the demo data.

TOKENS
./fundsvc serve
