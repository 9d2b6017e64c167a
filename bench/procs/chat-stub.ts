/**
 * The upstream of the chat benchmark, as its own process: a keep-alive node:http server answering
 * every POST with an OpenAI chat-completions SSE stream of n content chunks of one short word each
 * (after the usual role chunk), a finish chunk, the usage chunk when the request sets
 * `stream_options.include_usage` (prompt {@link PROMPT_TOKENS}, completion n tokens), and
 * `data: [DONE]`. Two request fields, forwarded unchanged by the raw proxy and the gateway, shape
 * the answer: `bench_chunks` is n ({@link WORDS} when absent), and `bench_gap_ms` the pause between
 * content chunks: 0 writes the whole answer at once (corked, one write), g > 0 writes each content
 * chunk g ms after the previous one. Each content chunk carries `bench_sent_us`, the stub's
 * CLOCK_MONOTONIC time in µs when it wrote the chunk (the same clock as `process.hrtime` in every
 * process on Linux), so the client can measure each chunk's transit. Prints
 * `{"url","words","promptTokens"}`; exits when its stdin closes.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { serveParent } from "./lib.js";

/** Content chunks of an answer without `bench_chunks` (env BENCH_CHAT_CHUNKS). */
const WORDS = Number(process.env.BENCH_CHAT_CHUNKS ?? 100);
/** The prompt tokens the usage chunk reports. */
const PROMPT_TOKENS = 12;

const HEAD = '{"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o-mini"';
const frame = (rest: string) => `data: ${HEAD},${rest}}\n\n`;
const ROLE = frame('"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]');
const FINISH = frame('"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]');
const usage = (n: number) => frame(`"choices":[],"usage":{"prompt_tokens":${PROMPT_TOKENS},"completion_tokens":${n},"total_tokens":${PROMPT_TOKENS + n}}`);
const DONE = "data: [DONE]\n\n";
const word = (i: number) =>
  `data: ${HEAD},"bench_sent_us":${Math.round(Number(process.hrtime.bigint()) / 1e3)},"choices":[{"index":0,"delta":{"content":"${i === 0 ? "tok" : " tok"}"},"finish_reason":null}]}\n\n`;
const headers = { "content-type": "text/event-stream", "cache-control": "no-cache" };

/** The fields of the request that shape the answer. */
function options(text: string): { words: number; gapMs: number; withUsage: boolean } {
  const body = JSON.parse(text || "{}") as { bench_chunks?: number; bench_gap_ms?: number; stream_options?: { include_usage?: boolean } };
  return {
    words: Math.max(1, Number(body.bench_chunks ?? WORDS)),
    gapMs: Number(body.bench_gap_ms ?? 0),
    withUsage: body.stream_options?.include_usage === true,
  };
}

const server = http.createServer((req, res) => {
  let text = "";
  req.setEncoding("utf8");
  req.on("data", (c: string) => (text += c));
  req.on("end", () => {
    const { words, gapMs, withUsage } = options(text);
    const tail = () => res.end(withUsage ? FINISH + usage(words) + DONE : FINISH + DONE);
    res.writeHead(200, headers);
    if (gapMs <= 0) {
      res.cork();
      res.write(ROLE);
      for (let i = 0; i < words; i++) res.write(word(i));
      tail();
      res.uncork();
      return;
    }
    res.write(ROLE + word(0));
    let i = 1;
    const next = () => {
      if (res.destroyed) return;
      res.write(word(i++));
      if (i === words) tail();
      else setTimeout(next, gapMs);
    };
    if (words === 1) tail();
    else setTimeout(next, gapMs);
  });
});
server.keepAliveTimeout = 65_000;
server.listen(0, "127.0.0.1", () => {
  serveParent({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, words: WORDS, promptTokens: PROMPT_TOKENS }, () => ({}));
});
