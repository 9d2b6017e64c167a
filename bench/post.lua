-- wrk script of the process-separated benchmarks: method, body and bearer token from the
-- environment (WRK_METHOD, WRK_BODY, WRK_AUTH), JSON content type.
wrk.method = os.getenv("WRK_METHOD") or "GET"
local body = os.getenv("WRK_BODY")
if body ~= nil and body ~= "" then
  wrk.body = body
  wrk.headers["Content-Type"] = "application/json"
end
local auth = os.getenv("WRK_AUTH")
if auth ~= nil and auth ~= "" then
  wrk.headers["Authorization"] = auth
end
