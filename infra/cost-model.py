#!/usr/bin/env python3
"""What the service costs on AWS in us-east-1: per million grants of each kind, and per month
for a stated workload. Python standard library only.

Inputs, each replaceable by the benchmark's own numbers:

* DynamoDB calls per flow: the lines `<flow>: N calls {"GetItem": 1, ...}` that
  `cargo test -p integration-tests --test integration -- round_trips --nocapture` prints
  (`--round-trips LOG`); without a log, the counts of docs/benchmarks.md's table (DEFAULT_CALLS).
* CPU per request on one core of the bench machine (`--cpu-ms flow=MS`, repeatable;
  infra/bench.sh passes its own: 1000 x cores / the local server's req/s, an upper bound since
  the load generator shares the cores); defaults in DEFAULT_CPU_MS.
* Assumptions (stated in the output): item sizes, items per transaction, latency of one
  DynamoDB call from Lambda, Lambda's CPU share by memory size.

Usage: infra/cost-model.py [--round-trips LOG] [--cpu-ms flow=MS ...] [--ddb-ms MS]
"""

import argparse
import json
import math
import re
import sys

# Checked on 2026-11-25 against copies of AWS's pricing pages for us-east-1 (this machine cannot
# reach the AWS Price List API): DynamoDB on-demand after its November 2024 cut (airbyte.com's and
# others' copies of the DynamoDB pricing page), Lambda's first tier per architecture (the Lambda
# pricing page's table, as copied by cloudchipr.com and others), HTTP API's first 300 million
# requests (aws.amazon.com/api-gateway/pricing as quoted by apigatewaycost.com and amnic.com).
PRICE_DATE = "2026-11-25 (AWS list prices for us-east-1, cross-checked against copies of AWS's pricing pages)"
# DynamoDB on-demand, per million request units; storage per GB-month (Standard table class).
DDB_WRU = 0.625
DDB_RRU = 0.125
DDB_STORAGE_GB_MONTH = 0.25
# Lambda: per million requests, per GB-second (first pricing tier).
LAMBDA_REQUEST = 0.20
LAMBDA_GB_S = {"arm64": 0.0000133334, "x86_64": 0.0000166667}
# API Gateway HTTP API, per million requests (first 300 million a month).
HTTP_API_REQUEST = 1.00
MEMORY_MB = (128, 256, 512)
# Lambda allots CPU in proportion to memory: one full vCPU at 1,769 MB.
FULL_VCPU_MB = 1769

# Assumed, not measured: every item this service writes or reads is under 1 KB (a token's record,
# a family with its fixed fields, a counter), so one write unit per item written and one read
# unit per item read (reads strongly consistent: 4 KB per unit; queries read one or two such
# items, under 4 KB in all). A transaction costs two units per item.
ITEM_KB = 1.0
# Items per TransactWriteItems, from shared/store/src/dynamodb/families.rs: a new family
# writes the family, its refresh token, its access token's jti and its connection entry (4); a
# rotation updates the family and the presented token and writes the successor and the jti (4);
# a legacy exchange adds the exchange link (5).
TRANSACTION_ITEMS = {"legacy exchange": 5}
TRANSACTION_ITEMS_DEFAULT = 4

# docs/benchmarks.md, "DynamoDB calls per request" (warm instance, read cache on), when no log
# of the round-trip tests is given.
DEFAULT_CALLS = {
    "client_credentials": {"PutItem": 1},
    "password": {"UpdateItem": 1, "GetItem": 1, "TransactWriteItems": 1},
    "company authtoken grant": {"GetItem": 1, "TransactWriteItems": 1},
    "refresh": {"GetItem": 1, "TransactWriteItems": 1},
    "legacy exchange": {"GetItem": 3, "TransactWriteItems": 1},
    "company auth-token issue": {"GetItem": 2, "PutItem": 1},
    "otp request": {"Query": 1, "PutItem": 1, "UpdateItem": 2},
    "otp grant": {"GetItem": 3, "Query": 3, "UpdateItem": 4, "TransactWriteItems": 1},
}

