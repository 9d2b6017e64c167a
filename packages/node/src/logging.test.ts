import pino from "pino";
import { createPublicClient, http } from "viem";
import { describe, expect, it } from "vitest";
import { toChainError } from "../../core/src/chain/errors.js";
import { withoutUrlSecrets } from "./logging.js";

describe("the server's error serializer", () => {
  it("cuts every URL in a logged error to its host: an RPC key in the path or query never reaches the log", async () => {
    const client = createPublicClient({ transport: http("http://127.0.0.1:1/v2/AlchemyKey0123456789abcdef?apikey=QueryKey42", { retryCount: 0 }) });
    const viemError = await client.getBlockNumber().catch((e: unknown) => e as Error);
    // The error as the chain adapter wraps it (the viem error as its cause), serialized as pino does.
    const logged = JSON.stringify(withoutUrlSecrets(pino.stdSerializers.err(toChainError("read the balance", viemError))));
    expect(JSON.stringify(pino.stdSerializers.err(toChainError("read the balance", viemError)))).toContain("AlchemyKey0123456789abcdef");
    expect(logged).not.toContain("AlchemyKey0123456789abcdef");
    expect(logged).not.toContain("QueryKey42");
    expect(logged).toContain("http://127.0.0.1:1/…");
  });

  it("leaves text without URLs, and a bare origin, as they are", () => {
    expect(withoutUrlSecrets({ message: "nonce too low", detail: ["see https://example.com"] })).toEqual({
      message: "nonce too low",
      detail: ["see https://example.com"],
    });
    expect(withoutUrlSecrets("postgres://u:pw@db.internal:5432/tollgate failed")).toBe("postgres://db.internal:5432/… failed");
  });
});
