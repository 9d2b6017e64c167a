/**
 * The two plain shapes the route table works on. Adapters convert their native request and
 * response to and from these; nothing else crosses the adapter boundary.
 */

/** How the body of a request reaches the gateway. */
export type GatewayRequestBody =
  /**
   * A body a framework has already parsed (e.g. `express.json()`); used as is, once its size (its
   * text or bytes as they are, anything else as JSON) is within the route's limit and `maxBytes`
   * (the adapter's `maxBodySize`), else 413. The framework read it: the gateway's in-flight byte
   * caps and slow-body pace never saw its bytes.
   */
  | { readonly kind: "parsed"; readonly value: unknown; readonly maxBytes?: number }
  /**
   * A body read lazily, only by routes that take one. `read(limit)` resolves to the raw bytes or
   * rejects with a `GatewayError("payload_too_large")` as soon as more than `limit` bytes arrive.
   * `onChunk(bytes)`, when given, is called with the size of each chunk as it arrives; if it
   * throws, reading stops and `read` rejects with that error (the per-process byte cap).
   */
  | { readonly kind: "stream"; read(limit: number, onChunk?: (bytes: number) => void): Promise<Uint8Array> };

/** A request as the gateway sees it. */
export interface GatewayRequest {
  /** Upper-case HTTP method. */
  readonly method: string;
  /** The path without query string, still percent-encoded, relative to the gateway's base path. */
  readonly path: string;
  /** The query string parameters. */
  readonly query: URLSearchParams;
  /** Request headers with lower-case names; repeated headers joined with ", ". */
  readonly headers: Readonly<Record<string, string | undefined>>;
  /** The body, or undefined when the request has none. */
  readonly body?: GatewayRequestBody;
  /** Aborted when the client goes away. */
  readonly signal?: AbortSignal;
  /** The public origin the request reached (e.g. "https://api.example.com"), for absolute URLs in answers. */
  readonly origin?: string;
  /** The socket peer's IP address, when the adapter knows it (per-IP rate limits; see `trustedProxies`). */
  readonly remoteAddress?: string;
}

/** One server-sent event frame, already formatted (`event: …\ndata: …\n\n`). */
export type SseFrame = string;

/** The body of a gateway response. */
export type GatewayResponseBody =
  | { readonly kind: "json"; readonly value: unknown }
  | { readonly kind: "bytes"; readonly value: Uint8Array }
  /** Server-sent events; the adapter writes each frame as it is yielded and honours backpressure. */
  | { readonly kind: "sse"; readonly frames: AsyncIterable<SseFrame> }
  /** Bytes as they arrive (a file relayed from an upstream); written like SSE frames, with the response's own headers. */
  | { readonly kind: "stream"; readonly chunks: AsyncIterable<Uint8Array> }
  | { readonly kind: "empty" };

/** A response as the gateway produces it. Header names are lower-case. */
export interface GatewayResponse {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: GatewayResponseBody;
}
