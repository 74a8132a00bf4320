-- wrk script: cycles through pre-signed requests read from a file (one
-- "<signature header>\t<body>" per line) and prints a JSON summary at the end.
local requests = {}
local i = 0

function init(args)
  local file = assert(io.open(args[1], "r"))
  local path = args[2]
  local header = args[3] or "Stripe-Signature"
  for line in file:lines() do
    local signature, body = line:match("^([^\t]*)\t(.*)$")
    requests[#requests + 1] = wrk.format("POST", path, { ["Content-Type"] = "application/json", [header] = signature }, body)
  end
  file:close()
end

function request()
  i = i % #requests + 1
  return requests[i]
end

function done(summary, latency, _)
  local e = summary.errors
  io.write(string.format(
    'JSON{"requests":%d,"socketErrors":%d,"non2xx":%d,"p50":%.3f,"p90":%.3f,"p99":%.3f,"max":%.3f,"seconds":%.3f}\n',
    summary.requests, e.connect + e.read + e.write + e.timeout, e.status,
    latency:percentile(50) / 1000, latency:percentile(90) / 1000, latency:percentile(99) / 1000, latency.max / 1000,
    summary.duration / 1e6))
end
