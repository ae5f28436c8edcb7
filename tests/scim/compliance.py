"""Run the scim2-tester compliance checker against a live SCIM 2.0 server.

    python compliance.py --base-url URL --token TOKEN [--resource-type NAME ...]
                         [--include-tag TAG ...] [--exclude-tag TAG ...] [--timeout SECONDS]

URL is the SCIM base (http://127.0.0.1:8080/scim/v2), TOKEN a bearer token sent on every request.
scim2-tester's check_server reads /ServiceProviderConfig, /ResourceTypes and /Schemas, then for
every resource type the server publishes (or only those named with --resource-type) creates,
reads, lists with attributes, searches, replaces, deletes and patches (add, remove, replace on
each writable attribute, extensions included). No tag is filtered out unless asked, so every
check the tool has is run; those whose feature the server does not announce (PATCH) it skips.

Prints one JSON object to stdout:

    {"results": [{"title": "object_creation", "status": "success", "reason": "...",
                  "resource_type": "User", "tags": ["crud:create"], "data": "..."}, ...],
     "counts": {"success": 40, "error": 1, ...}}

status is the name of scim2_tester.Status in lower case: success, compliant, acceptable and
deviation are passes (MUST / SHOULD / MAY / a SHOULD not followed), error (a MUST broken) and
critical (a security risk or a broken protocol) are failures, skipped is neither. data, when
the check left any, is its repr cut to a few hundred characters. Exits 0 whenever the checker
ran, whatever it found; 3 with a message on stderr when the server cannot be reached at all,
1 when the checker itself crashed.
"""

import argparse
import json
import sys
import traceback
from collections import Counter

import httpx2
from scim2_client.engines.httpx2 import SyncSCIMClient
from scim2_tester import Status, check_server, get_all_available_tags

DATA_LIMIT = 400


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base-url", required=True, help="the SCIM base URL")
    parser.add_argument("--token", required=True, help="a bearer token")
    parser.add_argument(
        "--resource-type",
        action="append",
        help="check only this resource type (repeatable); default: all the server publishes",
    )
    parser.add_argument(
        "--include-tag",
        action="append",
        help=f"run only checks with this tag (repeatable); tags: {', '.join(get_all_available_tags())}",
    )
    parser.add_argument(
        "--exclude-tag", action="append", help="skip checks with this tag (repeatable)"
    )
    parser.add_argument("--timeout", type=float, default=30.0, help="per request, in seconds")
    return parser.parse_args(argv)


def http_client(base_url, token, timeout):
    # The base URL must end with a slash for the relative endpoints ("Users") to stay under it.
    return httpx2.Client(
        base_url=base_url.rstrip("/") + "/",
        headers={"Authorization": f"Bearer {token}"},
        timeout=timeout,
    )


def reachable(client):
    """Tell whether the server answers HTTP at all; any status will do."""
    try:
        client.get("ServiceProviderConfig")
    except httpx2.RequestError as exc:
        return f"{type(exc).__name__}: {exc}"
    return None


def short(value):
    if value is None:
        return None
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= DATA_LIMIT else text[: DATA_LIMIT - 3] + "..."


def result_json(result):
    entry = {
        "title": result.title,
        "status": result.status.name.lower(),
        "reason": result.reason,
        "resource_type": result.resource_type,
        "tags": sorted(result.tags),
    }
    data = short(result.data)
    if data is not None:
        entry["data"] = data
    return entry


def main(argv=None):
    args = parse_args(argv)
    with http_client(args.base_url, args.token, args.timeout) as client:
        unreachable = reachable(client)
        if unreachable:
            print(f"compliance: cannot reach {args.base_url}: {unreachable}", file=sys.stderr)
            return 3
        scim = SyncSCIMClient(client)
        try:
            results = check_server(
                scim,
                raise_exceptions=False,
                include_tags=set(args.include_tag) if args.include_tag else None,
                exclude_tags=set(args.exclude_tag) if args.exclude_tag else None,
                resource_types=args.resource_type,
            )
        except Exception:
            print("compliance: the checker crashed:", file=sys.stderr)
            traceback.print_exc(file=sys.stderr)
            return 1

    entries = [result_json(r) for r in results]
    counts = Counter(e["status"] for e in entries)
    json.dump(
        {"results": entries, "counts": {s.name.lower(): counts[s.name.lower()] for s in Status}},
        sys.stdout,
        indent=1,
    )
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
