/**
 * Conformance of an {@link HttpClient} for streamed upstream responses (`stream: true`,
 * `chunks()`) and of the OpenAI-compatible provider's `chat` / `chatStream` over it, against a
 * local stub upstream. Core runs it with `createFetchHttpClient()`, @tollgate/node with
 * `createUndiciHttpClient()`. Deadlines are 150–200 ms against stub gaps of 30–40 ms (must pass)
 * and 600 ms (must time out).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GatewayError } from "@tollgate/core";
import type { HttpClient } from "@tollgate/core";
import { createOpenAICompatibleProvider } from "@tollgate/core";
import { OK_COMPLETION, OK_STREAM_EVENTS, startChatUpstreamStub, STUB_API_KEY, type ChatUpstreamStub } from "./chat-upstream-stub.js";

/** Every item until the end or the first error. */
async function drainAll<T>(iterable: AsyncIterable<T>): Promise<{ items: T[]; error?: unknown }> {
  const items: T[] = [];
  try {
    for await (const item of iterable) items.push(item);
  } catch (error) {
    return { items, error };
  }
  return { items };
}

/** The outcome of a stub response, or a clear failure after 2 s instead of the test timeout. */
function within<T>(p: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error("the stub's response neither finished nor closed")), 2_000)));
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

function expectGatewayError(error: unknown, code: "upstream_error" | "upstream_timeout"): GatewayError {
  expect(error).toBeInstanceOf(GatewayError);
  expect((error as GatewayError).code).toBe(code);
  expect((error as Error).message).not.toContain(STUB_API_KEY);
  return error as GatewayError;
}

const text = (parts: Uint8Array[]) => parts.map((p) => new TextDecoder().decode(p)).join("");

const TOOLS = [{ type: "function", function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } } }];
const RESPONSE_FORMAT = { type: "json_schema", json_schema: { name: "weather", schema: { type: "object" }, strict: true } };
const MESSAGES = [{ role: "user", content: "Weather in Paris?" }];

