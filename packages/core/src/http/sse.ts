/** Server-sent events: frame formatting and the response helper (used by the video stream). */
import type { GatewayResponse, SseFrame } from "./types.js";

/** Formats one SSE frame. `data` that is not a string is JSON-encoded; multi-line data is split per the spec. */
export function sseFrame(frame: { event?: string; data: unknown; id?: string; retry?: number }): SseFrame {
  let out = "";
  if (frame.event) out += `event: ${frame.event}\n`;
  if (frame.id) out += `id: ${frame.id}\n`;
  if (frame.retry !== undefined) out += `retry: ${frame.retry}\n`;
  const data = typeof frame.data === "string" ? frame.data : JSON.stringify(frame.data);
  for (const line of data.split("\n")) out += `data: ${line}\n`;
  return `${out}\n`;
}

/** An SSE comment frame, used as a keep-alive heartbeat. */
export function sseComment(text: string): SseFrame {
  return `: ${text.replace(/\n/g, " ")}\n\n`;
}

/** How an event stream may be cached: never, by nobody (a stream answers one caller, often a credential's), and not re-encoded on the way. */
export const SSE_CACHE_CONTROL = "private, no-store, no-transform";

/** A 200 `text/event-stream` response whose frames are written as the iterable yields them. */
export function sseResponse(frames: AsyncIterable<SseFrame>, headers: Record<string, string> = {}): GatewayResponse {
  return {
    status: 200,
    headers: { "content-type": "text/event-stream; charset=utf-8", "cache-control": SSE_CACHE_CONTROL, connection: "keep-alive", ...headers },
    body: { kind: "sse", frames },
  };
}
