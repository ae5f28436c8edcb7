#!/usr/bin/env bash
# Benchmark of the legacy-token import: generates a JSON Lines file, runs
# `tokenctl legacy-tokens import` on a fresh embedded (SQLite) store as a separate process, checks
# that the summary accounts for every line, and reports wall time, throughput and peak memory.
#
#   infra/bench-import.sh                 1,000,000 lines, debug build
#   infra/bench-import.sh 200000          another size
#   infra/bench-import.sh --release       the optimised binary (slow to build the first time)
#   TOKENCTL_BIN=path infra/bench-import.sh   an already built binary
#
# One line in 100,000 is invalid on purpose, so the skip path is measured too. Peak memory comes
# from /usr/bin/time -v when present, otherwise from polling VmHWM in /proc/PID/status. The
# import streams, so peak memory must not grow with the number of lines.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
LINES=1000000
PROFILE=debug
for arg in "$@"; do
	case "$arg" in
	--release) PROFILE=release ;;
	-h | --help)
		sed -n '2,14p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
		exit 0
		;;
	*[!0-9]* | '')
		echo "bench-import: unknown argument $arg (a line count or --release)" >&2
		exit 2
		;;
	*) LINES="$arg" ;;
	esac
done

log() { echo "bench-import: $*" >&2; }

if [[ -n "${TOKENCTL_BIN:-}" ]]; then
	BIN="$TOKENCTL_BIN"
else
	log "building tokenctl ($PROFILE)"
	build_args=(build --quiet -p tokenctl --bin tokenctl)
	[[ "$PROFILE" == release ]] && build_args+=(--release)
	(cd "$ROOT" && cargo "${build_args[@]}")
	target_dir="$(cd "$ROOT" && cargo metadata --format-version 1 --no-deps |
		sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')"
	BIN="$target_dir/$PROFILE/tokenctl"
fi
[[ -x "$BIN" ]] || {
	log "no executable at $BIN"
	exit 1
}

WORK="$(mktemp -d "${TMPDIR:-/tmp}/bench-import.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
FILE="$WORK/legacy-tokens.jsonl"

log "generating $LINES lines"
awk -v n="$LINES" -v expiry_at="$(($(date +%s) + 86400 * 30))" 'BEGIN {
	for (i = 1; i <= n; i++) {
		if (i % 100000 == 0) { printf "{\"token\": \"broken-%d\"}\n", i; continue }
		kind = (i % 7 == 0) ? "company" : "user"
		extra = (i % 10 == 0) ? ",\"company_id\":\"0e8f3c4a-1b2c-4d5e-8f90-a1b2c3d4e5f6\"" : ""
		expiry = (i % 3 == 0) ? ",\"expires_at\":" expiry_at : ""
		printf "{\"token\":\"bench-old-token-%07d-Zm9vYmFy\",\"consumer_key\":\"qyprd-OLD\",\"principal_type\":\"%s\",\"principal_id\":\"6f1c2b3a-4d5e-4f60-8a7b-9c0d1e2f3a4b\",\"scopes\":[\"com.example.read\",\"com.example.write\"],\"wsadmin\":%s%s%s}\n", i, kind, (i % 10 == 0) ? "true" : "false", extra, expiry
	}
}' >"$FILE"
SIZE_MB="$(awk -v b="$(wc -c <"$FILE")" 'BEGIN { printf "%.1f", b / 1e6 }')"
EXPECTED_SKIPPED=$((LINES / 100000))

# Only what the tool needs: a fresh embedded store in the work directory.
run_env=(env -u DYNAMODB_ENDPOINT -u TABLE_NAME -u SIGNING_KEYS_SECRET_ARN STORE=sqlite DATA_DIR="$WORK/data")

log "importing $FILE ($SIZE_MB MB) with $BIN"
start_ns="$(date +%s%N)"
if [[ -x /usr/bin/time ]]; then
	"${run_env[@]}" /usr/bin/time -v "$BIN" --json legacy-tokens import "$FILE" >"$WORK/report.json" 2>"$WORK/time.txt"
	peak_kib="$(sed -n 's/.*Maximum resident set size (kbytes): *//p' "$WORK/time.txt")"
else
	"${run_env[@]}" "$BIN" --json legacy-tokens import "$FILE" >"$WORK/report.json" &
	pid=$!
	peak_kib=0
	while kill -0 "$pid" 2>/dev/null; do
		hwm="$(sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$pid/status" 2>/dev/null || true)"
		[[ -n "$hwm" && "$hwm" -gt "$peak_kib" ]] && peak_kib="$hwm"
		sleep 0.2
	done
	wait "$pid"
fi
end_ns="$(date +%s%N)"

field() { sed -n "s/.*\"$1\":\([0-9.]*\).*/\1/p" "$WORK/report.json"; }
lines_read="$(field lines_read)"
imported="$(field imported)"
skipped="$(field skipped)"
blank="$(field blank)"

if [[ "$lines_read" != "$LINES" || "$skipped" != "$EXPECTED_SKIPPED" ||
	$((imported + skipped + blank)) -ne "$LINES" ]]; then
	log "the summary does not account for every line: $(cat "$WORK/report.json")"
	exit 1
fi

awk -v lines="$LINES" -v imported="$imported" -v skipped="$skipped" -v size="$SIZE_MB" \
	-v ns="$((end_ns - start_ns))" -v kib="$peak_kib" -v profile="$PROFILE" 'BEGIN {
	s = ns / 1e9
	printf "lines %d (%s MB), imported %d, skipped %d\n", lines, size, imported, skipped
	printf "wall time %.1f s (%.0f lines/s), peak RSS %.1f MiB, %s build\n", s, lines / s, kib / 1024, profile
}'