/** Runs the suite with `http` (one client for every test; the caller closes it afterwards). */
export function runChatUpstreamSuite(name: string, http: HttpClient): void {
  describe(`streamed upstream responses (${name})`, () => {
    let stub: ChatUpstreamStub;
    beforeAll(async () => {
      stub = await startChatUpstreamStub();
    });
    afterAll(() => stub.close());

    const get = (path: string, timeoutMs: number, stream = true) =>
      http({ method: "GET", url: `${stub.url}${path}`, timeoutMs, ...(stream ? { stream } : {}) });
    const provider = (timeoutMs = 5_000, client = http) =>
      createOpenAICompatibleProvider({ baseUrl: `${stub.url}/v1/`, apiKey: STUB_API_KEY, http: client, timeoutMs });
    const body = (model: string, extra: Record<string, unknown> = {}) => ({ model, messages: MESSAGES, ...extra });

    describe("HttpClient with stream: true", () => {
      it("reads a body that lasts longer than timeoutMs in gaps shorter than it; the whole-exchange deadline would cut it", async () => {
        const started = Date.now();
        // 8 pieces 80 ms apart (640 ms in all) under a 400 ms deadline: generous gaps for a loaded machine.
        const chunks = await drainAll((await get("/raw/steady?t=chunks", 400)).chunks!());
        expect([chunks.error, text(chunks.items)]).toEqual([undefined, "c0c1c2c3c4c5c6c7"]);
        expect(chunks.items.length).toBeGreaterThan(1);
        expect(Date.now() - started).toBeGreaterThan(400);
        expect(await (await get("/raw/steady?t=text", 400)).text()).toBe("c0c1c2c3c4c5c6c7");
        const whole = await get("/raw/steady?t=whole", 400, false);
        expectGatewayError(await whole.text().catch((e: unknown) => e), "upstream_timeout");
      });

      it("yields chunks as they arrive and throws upstream_timeout after an idle gap over timeoutMs", async () => {
        const { items, error } = await drainAll((await get("/raw/hang?t=idle", 150)).chunks!());
        expect(text(items)).toBe("first");
        expect(expectGatewayError(error, "upstream_timeout").status).toBe(504);
        expect(await within(stub.outcome("/raw/hang?t=idle"))).toBe("cut");
      });

      it("reads a body once: chunks() excludes text() and bytes()", async () => {
        const streamed = await get("/raw/steady?t=once-a", 2_000);
        const iterator = streamed.chunks!()[Symbol.asyncIterator]();
        await expect(streamed.text()).rejects.toBeInstanceOf(TypeError);
        await iterator.return!();
        const whole = await get("/raw/steady?t=once-b", 2_000, false);
        expect(new TextDecoder().decode(await whole.bytes())).toBe("c0c1c2c3c4c5c6c7");
        expect(() => whole.chunks!()).toThrow(TypeError);
      });

      it("releases the connection when return() comes before the first chunk", async () => {
        const res = await get("/raw/hang?t=return", 5_000);
        await res.chunks!()[Symbol.asyncIterator]().return!();
        expect(await within(stub.outcome("/raw/hang?t=return"))).toBe("cut");
      });
    });

    describe("chat", () => {
      it("sends the body untouched with stream: false and answers the upstream's bytes, usage and output text", async () => {
        const r = await provider().chat!({ body: body("ok:chat", { tools: TOOLS, response_format: RESPONSE_FORMAT, temperature: 0.2, stream: true }) });
        expect(new TextDecoder().decode(r.raw)).toBe(OK_COMPLETION);
        expect(r.usage).toEqual({ promptTokens: 12, completionTokens: 7, cachedInputTokens: 0, reasoningTokens: 3 });
        expect(r.outputText).toBe('Helloget_weather{"city":"Paris"} there!');
        const seen = stub.request("ok:chat")!;
        expect(seen.json).toEqual({ model: "ok:chat", messages: MESSAGES, tools: TOOLS, response_format: RESPONSE_FORMAT, temperature: 0.2, stream: false });
        expect([seen.headers.authorization, seen.headers.accept, seen.headers["content-type"]]).toEqual([
          `Bearer ${STUB_API_KEY}`,
          "application/json",
          "application/json",
        ]);
      });

      it("maps an upstream 4xx/5xx, malformed JSON and an answer without choices to 502", async () => {
        const bad = expectGatewayError(await provider().chat!({ body: body("bad-model") }).catch((e: unknown) => e), "upstream_error");
        expect([bad.status, bad.details]).toEqual([502, { upstreamStatus: 400, upstreamMessage: "bad model for key [redacted]" }]);
        const boom = expectGatewayError(await provider().chat!({ body: body("boom") }).catch((e: unknown) => e), "upstream_error");
        expect(boom.details).toEqual({ upstreamStatus: 503 });
        for (const model of ["garbage", "no-choices"]) {
          const e = expectGatewayError(await provider().chat!({ body: body(model) }).catch((err: unknown) => err), "upstream_error");
          expect([e.status, e.details]).toEqual([502, { upstreamStatus: 200 }]);
        }
      });
    });

    describe("chatStream", () => {
      it("streams every data event unchanged with its output text and usage, asking the upstream for include_usage", async () => {
        const extra = { tools: TOOLS, response_format: RESPONSE_FORMAT, stream_options: { include_obfuscation: false } };
        const { items, error } = await drainAll(await provider().chatStream!({ body: body("ok:stream", extra) }));
        expect(error).toBeUndefined();
        expect(items.map((c) => c.data)).toEqual(OK_STREAM_EVENTS);
        expect(items.map((c) => c.outputText).join("")).toBe('Héllo 🎉get_weather{"city":"Paris"}');
        expect(items.map((c) => c.empty)).toEqual([false, false, false, false, false, false, true]);
        expect(items.map((c) => c.usage)).toEqual([
          ...Array<undefined>(6),
          { promptTokens: 12, completionTokens: 9, cachedInputTokens: 4, reasoningTokens: 2 },
        ]);
        const seen = stub.request("ok:stream")!;
        expect(seen.json).toEqual({
          ...body("ok:stream"),
          tools: TOOLS,
          response_format: RESPONSE_FORMAT,
          stream: true,
          stream_options: { include_obfuscation: false, include_usage: true },
        });
        expect(seen.headers.accept).toBe("text/event-stream");
        // The loop ended at [DONE]; the end of the body, 30 ms later, was still read, not cut (the socket can be reused).
        expect(await within(stub.outcome("ok:stream"))).toBe("finished");
      });

      it("still streams over a client without chunks() (the body read whole)", async () => {
        const legacy: HttpClient = async (req) => {
          const { chunks: _chunks, ...res } = await http(req);
          return res;
        };
        const { items, error } = await drainAll(await provider(5_000, legacy).chatStream!({ body: body("ok:legacy") }));
        expect([error, items.map((c) => c.data)]).toEqual([undefined, OK_STREAM_EVENTS]);
      });

      it("rejects before the stream, as chat does, when the upstream answers 4xx/5xx", async () => {
        const bad = expectGatewayError(await provider().chatStream!({ body: body("bad-model") }).catch((e: unknown) => e), "upstream_error");
        expect([bad.status, bad.details]).toEqual([502, { upstreamStatus: 400, upstreamMessage: "bad model for key [redacted]" }]);
        const boom = expectGatewayError(await provider().chatStream!({ body: body("boom") }).catch((e: unknown) => e), "upstream_error");
        expect(boom.details).toEqual({ upstreamStatus: 503 });
      });

      it("throws 502 after the earlier chunks on an error event or malformed JSON, and cuts the upstream", async () => {
        const failed = await drainAll(await provider().chatStream!({ body: body("error-event") }));
        expect(failed.items.map((c) => c.outputText)).toEqual(["Hé"]);
        expect(expectGatewayError(failed.error, "upstream_error").details).toEqual({ upstreamMessage: "Overloaded (key [redacted])" });
        expect(await within(stub.outcome("error-event"))).toBe("cut");
        const garbage = await drainAll(await provider().chatStream!({ body: body("garbage-event") }));
        expect(garbage.items).toHaveLength(1);
        expect(expectGatewayError(garbage.error, "upstream_error").status).toBe(502);
        expect(await within(stub.outcome("garbage-event"))).toBe("cut");
      });

      it("throws 502 when the connection breaks mid-stream; a body without [DONE] just ends", async () => {
        const cut = await drainAll(await provider().chatStream!({ body: body("cut") }));
        expect(cut.items).toHaveLength(1);
        expect(expectGatewayError(cut.error, "upstream_error").status).toBe(502);
        const ended = await drainAll(await provider().chatStream!({ body: body("no-done") }));
        expect([ended.error, ended.items.map((c) => c.outputText)]).toEqual([undefined, ["Hé", "llo 🎉"]]);
      });

      it("rejects 504 when the headers come later than timeoutMs", async () => {
        const e = await provider(150).chatStream!({ body: body("slow-headers") }).catch((err: unknown) => err);
        expect(expectGatewayError(e, "upstream_timeout").status).toBe(504);
      });

      it("throws 504 on an idle gap over timeoutMs, while a longer stream with short gaps succeeds", async () => {
        const idle = await drainAll(await provider(200).chatStream!({ body: body("idle-gap") }));
        expect(idle.items.map((c) => c.outputText)).toEqual(["Hé"]);
        expect(expectGatewayError(idle.error, "upstream_timeout").status).toBe(504);
        const started = Date.now();
        const steady = await drainAll(await provider(200).chatStream!({ body: body("steady") }));
        expect(steady.error).toBeUndefined();
        expect(steady.items.map((c) => c.outputText).join("")).toBe("0 1 2 3 4 5 6 7 8 9 10 11 ");
        expect(Date.now() - started).toBeGreaterThan(200);
      });

      it("rejects with the abort reason when the caller aborts mid-stream, and the upstream sees the connection close", async () => {
        const controller = new AbortController();
        const reason = new Error("the client went away");
        const stream = await provider().chatStream!({ body: body("hang:abort"), signal: controller.signal });
        const seen: string[] = [];
        const error = await (async () => {
          for await (const chunk of stream) {
            seen.push(chunk.outputText);
            setTimeout(() => controller.abort(reason), 20);
          }
        })().catch((e: unknown) => e);
        expect(error).toBe(reason);
        expect(seen).toEqual(["Hé"]);
        expect(await within(stub.outcome("hang:abort"))).toBe("cut");
      });

      it("cancels the upstream when the loop is left early", async () => {
        const seen: string[] = [];
        for await (const chunk of await provider().chatStream!({ body: body("hang:break") })) {
          seen.push(chunk.outputText);
          break;
        }
        expect(seen).toEqual(["Hé"]);
        expect(await within(stub.outcome("hang:break"))).toBe("cut");
      });
    });
  });
}
