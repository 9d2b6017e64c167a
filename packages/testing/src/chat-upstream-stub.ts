/**
 * A local stand-in for an OpenAI-compatible chat upstream on node:http (127.0.0.1, port 0), for
 * {@link runChatUpstreamSuite}: `POST /v1/chat/completions` answers by the body's `model`
 * (`<script>` or `<script>:<tag>`), `GET /raw/<script>?…` streams plain text. It records every
 * request and tells when the client cut a response off.
 */
import http from "node:http";
import { listenHttp } from "./adapter-suite-harness.js";

/** The API key the suite configures; the stub echoes it in error messages to prove it is scrubbed. */
export const STUB_API_KEY = "sk-chat-stub-secret";

/** One request the stub received. */
export interface ChatStubRequest {
  url: string;
  headers: http.IncomingHttpHeaders;
  /** The JSON body, for chat requests. */
  json?: Record<string, unknown>;
}

/** The running stub. */
export interface ChatUpstreamStub {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  readonly requests: ChatStubRequest[];
  /** The request whose `model` (chat) or url (raw) is `tag`. */
  request(tag: string): ChatStubRequest | undefined;
  /**
   * How the response of the request tagged `tag` ended: `"finished"` when the stub wrote all of
   * it (the client read it, or at least did not cut it), `"cut"` when it closed unfinished (the
   * client cancelled, or the script destroyed the socket).
   */
  outcome(tag: string): Promise<"finished" | "cut">;
  close(): Promise<void>;
}

/** Body text or bytes to write, a pause in ms, cut the connection, or stop writing without ending. */
type Step = string | Buffer | number | "destroy" | "hang";
interface Script {
  status?: number;
  contentType?: string;
  headersAfterMs?: number;
  steps: Step[];
}

const sse = (data: string) => `data: ${data}\n\n`;
const chunk = (delta: string, extra = "") => `{"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":${delta}}]${extra}}`;

/** The `data:` texts of the `ok` stream, as the client must see them (note the odd spacing of the second). */
export const OK_STREAM_EVENTS = [
  chunk('{"role":"assistant","content":""}', ',"usage":null'),
  '{"id":"c1", "object":"chat.completion.chunk", "choices":[{"index":0,"delta":{"content":"Hé"}}], "usage":null}',
  chunk('{"content":"llo 🎉"}', ',"usage":null'),
  chunk('{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":""}}]}'),
  chunk('{"tool_calls":[{"index":0,"function":{"arguments":"{\\"city\\":\\"Paris\\"}"}}]}'),
  '{"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}',
  '{"id":"c1","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":12,"completion_tokens":9,"total_tokens":21,"prompt_tokens_details":{"cached_tokens":4},"completion_tokens_details":{"reasoning_tokens":2}}}',
];

/** The non-streamed answer of `ok`, byte for byte (odd whitespace included). */
export const OK_COMPLETION =
  '{"id":"chatcmpl-1", "object":"chat.completion","choices":[' +
  '{"index":0,"message":{"role":"assistant","content":"Hello","tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\\"city\\":\\"Paris\\"}"}}]},"finish_reason":"tool_calls"},' +
  '{"index":1,"message":{"role":"assistant","content":[{"type":"text","text":" there"}],"refusal":"!"},"finish_reason":"stop"}],\n' +
  ' "usage":{"prompt_tokens":12,"completion_tokens":7,"total_tokens":19,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":3}}}';

/**
 * `OK_STREAM_EVENTS` as one SSE body with a comment, cut into pieces (one inside the 4-byte emoji)
 * to exercise reassembly. The body ends 30 ms after `[DONE]`: a client that cut the connection at
 * `[DONE]` instead of reading on would show as `"cut"`.
 */
function okStreamSteps(): Step[] {
  const body = Buffer.from(`: keep-alive\n\n${OK_STREAM_EVENTS.map(sse).join("")}data: [DONE]\n\n`);
  const cuts = new Set([3, body.indexOf("🎉") + 2, ...Array.from({ length: Math.floor(body.length / 97) }, (_, i) => (i + 1) * 97)]);
  const sorted = [...cuts].sort((a, b) => a - b);
  const steps: Step[] = [];
  let at = 0;
  for (const end of [...sorted, body.length]) {
    steps.push(body.subarray(at, end), 1);
    at = end;
  }
  steps[steps.length - 1] = 30;
  return steps;
}

const steady = (n: number, gapMs: number, piece: (i: number) => string): Step[] => Array.from({ length: n }, (_, i) => [piece(i), gapMs]).flat();

