#!/usr/bin/env bash
# Runs the local stack `make run` promises: DynamoDB Local persisting under
# .data/dynamodb on DYNAMODB_PORT (8000), the table, the demo data, a local
# token secret with an admin and an investor token printed, and fundsvc
# serving on :8080 until it exits or Ctrl-C, after which DynamoDB Local is
# stopped too.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=scripts/dynamodb-local.sh
source scripts/dynamodb-local.sh

port=${DYNAMODB_PORT:-8000}

# Build first: a compile error should not leave a database starting.
go build -o fundsvc ./cmd/fundsvc

if ! ddb_port_free "$port"; then
	echo "port $port is in use; set DYNAMODB_PORT to another port" >&2
	exit 1
fi

trap ddb_stop EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

mkdir -p .data/dynamodb
ddb_start "$port" -dbPath .data/dynamodb
ddb_wait "$port" 60

export FUNDSVC_DYNAMODB_ENDPOINT=http://127.0.0.1:$port
export FUNDSVC_TABLE=fundsvc
export FUNDSVC_LISTEN=:8080
# DynamoDB Local accepts any credentials; these make sure no real ones, and
# so no real account, are ever involved.
export AWS_REGION=us-east-1 AWS_ACCESS_KEY_ID=local AWS_SECRET_ACCESS_KEY=local
unset AWS_SESSION_TOKEN AWS_PROFILE

# A local signing secret for development tokens, made once and kept (0600).
secret_file=.data/jwt-secret
if [ ! -s "$secret_file" ]; then
	(umask 077 && od -An -N32 -tx1 /dev/urandom | tr -d ' \n' >"$secret_file")
fi
FUNDSVC_JWT_HS256_SECRET=$(cat "$secret_file")
export FUNDSVC_JWT_HS256_SECRET

./fundsvc table create
./fundsvc seed

admin=$(./fundsvc token --role admin --funds '*' --subject dev-admin)
investor=$(./fundsvc token --role investor --investor INVESTOR_1 --subject dev-investor)
cat <<TOKENS

Development tokens (valid 12 hours; signed with the secret in $secret_file):
  export ADMIN=$admin
  export INVESTOR=$investor
Try:
  curl -s -H "Authorization: Bearer \$ADMIN" localhost:8080/v1/documents/DOC001
  curl -s -H "Authorization: Bearer \$INVESTOR" localhost:8080/v1/investors/INVESTOR_1/positions

TOKENS
./fundsvc serve
