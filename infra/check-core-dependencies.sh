#!/usr/bin/env bash
# Refuses an adapter's library in the protocol layer: `cargo tree -p token-core -e normal` (its
# normal dependencies, as the binaries link them; dev-dependencies left out) must name no AWS SDK
# crate, aws-config, lettre, hyper, rustls, opentelemetry-otlp, lambda_http or a metrics exporter
# (metrics-exporter-prometheus, metrics-util). Those belong to
# token-adapters (docs/layout.md); token-core holds the ports they implement.
#
# Prints the forbidden crates and the path that brings each in, and fails; prints one line
# otherwise. Reads Cargo.lock only (`--offline`, `--locked`): nothing is built or downloaded.
# Usage: infra/check-core-dependencies.sh   (from anywhere inside the repository; part of infra/test.sh)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

FORBIDDEN='^(aws-sdk-[a-z0-9-]+|aws-config|lettre|hyper|rustls|opentelemetry-otlp|lambda_http|metrics-exporter-prometheus|metrics-util)$'

tree="$(cargo tree --offline --locked -p token-core -e normal --prefix none)"
found="$(awk '{ print $1 }' <<<"$tree" | sort -u | grep -E "$FORBIDDEN" || true)"
if [[ -n "$found" ]]; then
	for crate in $found; do
		echo "token-core depends on $crate:"
		cargo tree --offline --locked -p token-core -e normal -i "$crate" | head -n 12
	done
	echo "infra/check-core-dependencies.sh: an adapter's crate is back in token-core (move its code to token-adapters)" >&2
	exit 1
fi
echo "token-core depends on no AWS SDK, aws-config, lettre, hyper, rustls, opentelemetry-otlp, lambda_http or metrics exporter"