const CHAT_SCRIPTS: Record<string, Script> = {
  ok: { steps: okStreamSteps() },
  "bad-model": {
    status: 400,
    contentType: "application/json",
    steps: [JSON.stringify({ error: { message: `bad model for key ${STUB_API_KEY}`, type: "invalid_request_error" } })],
  },
  boom: { status: 503, contentType: "text/html", steps: ["<h1>down</h1>"] },
  "no-done": { steps: [sse(OK_STREAM_EVENTS[1]!), sse(OK_STREAM_EVENTS[2]!)] },
  "error-event": {
    steps: [sse(OK_STREAM_EVENTS[1]!), 10, sse(JSON.stringify({ error: { message: `Overloaded (key ${STUB_API_KEY})`, type: "server_error" } })), "hang"],
  },
  "garbage-event": { steps: [sse(OK_STREAM_EVENTS[1]!), 10, "data: {not json\n\n", "hang"] },
  cut: { steps: [sse(OK_STREAM_EVENTS[1]!), 20, "destroy"] },
  "slow-headers": { headersAfterMs: 600, steps: [sse("[DONE]")] },
  "idle-gap": { steps: [sse(OK_STREAM_EVENTS[1]!), 600, sse(OK_STREAM_EVENTS[2]!), sse("[DONE]")] },
  steady: { steps: [...steady(12, 30, (i) => sse(chunk(`{"content":"${i} "}`))), sse("[DONE]")] },
  hang: { steps: [sse(OK_STREAM_EVENTS[1]!), "hang"] },
};

const COMPLETION_SCRIPTS: Record<string, Script> = {
  ok: { contentType: "application/json", steps: [OK_COMPLETION] },
  garbage: { contentType: "application/json", steps: ["{not json"] },
  "no-choices": { contentType: "application/json", steps: ['{"object":"chat.completion","usage":{"prompt_tokens":1,"completion_tokens":1}}'] },
  "bad-model": CHAT_SCRIPTS["bad-model"]!,
  boom: CHAT_SCRIPTS.boom!,
};

const RAW_SCRIPTS: Record<string, Script> = {
  steady: { contentType: "text/plain", steps: steady(8, 80, (i) => `c${i}`) },
  hang: { contentType: "text/plain", steps: ["first", "hang"] },
};

/** Starts the stub. */
export async function startChatUpstreamStub(): Promise<ChatUpstreamStub> {
  const requests: ChatStubRequest[] = [];
  const tagged = new Map<string, ChatStubRequest>();
  type Outcome = "finished" | "cut";
  const outcomes = new Map<string, { promise: Promise<Outcome>; resolve: (o: Outcome) => void }>();
  const outcomeOf = (tag: string) => {
    let o = outcomes.get(tag);
    if (!o) {
      let resolve!: (o: Outcome) => void;
      const promise = new Promise<Outcome>((r) => (resolve = r));
      o = { promise, resolve };
      outcomes.set(tag, o);
    }
    return o;
  };

  const play = async (res: http.ServerResponse, script: Script) => {
    const alive = () => !res.destroyed && !res.writableEnded;
    if (script.headersAfterMs) await sleep(script.headersAfterMs);
    if (!alive()) return;
    res.writeHead(script.status ?? 200, { "content-type": script.contentType ?? "text/event-stream", "cache-control": "no-cache" });
    res.flushHeaders();
    for (const step of script.steps) {
      if (!alive()) return;
      if (typeof step === "number") await sleep(step);
      else if (step === "destroy") return void res.socket?.destroy();
      else if (step === "hang") return;
      else res.write(step);
    }
    if (alive()) res.end();
  };

  const server = http.createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on("data", (c: Buffer) => parts.push(c));
    req.on("end", () => {
      const seen: ChatStubRequest = { url: req.url ?? "", headers: req.headers };
      let script: Script | undefined;
      let tag = seen.url;
      if (req.url === "/v1/chat/completions") {
        seen.json = JSON.parse(Buffer.concat(parts).toString("utf8")) as Record<string, unknown>;
        tag = String(seen.json.model);
        const name = tag.split(":")[0]!;
        script = seen.json.stream === true ? CHAT_SCRIPTS[name] : COMPLETION_SCRIPTS[name];
      } else if (req.url?.startsWith("/raw/")) {
        script = RAW_SCRIPTS[req.url.slice(5).split("?")[0]!];
      }
      requests.push(seen);
      tagged.set(tag, seen);
      res.on("close", () => outcomeOf(tag).resolve(res.writableFinished ? "finished" : "cut"));
      if (!script) return void res.writeHead(404, { "content-type": "application/json" }).end('{"error":{"message":"no such script"}}');
      void play(res, script);
    });
  });
  const listening = await listenHttp(server);
  return {
    url: listening.url,
    requests,
    request: (tag) => tagged.get(tag),
    outcome: (tag) => outcomeOf(tag).promise,
    close: listening.close,
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
