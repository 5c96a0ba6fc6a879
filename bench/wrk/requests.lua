-- wrk script for every HTTP scenario: pre-builds the requests once, then rotates them.
--   BENCH_METHOD   GET (default) or POST
--   BENCH_PATH     request path (default /api/v1/me/)
--   BENCH_TOKENS   file with one PAT per line: each request carries the next one as a Bearer token
--   BENCH_BODIES   file with one request body per line (POST): each request carries the next one
--   BENCH_HEADERS  extra headers "Name: value|Name: value"
--   BENCH_DELAY_MS mean pause of each connection before its next request (pacing; 0 = closed loop)
-- done() prints one line "BENCH_RESULT {json}" with counts, errors and latency percentiles (µs).
local method = os.getenv("BENCH_METHOD") or "GET"
local path = os.getenv("BENCH_PATH") or "/api/v1/me/"
local tokens_file = os.getenv("BENCH_TOKENS")
local bodies_file = os.getenv("BENCH_BODIES")
local extra = os.getenv("BENCH_HEADERS")
local delay_ms = tonumber(os.getenv("BENCH_DELAY_MS") or "0")

local prebuilt = {}
local next_index = 0

local function lines(file)
  local out = {}
  if file then
    for line in io.lines(file) do
      if #line > 0 then out[#out + 1] = line end
    end
  end
  return out
end

function init(args)
  local base = {}
  if extra then
    for name, value in string.gmatch(extra, "([^:|]+):%s*([^|]*)") do base[name] = value end
  end
  local tokens = lines(tokens_file)
  local bodies = lines(bodies_file)
  local n = math.max(#tokens, #bodies, 1)
  for i = 1, n do
    local headers = {}
    for k, v in pairs(base) do headers[k] = v end
    if #tokens > 0 then headers["Authorization"] = "Bearer " .. tokens[(i - 1) % #tokens + 1] end
    local body = nil
    if #bodies > 0 then
      body = bodies[(i - 1) % #bodies + 1]
      headers["Content-Type"] = headers["Content-Type"] or "application/json"
    end
    prebuilt[i] = wrk.format(method, path, headers, body)
  end
  -- Threads start at different offsets so they do not send the same token at the same time.
  next_index = math.random(0, n - 1)
end

function request()
  next_index = next_index % #prebuilt + 1
  return prebuilt[next_index]
end

-- Each pause is a whole number of ms drawn evenly from 0 to twice the mean. With the same pause
-- every time, the connections fall into step (wrk fires its timers on millisecond ticks, and a
-- connection's place in a burst stays its place in the next), so a paced load arrives as bursts of
-- all 50 connections, and the p99 is the wait of a burst's last request, for bare node:http with
-- most of its core idle as much as for the service. Random pauses keep the arrivals spread at the
-- same mean rate. The generator is LuaJIT's, unseeded: every run draws the same sequence.
if delay_ms > 0 then
  function delay()
    return math.random(0, 2 * delay_ms)
  end
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'BENCH_RESULT {"requests":%d,"duration_us":%d,"bytes":%d,' ..
    '"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},' ..
    '"latency_us":{"p50":%d,"p90":%d,"p99":%d,"p999":%d,"max":%d,"mean":%.1f}}\n',
    summary.requests, summary.duration, summary.bytes,
    e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency:percentile(99.9),
    latency.max, latency.mean))
end
