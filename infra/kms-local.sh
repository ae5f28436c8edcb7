#!/usr/bin/env bash
# A local AWS KMS for tests and development: moto's server mode (PyPI `moto[server]`), which
# creates ECC_NIST_P256 signing keys and signs with ECDSA_SHA_256 like KMS.
#
#   infra/kms-local.sh install        install it into the virtualenv .cache/kms-local/venv
#   infra/kms-local.sh start          start it on a free loopback port; prints the endpoint
#                                     (http://127.0.0.1:PORT) on stdout
#   infra/kms-local.sh stop           stop the instance started by `start`
#   infra/kms-local.sh status         print the endpoint if it is running
#   infra/kms-local.sh check          against the running instance: create a key, sign, and
#                                     verify the signature with `cryptography` (independently
#                                     of moto); exits non-zero if the emulator does not sign
#                                     verifiably
#
# Developers: `export KMS_ENDPOINT=$(infra/kms-local.sh start)`, then point the AWS SDK at it
# (any credentials; region us-east-1); `infra/kms-local.sh stop` when done. The one endpoint
# serves every service moto emulates; only KMS is meant to be used.
#
# moto 5.2.5 ignores `MessageType=DIGEST` and hashes the digest again, so a signature made
# that way verifies against SHA-256(digest), not against the message (AWS KMS does not). Sign
# with `MessageType=RAW` (messages up to 4096 bytes: a JWT's signing input fits) for signatures
# that verify here and on AWS alike; `check` shows both.
#
# Environment:
#   KMS_LOCAL_PID_FILE  where `start` records the instance (default
#                       .cache/kms-local/run/kms-local.pid); give each concurrent user its own
#   KMS_LOCAL_PORT      a fixed port instead of a free one
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE_DIR="$ROOT/.cache/kms-local"
VENV="$CACHE_DIR/venv"
# Pinned so every machine runs the same emulator; boto3 and cryptography are for `check`.
PACKAGES=("moto[server]==5.2.5" boto3==1.44.5 cryptography==50.0.2)
PID_FILE="${KMS_LOCAL_PID_FILE:-$CACHE_DIR/run/kms-local.pid}"
START_TIMEOUT_SECONDS=60

log() { echo "kms-local: $*" >&2; }
die() {
	log "error: $*"
	exit 1
}

# The pins that the virtualenv does not hold, one a line.
missing_packages() {
	"$VENV/bin/python" -c '
import re, sys
from importlib.metadata import PackageNotFoundError, version
for spec in sys.argv[1:]:
    name, pinned = spec.split("==")
    try:
        found = version(re.sub(r"\[.*\]", "", name))
    except PackageNotFoundError:
        found = None
    if found != pinned:
        print(spec)' "${PACKAGES[@]}"
}

install() {
	command -v python3 >/dev/null 2>&1 || die "python3 not found: apt-get install python3 python3-venv"
	if [[ ! -x "$VENV/bin/python" ]]; then
		log "creating ${VENV#"$ROOT"/}"
		python3 -m venv "$VENV" || die "python3 -m venv failed: apt-get install python3-venv"
	fi
	if [[ -n "$(missing_packages)" ]]; then
		log "installing ${PACKAGES[*]} into ${VENV#"$ROOT"/}"
		"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "${PACKAGES[@]}" >&2
	fi
}

port_in_use() {
	# bash's /dev/tcp: connecting succeeds only if something listens.
	(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

free_port() {
	"$VENV/bin/python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
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
	local port pid log_file deadline
	mkdir -p "$(dirname "$PID_FILE")"
	log_file="${PID_FILE%.pid}.log"
	# The port is free when chosen but could be taken before moto binds it: try a few.
	for _ in 1 2 3; do
		port="${KMS_LOCAL_PORT:-$(free_port)}"
		nohup "$VENV/bin/moto_server" -H 127.0.0.1 -p "$port" >"$log_file" 2>&1 </dev/null &
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
check)
	is_running || die "not running: infra/kms-local.sh start"
	"$VENV/bin/python" "$ROOT/infra/kms-local-check.py" "$(endpoint_of_running)"
	;;
*)
	echo "usage: $0 install|start|stop|status|check" >&2
	exit 2
	;;
esac
