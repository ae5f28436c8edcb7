#!/usr/bin/env bash
# Cross-compiles the six Lambda functions with cargo-lambda, as `sam build` does, into
# target/lambda/<name>/bootstrap, and reports each binary's size and architecture.
#
# cargo-lambda (and the zig linker it brings) is installed from PyPI into the ignored virtualenv
# .cache/venv on first use (infra/lib/cargo-lambda.sh). The architecture is arm64 (Graviton), the
# one template.yaml declares under Globals.Function.Architectures; change both together.
#
# Usage: infra/lambda-build.sh [extra `cargo lambda build` flags]
#   CARGO_BUILD_JOBS=1 infra/lambda-build.sh     on a busy machine
#
# A release build of the whole dependency tree (AWS SDK, aws-lc, ring) takes a long time on two
# cores; run it in the background with a log.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

# shellcheck source=infra/lib/venv.sh
source "$ROOT/infra/lib/venv.sh"
# shellcheck source=infra/lib/cargo-lambda.sh
source "$ROOT/infra/lib/cargo-lambda.sh"

TARGET_TRIPLE=aarch64-unknown-linux-gnu
ELF_MACHINE='ARM aarch64'
# provided.al2023 has glibc 2.34: the binaries must not need a newer symbol version.
MAX_GLIBC=2.34
FUNCTIONS=(token exchange company-authtoken rotate-keys logout-delivery registration scim)

# Installs cargo-lambda if missing and puts .cache/venv/bin first on PATH.
ensure_cargo_lambda "$ROOT" lambda-build
echo "lambda-build: $(cargo lambda --version)" >&2

# cargo-lambda adds a missing Rust target through rustup by itself; check first so that a
# machine that cannot download it fails with a clear message instead of deep in the build.
if command -v rustup >/dev/null && ! rustup target list --installed | grep -qx "$TARGET_TRIPLE"; then
    echo "lambda-build: adding the Rust standard library for $TARGET_TRIPLE" >&2
    if ! rustup target add "$TARGET_TRIPLE"; then
        echo "lambda-build: cannot install the $TARGET_TRIPLE target (rustup could not download it)." >&2
        echo "lambda-build: run 'rustup target add $TARGET_TRIPLE' where the Rust dist server is reachable." >&2
        exit 1
    fi
fi

packages=()
for name in "${FUNCTIONS[@]}"; do
    packages+=(--package "$name")
done

# Passkeys verify with OpenSSL (webauthn-rs), and no arm64 OpenSSL is installed to link against:
# token-core's `vendored-openssl` feature builds OpenSSL from source (the openssl-src crate,
# pinned in Cargo.lock) for the target, with the C compiler cargo-lambda sets up (zig cc). It
# adds OpenSSL's own compilation to a cold build (docs/decisions.md, Passkeys).
features=(--features token-core/vendored-openssl)

# --locked: build exactly the committed Cargo.lock, as a deployment must.
echo "lambda-build: cargo lambda build --release --arm64 --locked ${packages[*]} ${features[*]} $*" >&2
cargo lambda build --release --arm64 --locked "${packages[@]}" "${features[@]}" "$@"

status=0
for name in "${FUNCTIONS[@]}"; do
    binary="target/lambda/$name/bootstrap"
    if [[ ! -f "$binary" ]]; then
        echo "lambda-build: missing $binary" >&2
        status=1
        continue
    fi
    description="$(file -b "$binary" 2>/dev/null || true)"
    if [[ -n "$description" && "$description" != *"$ELF_MACHINE"* ]]; then
        echo "lambda-build: $binary is not an $ELF_MACHINE executable: $description" >&2
        status=1
    fi
    glibc=""
    if command -v objdump >/dev/null; then
        glibc="$(objdump -T "$binary" 2>/dev/null | grep -o 'GLIBC_[0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -n1 || true)"
        if [[ -n "$glibc" && "$(printf '%s\n%s\n' "$glibc" "$MAX_GLIBC" | sort -V | tail -n1)" != "$MAX_GLIBC" ]]; then
            echo "lambda-build: $binary needs glibc $glibc, newer than the runtime's $MAX_GLIBC" >&2
            status=1
        fi
    fi
    size="$(stat -c %s "$binary")"
    printf '%-42s %10d bytes (%s MiB)%s\n' "$binary" "$size" \
        "$(awk -v s="$size" 'BEGIN { printf "%.1f", s / 1048576 }')" \
        "${glibc:+, needs glibc $glibc}"
done
exit "$status"
