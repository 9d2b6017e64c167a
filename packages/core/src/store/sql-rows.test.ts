import { describe, expect, it } from "vitest";
import { intentFromRow, keyFromRow, type SqlIntentRow, type SqlKeyRow } from "./sql-rows.js";

const BIG = (1n << 200n) + 7n;
const keyRow = <I extends bigint | string>(int: (n: bigint) => I): SqlKeyRow<I> => ({
  key_id: "key_1",
  token_hash: "ab",
  owner: "0xaa",
  chain_id: int(8453n),
  purpose: "api",
  name: "n\\0",
  budget_limit: int(BIG),
  budget_used: int(5n),
  budget_reserved: int(0n),
  created_at: int(1_700_000_000_000n),
  expires_at: int(1_800_000_000_000n),
  revoked_at: null,
  last_used_at: int(1_750_000_000_000n),
});

describe("sql-rows", () => {
  it("bigint and decimal-text rows map to the same record; amounts stay exact; null means absent", () => {
    const fromBig = keyFromRow(keyRow((n) => n));
    expect(keyFromRow(keyRow((n) => n.toString()))).toEqual(fromBig);
    expect(fromBig).toEqual({
      keyId: "key_1",
      tokenHash: "ab",
      owner: "0xaa",
      chainId: 8453,
      purpose: "api",
      name: "n\\0",
      budgetLimit: BIG,
      budgetUsed: 5n,
      budgetReserved: 0n,
      createdAt: 1_700_000_000_000,
      expiresAt: 1_800_000_000_000,
      lastUsedAt: 1_750_000_000_000,
    });
    expect("revokedAt" in fromBig).toBe(false);
  });

  it("the text decoder reaches only the free-text columns", () => {
    const decode = (s: string) => `<${s}>`;
    expect(keyFromRow(keyRow((n) => n), decode)).toMatchObject({ keyId: "key_1", owner: "0xaa", name: "<n\\0>" });
    const row: SqlIntentRow<string> = {
      intent_id: "pi_1",
      key_id: "key_1",
      owner: "0xaa",
      chain_id: "1",
      status: "aborted",
      max_amount: "10",
      final_amount: null,
      released_amount: "10",
      idempotency_key: "idem",
      fingerprint: "fp",
      request: '{"a":1}',
      result: '{"b":[2]}',
      reason: "why",
      created_at: "1",
      expires_at: "2",
      finished_at: "2",
    };
    expect(intentFromRow(row, decode)).toEqual({
      intentId: "pi_1",
      keyId: "key_1",
      owner: "0xaa",
      chainId: 1,
      status: "aborted",
      maxAmount: 10n,
      releasedAmount: 10n,
      idempotencyKey: "<idem>",
      fingerprint: "fp",
      request: { a: 1 },
      result: { b: [2] },
      reason: "<why>",
      createdAt: 1,
      expiresAt: 2,
      finishedAt: 2,
    });
  });
});
