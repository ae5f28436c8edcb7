#!/usr/bin/env python3
"""What the service costs on AWS in us-east-1: per million grants of each kind, and per month
for a stated workload. Python standard library only.

Inputs, each replaceable by the benchmark's own numbers:

* DynamoDB calls, write and read units and the items written per flow: the lines
  `<flow>: N calls {"GetItem": 1, ...} W write units, R read units, I items written (P puts of
  [bytes, ...] B; U updates; D deletes)` that `cargo test -p integration-tests --test integration
  -- round_trips --nocapture` prints (`--round-trips LOG`), counted at the wire (the proxy in
  front of DynamoDB Local sizes every item by DynamoDB's rules); without a log, the figures of
  the last such run (COUNTED).
* CPU per request on one core of the bench machine (`--cpu-ms flow=MS`, repeatable;
  infra/bench.sh passes its own: 1000 x cores / the local server's req/s, an upper bound since
  the load generator shares the cores); defaults in DEFAULT_CPU_MS.
* Assumptions (stated in the output): latency of one DynamoDB call from Lambda, Lambda's CPU
  share by memory size, the stored items' overhead.
* The published prices of Amazon Cognito and Auth0 for the same workload (COMPARISON), each with
  its source and the date it was read; a price that could not be confirmed says so.

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

# The round-trip tests' figures of 2026-11-27 14:40 UTC (docs/benchmarks.md, "DynamoDB calls
# per request"), used when no log is given: calls by operation, write units, read units
# (DynamoDB's own rules, counted at the wire: 1 write unit per KB started, 2 per KB per
# transaction item, reads 1 per 4 KB strongly consistent, 0.5 eventually), the sizes of the
# items put, and of those the audit trail's (`AUDIT#`, kept 400 days). Rate-limit counters
# included. Update with a run's log when a flow's writes change.
COUNTED = {
    "client_credentials": ({"PutItem": 1, "UpdateItem": 1}, 2, 0, [254], []),
    "password": ({"GetItem": 1, "TransactWriteItems": 1, "UpdateItem": 3}, 19, 1,
                 [390, 292, 176, 139, 517, 514, 514], [517, 514, 514]),
    "company authtoken grant": ({"GetItem": 1, "TransactWriteItems": 1, "UpdateItem": 2}, 14, 1,
                                [389, 301, 176, 581, 578, 578], [581, 578, 578]),
    "refresh": ({"GetItem": 1, "PutItem": 2, "UpdateItem": 2}, 4, 1, [292, 190], [190]),
    "legacy exchange": ({"GetItem": 3, "TransactWriteItems": 1}, 16, 3,
                        [365, 292, 176, 139, 524, 521, 521, 220], [524, 521, 521]),
    "company auth-token issue": ({"GetItem": 2, "TransactWriteItems": 1}, 6, 2, [328, 529, 526],
                                 [529, 526]),
    "otp request": ({"PutItem": 1, "Query": 1, "UpdateItem": 2}, 3, 1, [473], []),
    "otp grant": ({"GetItem": 3, "Query": 3, "TransactWriteItems": 1, "UpdateItem": 4}, 18, 6,
                  [390, 292, 176, 139, 512, 509, 509], [512, 509, 509]),
    "authorization_code": ({"GetItem": 1, "TransactWriteItems": 1, "UpdateItem": 2}, 16, 1,
                           [422, 299, 176, 139, 527, 524, 524], [527, 524, 524]),
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

LINE = re.compile(
    r"^(?:test \S+ \.\.\. )?(?P<flow>[A-Za-z_][A-Za-z_ ,()'-]*): (?P<calls>\d+) calls "
    r"(?P<ops>\{[^}]*\})(?: (?P<wru>[\d.]+) write units, (?P<rru>[\d.]+) read units, "
    r"\d+ items written \(\d+ puts of \[(?P<sizes>[^\]]*)\] B;"
    r"(?: audit \[(?P<audit>[^\]]*)\] B;)?[^)]*\))?\s*$")

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
WORKLOAD_GRANTS = {flow: count for flow, count, _ in WORKLOAD}
# Live items: per user the user, login, e-mail, a family, its connection entry and about two
# unexpired jti records (a family's first refresh token names its family and has no record);
# per company and application a few. Each the mean size of the items the counted flows put,
# plus DynamoDB's 100 bytes of overhead per item.
STORED_ITEMS = USERS * 7 + COMPANIES * (APPS_PER_COMPANY * 2 + 2)
ITEM_OVERHEAD_BYTES = 100
# Audit events are kept 400 days (contract part 16), so at steady state the table holds 400 days
# of each grant's audit puts, as counted (docs/decisions.md, Audit events, "Keys."): a started
# family's `family.started` under its family, client and principal; a refresh's compact
# `family.refreshed` under its family only.
AUDIT_RETENTION_DAYS = 400
# A line with more calls is a flood of many grants (the hot-item tests), not one grant's cost.
FLOOD_CALLS = 50
# The goal for the stated workload (issue 46).
MONTHLY_GOAL_USD = 100.0

# The same workload on managed services, at their published prices (read 2026-11-27 through
# stored copies of the pages: this machine cannot reach the vendors' sites). A price that could
# not be confirmed is None and printed as such, never guessed.
APP_CLIENTS = COMPANIES * APPS_PER_COMPANY
COMPARISON = {
    "cognito_m2m_per_1000": (2.25, "https://cur.vantage-api.com/aws/amazoncognito/user-pools-m2m/"
                             "cupm2mtokenrequestsfull (AWS billing code USE1-CUPM2MTokenRequestsFull: "
                             "from $2.250 per 1,000 token requests, graduated tiers; updated 2025-04-27)"),
    "cognito_app_client_month": (6.0, "https://www.rhythmictech.com/blog/the-aws-cognito-m2m-bill-has-"
                                 "come-due-what-you-need-to-know/ ($6 a month per M2M app client, May 2025)"),
    "cognito_mau": (None, "the per-MAU rate of the Lite and Essentials plans above their free "
                    "allowance: not confirmed (no stored copy of aws.amazon.com/cognito/pricing "
                    "states it); a token refresh makes a user a MAU "
                    "(https://www.aws.amazon.com/de/cognito/pricing/)"),
    "auth0_plans": (None, "self-service plan prices not confirmed from a stored page; Auth0 counts "
                    "each M2M token issued against the plan's monthly quota "
                    "(https://community.auth0.com/t/m2m-tokens-quota/68980) and a MAU as a user "
                    "with a login or sign-up in the calendar month "
                    "(https://auth0.com/docs/troubleshoot/customer-support/manage-subscriptions/"
                    "monitor-subscription-usage); the Developer Pro plan capped at 7,000 MAUs and "
                    "500,000+ M2M tokens a month in 2020 "
                    "(https://community.auth0.com/t/developer-pro-plan-numbers-make-no-sense/44211), "
                    "below 50,000 users: an Enterprise plan, priced on request"),
}


def parse_round_trips(path):
    """{flow: (calls by operation, write units, read units, put sizes, audit put sizes)} from a
    test log."""
    flows = {}
    with open(path, encoding="utf-8") as log:
        for line in log:
            match = LINE.match(line.strip())
            if not match:
                continue
            flow, total, by_op = match["flow"], int(match["calls"]), json.loads(match["ops"])
            if sum(by_op.values()) != total:
                sys.exit(f"cost-model: {flow}: {total} calls but {by_op}")
            if total > FLOOD_CALLS:
                continue
            if match["wru"] is None:
                # A log from before the units were counted: today's counted figures, if any.
                if flow in COUNTED:
                    flows.setdefault(flow, COUNTED[flow])
                continue
            sizes = [int(s) for s in re.findall(r"\d+", match["sizes"])]
            if match["audit"] is not None:
                audit = [int(s) for s in re.findall(r"\d+", match["audit"])]
            else:
                # A log from before the audit puts were listed apart: today's counted ones.
                audit = COUNTED.get(flow, (None,) * 5)[4] or []
            # The first count of a flow is the one its budget is asserted on.
            flows.setdefault(flow, (by_op, float(match["wru"]), float(match["rru"]), sizes, audit))
    if not flows:
        sys.exit(f"cost-model: no `<flow>: N calls {{...}} W write units, ...` line in {path}")
    return flows


def duration_ms(cpu_ms, calls, memory_mb, ddb_ms):
    share = min(1.0, memory_mb / FULL_VCPU_MB)
    return math.ceil(cpu_ms / share + calls * ddb_ms + RUNTIME_MS)


def per_million(counted, cpu_ms, ddb_ms):
    by_op, writes, reads, _, _ = counted
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
    parser.add_argument("--write-units", action="append", default=[], metavar="FLOW=WRU",
                        help="a flow's write units instead of the counted ones (a planned change)")
    args = parser.parse_args()

    counted = dict(parse_round_trips(args.round_trips) if args.round_trips else COUNTED)
    for item in args.write_units:
        flow, _, wru = item.partition("=")
        if flow not in counted:
            sys.exit(f"cost-model: --write-units {item}: no counted flow {flow!r}")
        by_op, _, rru, sizes, audit = counted[flow]
        counted[flow] = (by_op, float(wru), rru, sizes, audit)
        print(f"(planned: {flow} at {wru} write units instead of the counted figure)")
    cpu = dict(DEFAULT_CPU_MS)
    for item in args.cpu_ms:
        flow, _, ms = item.partition("=")
        cpu[flow] = float(ms)

    source = args.round_trips or "the counted figures of 2026-11-27 (COUNTED)"
    print(f"Cost model, us-east-1, prices of {PRICE_DATE}")
    print(f"DynamoDB calls, write and read units counted at the wire, from {source}; "
          f"DynamoDB on-demand ${DDB_WRU}/M write units, ${DDB_RRU}/M read units")
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
    for flow, figures in counted.items():
        cpu_ms = cpu.get(flow, CPU_MS_FALLBACK)
        r = per_million(figures, cpu_ms, args.ddb_ms)
        results[flow] = r
        row = f"| {flow} | {r['calls']} | {r['rru']:g} | {r['wru']:g} | {cpu_ms:g} | {r['ddb']:.2f} |"
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
    sizes = [size for figures in counted.values() for size in figures[3]]
    item_bytes = sum(sizes) / len(sizes) if sizes else 1024
    storage_gb = STORED_ITEMS * (item_bytes + ITEM_OVERHEAD_BYTES) / 1024**3
    storage = storage_gb * DDB_STORAGE_GB_MONTH
    print(f"| storage | {STORED_ITEMS:,} items, {storage_gb:.2f} GB | {storage:.2f} | | | live items, "
          f"{item_bytes:.0f} B (the counted puts' mean) + {ITEM_OVERHEAD_BYTES} B each |")
    kept = AUDIT_RETENTION_DAYS / 30
    audit_puts = {flow: counted[flow][4] for flow, _, _ in WORKLOAD if flow in counted}
    audit_items = sum(len(audit_puts.get(flow, [])) * count for flow, count, _ in WORKLOAD) * kept
    audit_bytes = sum(sum(size + ITEM_OVERHEAD_BYTES for size in audit_puts.get(flow, [])) * count
                      for flow, count, _ in WORKLOAD) * kept
    audit_gb = audit_bytes / 1024**3
    audit = audit_gb * DDB_STORAGE_GB_MONTH
    each = "; ".join(f"{flow} [{', '.join(map(str, sizes))}] B"
                     for flow, sizes in audit_puts.items() if sizes)
    print(f"| audit events | {audit_items:,.0f} items, {audit_gb:.0f} GB | {audit:.2f} | | | kept "
          f"{AUDIT_RETENTION_DAYS} days (steady state), each grant's audit puts as counted "
          f"({each}), + {ITEM_OVERHEAD_BYTES} B each |")
    storage += audit
    grand = total["ddb"] + storage + total["lambda"] + total["api"]
    print(f"| **total** | | **{total['ddb'] + storage:.2f}** | **{total['lambda']:.2f}** | "
          f"**{total['api']:.2f}** | **${grand:,.2f} a month** |")
    verdict = "met" if grand <= MONTHLY_GOAL_USD else f"not met, ${grand - MONTHLY_GOAL_USD:,.2f} over"
    print(f"Goal: ${MONTHLY_GOAL_USD:.0f} a month or less: {verdict}")
    refreshes = WORKLOAD_GRANTS["refresh"]
    if "refresh" in results:
        # What a refresh may cost in write units for the total to meet the goal, all else equal.
        spare = MONTHLY_GOAL_USD - (grand - results["refresh"]["wru"] * DDB_WRU * refreshes / 1e6)
        most = spare / (DDB_WRU * refreshes / 1e6)
        print(f"The goal needs a refresh at {most:.1f} write units or fewer (counted: "
              f"{results['refresh']['wru']:g}), everything else as above"
              + ("; out of reach by write units alone" if most < 1 else ""))
    comparison(grand)


def comparison(ours):
    """The workload's tokens beside the managed services' published prices."""
    m2m = WORKLOAD_GRANTS["client_credentials"]
    per_1000, m2m_source = COMPARISON["cognito_m2m_per_1000"]
    per_client, client_source = COMPARISON["cognito_app_client_month"]
    cognito_m2m = m2m / 1000 * per_1000 + APP_CLIENTS * per_client
    print()
    print("Beside managed services, the same workload a month (prices read 2026-11-27; sources below):")
    print("| service | machine-to-machine tokens | users | a month |")
    print("|---|---|---|---|")
    print(f"| this service (above) | {m2m:,} `client_credentials` grants | {USERS:,} users, "
          f"hourly refreshes | ${ours:,.2f} |")
    print(f"| Amazon Cognito | {m2m:,} token requests x ${per_1000}/1,000 (the first tier's rate; "
          "graduated tiers, their thresholds not in the source) + "
          f"{APP_CLIENTS:,} app clients x ${per_client:g} = ${cognito_m2m:,.2f} | {USERS:,} MAUs "
          f"(every refreshing user is one): per-MAU rate not confirmed | "
          f"at least ${cognito_m2m:,.2f} (M2M alone) |")
    print(f"| Auth0 | {m2m:,} M2M tokens, counted against the plan's quota | {USERS:,} MAUs | "
          "not confirmed: above the self-service plans' limits, an Enterprise plan priced on request |")
    print()
    for key, (_, source) in COMPARISON.items():
        print(f"- {key}: {source}")


if __name__ == "__main__":
    main()
