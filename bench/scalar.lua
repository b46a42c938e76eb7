-- scalar.lua - Lua 5.4 on the scalar-interpreter workloads (the stretch anchor).
local quick = arg[1] == "quick"
local reps = quick and 5 or 7
local function measure(name, f)
  f()
  local t = {}
  for r = 1, reps do
    local t0 = os.clock()
    f()
    t[r] = (os.clock() - t0) * 1000
  end
  table.sort(t)
  print(string.format('{"workload": "%s", "impl": "lua5.4", "ms": %.6f, "min": %.6f, "max": %.6f, "reps": %d}',
    name, t[(reps + 1) // 2], t[1], t[reps], reps))
end
local function fib(n) if n < 2 then return n end return fib(n - 1) + fib(n - 2) end
measure("fib(27)", function() return fib(27) end)
measure("loop 3M float adds", function()
  local s = 0.0
  for i = 0, 2999999 do s = s + 1.5 end
  return s
end)
