-- wrk script: every request carries its own pre-signed headers (a nonce can
-- be used only once). Thread i takes lines i, i+n, i+2n... of HEADERS_FILE.
local threads = {}
local counter = 0

function setup(thread)
  thread:set("id", counter)
  table.insert(threads, thread)
  counter = counter + 1
end

function init(args)
  local total = tonumber(os.getenv("WRK_THREADS") or "1")
  local path = os.getenv("HEADERS_FILE")
  target = os.getenv("TARGET_PATH") or "/api/balances"
  signed = {}
  local i = 0
  for line in io.lines(path) do
    if i % total == id then
      local c, t, n, s = line:match("([^\t]+)\t([^\t]+)\t([^\t]+)\t([^\t]+)")
      table.insert(signed, {c, t, n, s})
    end
    i = i + 1
  end
  next_index = 1
end

function request()
  local h = signed[next_index]
  if h == nil then
    -- Out of fresh nonces: stop this thread's load rather than replay.
    wrk.thread:stop()
    return wrk.format("GET", target)
  end
  next_index = next_index + 1
  return wrk.format("GET", target, {
    ["x-auth-client"] = h[1],
    ["x-auth-timestamp"] = h[2],
    ["x-auth-nonce"] = h[3],
    ["x-auth-signature"] = h[4],
    ["accept"] = "application/json",
  })
end

-- The same summary lines as report.lua (scripts run from the repository root).
dofile("bench/lib/report.lua")
