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
# that verify here and on AWS alike; `check` shows both. Its `ScheduleKeyDeletion` fails (500)
# when the key is named by ARN: name it by key id (`signing/kms.rs` does), as AWS takes either.
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
SERVICE=kms-local
FIXED_PORT="${KMS_LOCAL_PORT:-}"
# shellcheck source=infra/lib/local-service.sh
source "$ROOT/infra/lib/local-service.sh"
# shellcheck source=infra/lib/venv.sh
source "$ROOT/infra/lib/venv.sh"

install() {
	command -v python3 >/dev/null 2>&1 || die "python3 not found: apt-get install python3 python3-venv"
	if [[ -n "$(venv_missing "$VENV" "${PACKAGES[@]}")" ]]; then
		log "installing ${PACKAGES[*]} into ${VENV#"$ROOT"/}"
		venv_install "$VENV" "${PACKAGES[@]}" || die "could not install ${PACKAGES[*]}"
	fi
}

launch() {
	nohup "$VENV/bin/moto_server" -H 127.0.0.1 -p "$1" >"$2" 2>&1 </dev/null &
}

extra_command() {
	case "$1" in
	check)
		is_running || die "not running: infra/kms-local.sh start"
		"$VENV/bin/python" "$ROOT/infra/kms-local-check.py" "$(endpoint_of_running)"
		;;
	*)
		echo "usage: $0 install|start|stop|status|check" >&2
		exit 2
		;;
	esac
}

local_service_main "$@"
