/**
 * Streamed upstream responses and the OpenAI-compatible provider's chat over the pooled undici
 * client (the Node hot path), against the suite's local stub upstream.
 */
import { afterAll } from "vitest";
import { runChatUpstreamSuite } from "@tollgate/testing";
import { createUndiciHttpClient } from "./http-client.js";

const http = createUndiciHttpClient({ defaultTimeoutMs: 5_000 });
afterAll(() => http.close());

runChatUpstreamSuite("undici", http);
