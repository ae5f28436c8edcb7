-- wrk script of infra/bench.sh: refresh token rotation. Every connection sends a refresh token
-- that was never used and takes the successor from the answer for a later request, so each
-- request is a first use that rotates its family (not a retry, not reuse).
--
--   BENCH_AUTHORIZATION="Basic <base64 id:secret>" BENCH_REFRESH_TOKENS=<file, one per line> \
--     BENCH_SCRIPTS=infra/bench BENCH_WRK_THREADS=2 wrk -t2 -c32 -s refresh.lua http://127.0.0.1:PORT/v0/token
-- The file holds more tokens than connections (wrk calls request() once more per thread, to
-- check it, and drops that request); thread i of n takes lines i, i+n, ...
-- The result line is token.lua's.
dofile(os.getenv("BENCH_SCRIPTS") .. "/token.lua")

-- wrk runs each thread's init() right after its setup(), before the next thread exists, so
-- the number of threads comes from the environment.
local threads = 0
function setup(thread)
  thread:set("index", threads)
  threads = threads + 1
end

local queue, head, tail = {}, 1, 0

function init(args)
  local line = 0
  for token in io.lines(os.getenv("BENCH_REFRESH_TOKENS")) do
    if line % tonumber(os.getenv("BENCH_WRK_THREADS")) == index then
      tail = tail + 1
      queue[tail] = token
    end
    line = line + 1
  end
end

function request()
  local token = "spent"
  if head <= tail then
    token = queue[head]
    queue[head] = nil
    head = head + 1
  end
  return wrk.format(nil, nil, nil, "grant_type=refresh_token&refresh_token=" .. token)
end

function response(status, headers, body)
  local successor = status == 200 and body:match('"refresh_token":"([^"]+)"')
  if successor then
    tail = tail + 1
    queue[tail] = successor
  end
end
