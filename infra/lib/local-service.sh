# shellcheck shell=bash
# The part infra/dynamodb-local.sh and infra/kms-local.sh share: an emulator started in the
# background on a free loopback port, recorded in a pid file (its pid, then its port), found
# and stopped through that file, so that concurrent users each give their own file.
#
# The sourcing script sets SERVICE (the log prefix), PID_FILE and FIXED_PORT (empty: a free
# port), and defines `install` and `launch PORT LOG_FILE`, which starts the emulator in the
# background (this file reads its pid from `$!`). Then it calls `local_service_main "$@"`.

START_TIMEOUT_SECONDS=60

log() { echo "$SERVICE: $*" >&2; }
die() {
	log "error: $*"
	exit 1
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
	local port
	for _ in $(seq 1 100); do
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
	local port pid log_file deadline
	mkdir -p "$(dirname "$PID_FILE")"
	log_file="${PID_FILE%.pid}.log"
	# The port is free when chosen but could be taken before the emulator binds it: try a few.
	for _ in 1 2 3; do
		port="${FIXED_PORT:-$(free_port)}"
		launch "$port" "$log_file"
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

# install|start|stop|status; any other command goes to the script's `extra_command`, if defined.
local_service_main() {
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
		if declare -F extra_command >/dev/null; then
			extra_command "$@"
		else
			echo "usage: $0 install|start|stop|status" >&2
			exit 2
		fi
		;;
	esac
}
