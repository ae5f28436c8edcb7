-- wrk script of infra/bench.sh: POST a form body to the token endpoint with HTTP Basic client
-- authentication, and print one machine-readable result line at the end.
--
--   BENCH_AUTHORIZATION="Basic <base64 id:secret>" BENCH_FORM="grant_type=client_credentials" \
--     wrk -s token.lua http://127.0.0.1:PORT/path
wrk.method = "POST"
wrk.body = os.getenv("BENCH_FORM") or "grant_type=client_credentials"
wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"
wrk.headers["Authorization"] = os.getenv("BENCH_AUTHORIZATION")

function done(summary, latency, requests)
  local seconds = summary.duration / 1e6
  local errors = summary.errors
  io.write(string.format(
    "BENCH_RESULT req_per_s=%.0f non_2xx=%d socket_errors=%d p50_ms=%.2f p99_ms=%.2f\n",
    summary.requests / seconds,
    errors.status,
    errors.connect + errors.read + errors.write + errors.timeout,
    latency:percentile(50) / 1000,
    latency:percentile(99) / 1000))
end
