/** {@link AgentStore} on PostgreSQL. */
import { agentFromRow, type AgentStore, type SqlAgentRow } from "@tollgate/core";
import type { Migration } from "./migrations.js";
import type { Queryable } from "./queryable.js";
import type { TableName } from "./rows.js";

type AgentRow = SqlAgentRow<string>;

const COLS = "wallet_address, created_at::text AS created_at, card::text AS card";

export function createAgentOps(db: Queryable, t: TableName): AgentStore {
  const agents = t("agents");
  return {
    /** One INSERT … ON CONFLICT DO UPDATE: concurrent upserts of one address serialize on its row; created_at stays. */
    async upsertAgent(card) {
      const { walletAddress, createdAt, ...rest } = card;
      const { rows } = await db.query<AgentRow>(
        `INSERT INTO ${agents} (wallet_address, created_at, card) VALUES ($1::text, $2::bigint, $3::json)
         ON CONFLICT (wallet_address) DO UPDATE SET card = excluded.card
         RETURNING ${COLS}`,
        [walletAddress, createdAt, JSON.stringify(rest)],
      );
      if (!rows[0]) throw new Error("postgres store: upsert returned no row");
      return agentFromRow(rows[0]);
    },
    async getAgent(walletAddress) {
      const { rows } = await db.query<AgentRow>(`SELECT ${COLS} FROM ${agents} WHERE wallet_address = $1::text`, [walletAddress]);
      return rows[0] ? agentFromRow(rows[0]) : null;
    },
    async listAgents() {
      const { rows } = await db.query<AgentRow>(`SELECT ${COLS} FROM ${agents} x ORDER BY x.created_at, x.wallet_address`);
      return rows.map((r) => agentFromRow(r));
    },
    async removeAgent(walletAddress) {
      const { rows } = await db.query(`DELETE FROM ${agents} WHERE wallet_address = $1::text RETURNING 1`, [walletAddress]);
      return rows.length > 0;
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
        wallet_address text COLLATE "C" PRIMARY KEY,
        created_at     bigint NOT NULL,
        card           json NOT NULL
      );
      CREATE INDEX agents_by_created ON agents (created_at, wallet_address);
    `,
  },
];