# CPU per request on one core (ms). client_credentials and refresh from the local server's
# throughput in docs/benchmarks.md (2 cores / req/s); password and otp bound by Argon2id
# (about 15 ms of one core per hash, default parameters).
DEFAULT_CPU_MS = {
    "client_credentials": 0.12,
    "password": 16.0,
    "refresh": 0.8,
    "company authtoken grant": 0.5,
    "legacy exchange": 0.8,
    "company auth-token issue": 0.5,
    "otp request": 0.5,
    "otp grant": 1.0,
}
CPU_MS_FALLBACK = 1.0
# One DynamoDB call from a Lambda in the same region, round trip (assumed; a transaction
# counts as one call).
DDB_CALL_MS = 5.0
# lambda_http's own work per invocation (event decoding, response), assumed.
RUNTIME_MS = 0.5

LINE = re.compile(r"^(?:test \S+ \.\.\. )?([A-Za-z_][A-Za-z_ ,()'-]*): (\d+) calls (\{.*\})\s*$")

# The stated monthly workload (30 days).
COMPANIES = 1_000
USERS = 50_000
APPS_PER_COMPANY = 5
WORKLOAD = [
    ("password", USERS * 22, "each user signs in with a password once per working day (22 a month)"),
    ("refresh", USERS * 24 * 30, "each user's client refreshes hourly, around the clock"),
    ("client_credentials", COMPANIES * APPS_PER_COMPANY * 24 * 30,
     f"{APPS_PER_COMPANY} applications per company take an application token hourly"),
    ("company auth-token issue", COMPANIES * 30, "each company issues one auth token a day"),
    ("company authtoken grant", COMPANIES * 24 * 30, "each company's auth token is used hourly"),
    ("otp request", USERS // 10 * 30, "a tenth of the users ask for a one-time password daily"),
    ("otp grant", USERS // 10 * 30, "... and redeem it"),
]
# Live items: per user the user, login, e-mail, a family, its refresh token, its connection
# entry and about two unexpired jti records; per company and application a few. 100 bytes of
# DynamoDB overhead per item.
STORED_ITEMS = USERS * 8 + COMPANIES * (APPS_PER_COMPANY * 2 + 2)


def parse_round_trips(path):
    calls = {}
    with open(path, encoding="utf-8") as log:
        for line in log:
            match = LINE.match(line.strip())
            if match:
                flow, total, by_op = match.group(1), int(match.group(2)), json.loads(match.group(3))
                if sum(by_op.values()) != total:
                    sys.exit(f"cost-model: {flow}: {total} calls but {by_op}")
                # The first count of a flow is the one its budget is asserted on.
                calls.setdefault(flow, by_op)
    if not calls:
        sys.exit(f"cost-model: no `<flow>: N calls {{...}}` line in {path}")
    return calls


def units(flow, by_op):
    """(read units, write units) of one request."""
    per_item_w = math.ceil(ITEM_KB)
    per_item_r = math.ceil(ITEM_KB / 4)
    reads = writes = 0
    for op, n in by_op.items():
        if op in ("GetItem", "Query", "Scan"):
            reads += n * per_item_r
        elif op in ("PutItem", "UpdateItem", "DeleteItem"):
            writes += n * per_item_w
        elif op == "TransactWriteItems":
            writes += n * 2 * per_item_w * TRANSACTION_ITEMS.get(flow, TRANSACTION_ITEMS_DEFAULT)
        elif op == "TransactGetItems":
            reads += n * 2 * per_item_r * TRANSACTION_ITEMS.get(flow, TRANSACTION_ITEMS_DEFAULT)
        elif op == "BatchWriteItem":
            writes += n * per_item_w
        else:
            reads += n * per_item_r
    return reads, writes


def duration_ms(cpu_ms, calls, memory_mb, ddb_ms):
    share = min(1.0, memory_mb / FULL_VCPU_MB)
    return math.ceil(cpu_ms / share + calls * ddb_ms + RUNTIME_MS)


def per_million(flow, by_op, cpu_ms, ddb_ms):
    reads, writes = units(flow, by_op)
    calls = sum(by_op.values())
    ddb = reads * DDB_RRU + writes * DDB_WRU
    lam = {}
    for arch, gb_s in LAMBDA_GB_S.items():
        for mb in MEMORY_MB:
            ms = duration_ms(cpu_ms, calls, mb, ddb_ms)
            lam[(arch, mb)] = (ms, LAMBDA_REQUEST + 1e6 * ms / 1000 * mb / 1024 * gb_s)
    return {"calls": calls, "rru": reads, "wru": writes, "ddb": ddb, "lambda": lam}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--round-trips", help="output of the round_trips tests (--nocapture)")
    parser.add_argument("--cpu-ms", action="append", default=[], metavar="FLOW=MS")
    parser.add_argument("--ddb-ms", type=float, default=DDB_CALL_MS)
    parser.add_argument("--arch", default="arm64", choices=sorted(LAMBDA_GB_S))
    parser.add_argument("--memory", type=int, default=256, choices=MEMORY_MB)
    args = parser.parse_args()

    calls = parse_round_trips(args.round_trips) if args.round_trips else DEFAULT_CALLS
    cpu = dict(DEFAULT_CPU_MS)
    for item in args.cpu_ms:
        flow, _, ms = item.partition("=")
        cpu[flow] = float(ms)

    source = args.round_trips or "the defaults (docs/benchmarks.md's table)"
    print(f"Cost model, us-east-1, prices of {PRICE_DATE}")
    print(f"DynamoDB calls from {source}; DynamoDB on-demand ${DDB_WRU}/M write units, "
          f"${DDB_RRU}/M read units (strongly consistent), items assumed <= {ITEM_KB:g} KB, "
          f"transactions 2 units per item ({TRANSACTION_ITEMS_DEFAULT} items, legacy exchange 5)")
    print(f"Lambda ${LAMBDA_REQUEST}/M requests + GB-s (arm64 ${LAMBDA_GB_S['arm64']:.10f}, "
          f"x86_64 ${LAMBDA_GB_S['x86_64']:.10f}); duration = CPU ms x {FULL_VCPU_MB} MB / memory "
          f"+ {args.ddb_ms:g} ms per DynamoDB call + {RUNTIME_MS:g} ms, rounded up; "
          f"HTTP API ${HTTP_API_REQUEST}/M requests")
    print()
    print("Per million grants, USD (DynamoDB + Lambda; add the HTTP API's $1.00):")
    header = "| flow | calls | RRU | WRU | CPU ms | DynamoDB |"
    for arch in LAMBDA_GB_S:
        for mb in MEMORY_MB:
            header += f" {arch} {mb} MB |"
    print(header)
    print("|---" * (6 + len(LAMBDA_GB_S) * len(MEMORY_MB)) + "|")
    results = {}
    for flow, by_op in calls.items():
        cpu_ms = cpu.get(flow, CPU_MS_FALLBACK)
        r = per_million(flow, by_op, cpu_ms, args.ddb_ms)
        results[flow] = r
        row = f"| {flow} | {r['calls']} | {r['rru']} | {r['wru']} | {cpu_ms:g} | {r['ddb']:.2f} |"
        for key, (ms, usd) in r["lambda"].items():
            row += f" {usd:.2f} ({ms} ms) |"
        print(row)

    print()
    print(f"Monthly workload: {COMPANIES:,} companies, {USERS:,} users, Lambda {args.arch} "
          f"{args.memory} MB:")
    print("| flow | grants a month | DynamoDB | Lambda | HTTP API | what |")
    print("|---|---|---|---|---|---|")
    total = {"ddb": 0.0, "lambda": 0.0, "api": 0.0}
    for flow, count, what in WORKLOAD:
        r = results.get(flow)
        if r is None:
            print(f"| {flow} | {count:,} | – | – | – | not in the round-trip output |")
            continue
        ddb = r["ddb"] * count / 1e6
        lam = r["lambda"][(args.arch, args.memory)][1] * count / 1e6
        api = HTTP_API_REQUEST * count / 1e6
        total["ddb"] += ddb
        total["lambda"] += lam
        total["api"] += api
        print(f"| {flow} | {count:,} | {ddb:.2f} | {lam:.2f} | {api:.2f} | {what} |")
    storage_gb = STORED_ITEMS * (ITEM_KB * 1024 + 100) / 1024**3
    storage = storage_gb * DDB_STORAGE_GB_MONTH
    print(f"| storage | {STORED_ITEMS:,} items, {storage_gb:.2f} GB | {storage:.2f} | | | live items, 1 KB + 100 B each |")
    grand = total["ddb"] + storage + total["lambda"] + total["api"]
    print(f"| **total** | | **{total['ddb'] + storage:.2f}** | **{total['lambda']:.2f}** | "
          f"**{total['api']:.2f}** | **${grand:,.2f} a month** |")


if __name__ == "__main__":
    main()
