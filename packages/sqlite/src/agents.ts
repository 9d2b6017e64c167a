/** {@link AgentStore} on SQLite. */
import type Database from "better-sqlite3";
import type { Migration } from "./migrations.js";
import { agentFromRow, type AgentStore, type SqlAgentRow } from "@tollgate/core";

type AgentRow = SqlAgentRow<bigint>;

export function createAgentOps(db: Database.Database): AgentStore {
  // One statement: a concurrent upsert of the same address cannot interleave; created_at stays.
  const upsert = db.prepare<[string, number, string], AgentRow>(`
    INSERT INTO agents (wallet_address, created_at, card) VALUES (?, ?, ?)
    ON CONFLICT (wallet_address) DO UPDATE SET card = excluded.card
    RETURNING wallet_address, created_at, card`);
  const byAddress = db.prepare<[string], AgentRow>("SELECT wallet_address, created_at, card FROM agents WHERE wallet_address = ?");
  const all = db.prepare<[], AgentRow>("SELECT wallet_address, created_at, card FROM agents ORDER BY created_at, wallet_address");
  const remove = db.prepare<[string]>("DELETE FROM agents WHERE wallet_address = ?");

  return {
    async upsertAgent(card) {
      const { walletAddress, createdAt, ...rest } = card;
      const row = upsert.get(walletAddress, createdAt, JSON.stringify(rest));
      if (!row) throw new Error("sqlite store: upsert returned no row");
      return agentFromRow(row);
    },
    async getAgent(walletAddress) {
      const row = byAddress.get(walletAddress);
      return row ? agentFromRow(row) : null;
    },
    async listAgents() {
      return all.all().map((r) => agentFromRow(r));
    },
    async removeAgent(walletAddress) {
      return remove.run(walletAddress).changes > 0;
    },
  };
}

/** Schema of this capability (migration version 4; add later changes as new versions). */
export const AGENTS_MIGRATIONS: readonly Migration[] = [
  {
    version: 4,
    name: "agents",
    sql: `
      CREATE TABLE agents (
        wallet_address TEXT PRIMARY KEY,
        created_at     INTEGER NOT NULL,
        card           TEXT NOT NULL CHECK (json_valid(card))
      ) STRICT;
      CREATE INDEX agents_by_created ON agents (created_at, wallet_address);
    `,
  },
];
