-- wrk script: prints throughput and latency percentiles in the same form
-- as signed.lua, for scripts to compare.
function done(summary, latency, requests)
  local secs = summary.duration / 1e6
  io.write(string.format("requests: %d in %.2f s, errors: status %d, connect %d, read %d, timeout %d\n",
    summary.requests, secs, summary.errors.status, summary.errors.connect, summary.errors.read,
    summary.errors.timeout))
  io.write(string.format("throughput_rps: %.0f\n", summary.requests / secs))
  io.write(string.format("latency_p50_ms: %.3f\n", latency:percentile(50) / 1000))
  io.write(string.format("latency_p99_ms: %.3f\n", latency:percentile(99) / 1000))
end
