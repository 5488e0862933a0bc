-- wrk script: POST the Cupcake Corner app's order JSON, each connection waiting PACE_MS
-- milliseconds (environment, default 4) before each request: a steady rate of about
-- connections x 1000 / (PACE_MS + latency) orders a second, below saturation.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"type":2,"quantity":5,"specialRequestEnabled":true,"extraFrosting":true,"addSprinkles":false,"name":"Taylor Swift","streetAddress":"1 Main St","city":"Nashville","zip":"37201"}'
local pace = tonumber(os.getenv("PACE_MS") or "4")
function delay()
   return pace
end
