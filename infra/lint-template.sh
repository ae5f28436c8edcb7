#!/usr/bin/env bash
# Validates the CloudFormation / SAM templates with cfn-lint. Fails on any error.
#
# Two passes, because cfn-lint 1.x checks AWS::Serverless::* resources only shallowly:
#   1. cfn-lint on the templates as written (template.yaml, infra/global-table.yaml);
#   2. the SAM transform (aws-sam-translator, offline) of template.yaml, then cfn-lint on the
#      CloudFormation it expands to (Lambda functions, HTTP API routes and stage, permissions).
# Then infra/check-iam.py checks, on both forms of template.yaml, that every DynamoDB write a
# role allows is limited by a `dynamodb:LeadingKeys` condition; that the prefixes are exactly the
# item kinds its function writes is the unit test `store::dynamodb::template_iam`.
#
# Tools live in an ignored virtualenv, .cache/venv, created on first use (PyPI only).
# Usage: infra/lint-template.sh            (from anywhere inside the repository)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

VENV="$ROOT/.cache/venv"
CFN_LINT_SPEC='cfn-lint>=1.58,<2'
SAM_TRANSLATOR_SPEC='aws-sam-translator>=1.100,<2'
TEMPLATES=(template.yaml infra/global-table.yaml)

# shellcheck source=infra/lib/venv.sh
source "$ROOT/infra/lib/venv.sh"
if ! "$VENV/bin/python" -c 'import cfnlint, samtranslator' 2>/dev/null; then
    echo "lint-template: installing $CFN_LINT_SPEC $SAM_TRANSLATOR_SPEC into $VENV" >&2
    venv_install "$VENV" "$CFN_LINT_SPEC" "$SAM_TRANSLATOR_SPEC"
fi

echo "lint-template: $("$VENV/bin/cfn-lint" --version)" >&2

# Findings of every level are printed; only errors (or cfn-lint failing to run) fail.
lint() {
    "$VENV/bin/cfn-lint" --non-zero-exit-code error -- "$@"
}

# Pass 1.
if ! lint "${TEMPLATES[@]}"; then
    echo "lint-template: cfn-lint found errors in ${TEMPLATES[*]}" >&2
    exit 1
fi

# Pass 2. The transform needs a region name only to build ARNs; nothing is sent to AWS.
# Local CodeUri paths are replaced by a placeholder S3 location, as `sam package` would.
transformed="$(mktemp -d)/template.transformed.json"
trap 'rm -rf "$(dirname "$transformed")"' EXIT
AWS_DEFAULT_REGION="${AWS_DEFAULT_REGION:-us-east-1}" "$VENV/bin/python" - template.yaml "$transformed" <<'PY'
import json
import sys

from cfnlint.decode import decode
from samtranslator.translator.transform import transform

source, target = sys.argv[1], sys.argv[2]
template, errors = decode(source)
if errors:
    for error in errors:
        print(f"lint-template: {source}: {error}", file=sys.stderr)
    sys.exit(1)

for resource in template.get("Resources", {}).values():
    properties = resource.get("Properties") or {}
    uri = properties.get("CodeUri")
    if resource.get("Type") == "AWS::Serverless::Function" and isinstance(uri, str) \
            and not uri.startswith("s3://"):
        properties["CodeUri"] = f"s3://placeholder-bucket/{uri}"


class NoManagedPolicies:
    """The template names no managed policies; never ask IAM for them."""

    def load(self):
        return {}


try:
    expanded = transform(template, {}, NoManagedPolicies())
except Exception as exc:  # the translator's errors carry a list of causes
    print(f"lint-template: SAM transform of {source} failed: {exc}", file=sys.stderr)
    for cause in getattr(exc, "causes", []):
        print(f"  - {getattr(cause, 'message', cause)}", file=sys.stderr)
    sys.exit(1)

with open(target, "w", encoding="utf-8") as out:
    json.dump(expanded, out, indent=1, default=str)
PY

if ! lint "$transformed"; then
    echo "lint-template: cfn-lint found errors in the SAM-transformed template.yaml" >&2
    exit 1
fi

if ! "$VENV/bin/python" infra/check-iam.py template.yaml "$transformed"; then
    echo "lint-template: a function role may write more than the items it owns" >&2
    exit 1
fi

echo "lint-template: ${TEMPLATES[*]} (and the SAM transform of template.yaml): no errors" >&2
