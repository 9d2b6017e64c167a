/**
 * A local OpenAI-compatible chat upstream for tests and benchmarks: a real node:http server whose
 * behaviour is chosen by the first path segment of the provider's base URL
 * (`${url}/<mode>/chat/completions`). It records every request body it received.
 *
 * Modes: `ok` (answers {@link STUB_WORDS}, usage {@link STUB_USAGE}; streams one word per chunk and
 * the usage chunk when asked), `nousage` (the same without usage), `fail500` (HTTP 500 before any
 * byte), `midfail` (streams two words, then the connection breaks), `errevent` (two words, then an
 * `error` event), `stall-<n>` (streams n words, then sends nothing more until the client leaves),
 * `slow-<ms>` (answers `ok` after ms), `quiet-<ms>` (`ok`, but a stream sends its headers at once and its first chunk after
 * ms), `late-<ms>` (`stall-4` after ms), `tool` (a tool call to the first tool), `trickle-<ms>`
 * (streams `ok` with ms between words and reports {@link TRICKLE_USAGE}, as a reasoning model
 * whose hidden tokens show only in the usage), `prompt-<n>` (`ok` not streamed, its usage saying n
 * prompt tokens).
 */
import http from "node:http";
import type { AddressInfo } from "node:net";

/** The words the stub answers, one per streamed chunk (each with a leading space but the first). */
export const STUB_WORDS = ["Hello", " from", " the", " stub", " upstream", " at", " your", " service", "."];
/** The usage the stub reports: fixed, so a test can price it exactly. */
export const STUB_USAGE = { prompt_tokens: 21, completion_tokens: 9, total_tokens: 30 };

/** The usage a `trickle-<ms>` stream reports: far more completion tokens than its words (hidden reasoning). */
export const TRICKLE_USAGE = { prompt_tokens: 21, completion_tokens: 809, total_tokens: 830, completion_tokens_details: { reasoning_tokens: 800 } };

/** A running stub. */
export interface ChatStub {
  readonly url: string;
  /** Request bodies received, in order. */
  readonly bodies: Record<string, unknown>[];
  /** Resolves when the client of a `stall-<n>` stream went away (its socket closed). */
  closedStalls(): Promise<void>;
  close(): Promise<void>;
}

const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) =>
  `data: ${JSON.stringify({ id: "chatcmpl-stub", object: "chat.completion.chunk", created: 1_700_000_000, model: "stub", choices, ...extra })}\n\n`;
const delta = (d: Record<string, unknown>, finish: string | null = null) => [{ index: 0, delta: d, finish_reason: finish }];

/** Starts the stub on 127.0.0.1 (an ephemeral port). */
export async function startChatStub(): Promise<ChatStub> {
  const bodies: Record<string, unknown>[] = [];
  let stallClosed: (() => void)[] = [];
  const server = http.createServer((req, res) => {
    let text = "";
    req.setEncoding("utf8");
    req.on("data", (c: string) => (text += c));
    req.on("end", () => {
      const body = JSON.parse(text || "{}") as Record<string, unknown>;
      bodies.push(body);
      const mode = req.url?.split("/")[1] ?? "ok";
      void answer(mode, body, res);
    });
  });

  async function answer(mode: string, body: Record<string, unknown>, res: http.ServerResponse) {
    if (mode === "fail500") return void res.writeHead(500, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: "stub exploded" } }));
    if (mode.startsWith("slow-")) await new Promise((r) => setTimeout(r, Number(mode.slice(5))));
    if (mode.startsWith("quiet-")) {
      if (body.stream === true) res.writeHead(200, { "content-type": "text/event-stream" }).flushHeaders();
      await new Promise((r) => setTimeout(r, Number(mode.slice(6))));
      mode = "ok";
    }
    if (mode.startsWith("late-")) {
      await new Promise((r) => setTimeout(r, Number(mode.slice(5))));
      mode = "stall-4";
    }
    if (res.destroyed) return;
    const usage = mode !== "nousage";
    const tool = mode === "tool" ? (body.tools as { function: { name: string } }[] | undefined)?.[0]?.function.name : undefined;
    if (body.stream !== true) {
      const message = tool
        ? { role: "assistant", content: null, tool_calls: [{ id: "call_stub", type: "function", function: { name: tool, arguments: '{"city":"Paris"}' } }] }
        : { role: "assistant", content: STUB_WORDS.join("") };
      const completion = {
        id: "chatcmpl-stub",
        object: "chat.completion",
        created: 1_700_000_000,
        model: body.model,
        choices: [{ index: 0, message, finish_reason: tool ? "tool_calls" : "stop" }],
      };
      // `prompt-<n>`: the usage says n prompt tokens (images the gateway cannot count).
      const prompt = mode.startsWith("prompt-") ? Number(mode.slice(7)) : undefined;
      const reported = prompt === undefined ? STUB_USAGE : { prompt_tokens: prompt, completion_tokens: 9, total_tokens: prompt + 9 };
      return void res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(usage ? { ...completion, usage: reported } : completion));
    }
    if (!res.headersSent) res.writeHead(200, { "content-type": "text/event-stream" });
    res.write(chunk(delta({ role: "assistant", content: "" })));
    const stall = mode.startsWith("stall-") ? Number(mode.slice(6)) : undefined;
    const trickle = mode.startsWith("trickle-") ? Number(mode.slice(8)) : undefined;
    const words = mode === "midfail" || mode === "errevent" ? STUB_WORDS.slice(0, 2) : stall !== undefined ? STUB_WORDS.slice(0, stall) : STUB_WORDS;
    if (tool)
      res.write(chunk(delta({ tool_calls: [{ index: 0, id: "call_stub", type: "function", function: { name: tool, arguments: '{"city":"Paris"}' } }] })));
    else if (trickle !== undefined)
      for (const w of words) {
        if (res.destroyed) return;
        res.write(chunk(delta({ content: w })));
        await new Promise((r) => setTimeout(r, trickle));
      }
    else for (const w of words) res.write(chunk(delta({ content: w })));
    if (mode === "midfail") return void setTimeout(() => res.destroy(), 20);
    if (mode === "errevent") return void res.end(`data: ${JSON.stringify({ error: { message: "stub failed mid-stream", type: "server_error" } })}\n\n`);
    if (stall !== undefined) {
      res.on("close", () => stallClosed.splice(0).forEach((f) => f()));
      return;
    }
    res.write(chunk(delta({}, tool ? "tool_calls" : "stop")));
    const asked = (body.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true;
    if (usage && asked) res.write(chunk([], { usage: trickle === undefined ? STUB_USAGE : TRICKLE_USAGE }));
    res.end("data: [DONE]\n\n");
  }

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    bodies,
    closedStalls: () => new Promise<void>((resolve) => stallClosed.push(resolve)),
    close: () => {
      server.closeAllConnections();
      stallClosed = [];
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
