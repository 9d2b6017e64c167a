/**
 * A Web Request's signal follows the signal it was made with only while the Request lives (Node
 * holds it through a weak reference): the signal `fromWebRequest` hands the routes must go on
 * following after the caller dropped the Request, or a stream whose client left would never stop.
 */
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { expect, it } from "vitest";
import { fromWebRequest } from "./fetch.js";

setFlagsFromString("--expose_gc");
const gc = runInNewContext("gc") as () => void;

it("the request's signal still aborts with the caller's after the Request itself was collected", async () => {
  const caller = new AbortController();
  const converted = (() => fromWebRequest(new Request("http://gateway.test/v1/videos/vid_1/stream", { signal: caller.signal })))();
  for (let i = 0; i < 5; i++) {
    gc();
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  caller.abort(new Error("client left"));
  expect(converted.signal?.aborted).toBe(true);
});
