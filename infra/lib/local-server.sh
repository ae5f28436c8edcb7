# shellcheck shell=bash
# The part infra/fuzz-api.sh and infra/interop.sh share: the built local server
# (`$SERVER`, on SQLite with its demo data) started on a loopback port of its own choice in a fresh data
# directory, waited for, and stopped with the directory removed when the script exits.
#
#   start_local_server PYTHON NAME   PYTHON: an interpreter for the readiness probe; NAME: the
#                                    log prefix. Sets PORT, BASE, DATA_DIR
#                                    and SERVER_PID (the demo data is in $DATA_DIR/demo.json).

SERVER_PID=""
DATA_DIR=""

stop_local_server() {
	if [[ -n "$SERVER_PID" ]]; then
		kill "$SERVER_PID" 2>/dev/null || true
		wait "$SERVER_PID" 2>/dev/null || true
	fi
	[[ -z "$DATA_DIR" ]] || rm -rf "$DATA_DIR"
}

start_local_server() {
	local python="$1" name="$2"
	DATA_DIR="$(mktemp -d "${TMPDIR:-/tmp}/$name.XXXXXX")"
	trap stop_local_server EXIT
	# PORT=0: the server binds a port the system picks and names it on its first screen, so no
	# other process can take the port between a choice here and the server's bind.
	STORE=sqlite DATA_DIR="$DATA_DIR" PORT=0 RUST_LOG=warn \
		"$SERVER" >"$DATA_DIR/server.log" 2>&1 &
	SERVER_PID=$!
	BASE=""
	for _ in $(seq 1 100); do
		if [[ -z "$BASE" ]]; then
			BASE="$(grep -o 'Token service listening on http://127\.0\.0\.1:[0-9]*' "$DATA_DIR/server.log" |
				head -n1 | awk '{print $NF}')" || true
			PORT="${BASE##*:}"
		fi
		if [[ -n "$BASE" ]] &&
			"$python" -c "import urllib.request; urllib.request.urlopen('$BASE/openapi.json', timeout=1)" 2>/dev/null; then
			return 0
		fi
		kill -0 "$SERVER_PID" 2>/dev/null || {
			cat "$DATA_DIR/server.log" >&2
			echo "$name: the server exited" >&2
			exit 1
		}
		sleep 0.2
	done
	echo "$name: the server did not answer within 20 s; log: $DATA_DIR/server.log" >&2
	exit 1
}
