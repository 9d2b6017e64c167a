/**
 * `client.usage.get` against a real gateway on a port (SQLite, local provider): what it sends,
 * the spend of real paid calls matching their receipts, and the gateway's 400/401/403 as errors.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AuthenticationError, BadRequestError, PermissionDeniedError, type WalletUsage } from "../index.js";
import { CHAIN, DAY, startGateway, thrown, wallet, type TestGateway } from "../testing/harness.js";

let gw: TestGateway;
beforeAll(async () => void (gw = await startGateway()));
afterAll(() => gw?.close());

describe("usage.get", () => {
  it("sends GET /api/usage with the session and the range; the spend of real paid calls equals their receipts", async () => {
    gw.clock.set(Date.UTC(2026, 0, 1, 20)); // 20:00 UTC; the session lives 24 h
    const owner = await gw.signedIn();
    const key = await owner.keys.create({ budgetLimit: 100_000_000n, expiresAt: gw.clock.now() + 10 * DAY, purpose: "api" });
    const payer = gw.client({ apiKey: key.token });
    const first = await payer.embeddings.create({ model: "text-embedding-3-small", input: "metered words" }).withResponse();
    gw.clock.advance(6 * 3_600_000); // the next UTC day, 02:00
    const second = await payer.images.generate({ model: "dall-e-2", prompt: "a lighthouse", size: "256x256" }).withResponse();
    const [a, b] = [BigInt(first.meta.receipt!.finalAmountWei), BigInt(second.meta.receipt!.finalAmountWei)];

    const today = new Date(gw.clock.now());
    const usage: WalletUsage = await owner.usage.get({ from: new Date(gw.clock.now() - DAY), to: today, chainId: CHAIN });
    const sent = new URL(owner.calls.at(-1)!.url);
    expect([owner.calls.at(-1)!.method, sent.pathname, sent.search]).toEqual(["GET", "/api/usage", `?from=2026-01-01&to=2026-01-02&chainId=${CHAIN}`]);
    expect(owner.calls.at(-1)!.headers.authorization).toBe(`Bearer ${owner.session.token}`);
    expect(usage).toEqual({
      wallet: owner.address,
      from: "2026-01-01",
      to: "2026-01-02",
      days: [
        { date: "2026-01-01", spent: a.toString(), calls: 1 },
        { date: "2026-01-02", spent: b.toString(), calls: 1 },
      ],
      models: [
        { modelId: a > b ? "text-embedding-3-small" : "dall-e-2", spent: (a > b ? a : b).toString(), calls: 1 },
        { modelId: a > b ? "dall-e-2" : "text-embedding-3-small", spent: (a > b ? b : a).toString(), calls: 1 },
      ],
      totals: { spent: (a + b).toString(), calls: 2, reserved: "0" },
    });
    // Without a range: the 30 days to today; the key itself proves its wallet too.
    const byKey = await payer.usage.get();
    expect([byKey.from, byKey.to, byKey.days.length, byKey.totals.spent]).toEqual(["2025-12-04", "2026-01-02", 30, (a + b).toString()]);
    expect(new URL(payer.calls.at(-1)!.url).search).toBe("");
  });

  it("400 for a bad range, 401 for an unproven wallet, 403 for a header naming another wallet", async () => {
    const owner = await gw.signedIn();
    const e = await thrown(() => owner.usage.get({ from: "2026-01-05", to: "2026-01-01" }));
    expect(e).toBeInstanceOf(BadRequestError);
    expect([e.status, e.code, e.param]).toEqual([400, "invalid_request", "from"]);
    expect((await thrown(() => owner.usage.get({ to: "2026-02-30" }))).param).toBe("to");
    const unproven = await thrown(() => gw.client({ sessionAddress: wallet() }).usage.get());
    expect(unproven).toBeInstanceOf(AuthenticationError);
    expect(unproven.code).toBe("wallet_unverified");
    const other = await thrown(() => gw.client({ sessionToken: owner.session.token, sessionAddress: wallet() }).usage.get());
    expect(other).toBeInstanceOf(PermissionDeniedError);
    expect(other.code).toBe("forbidden");
  });
});
