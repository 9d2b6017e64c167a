/**
 * The least ledger a reserve-before, settle-after design needs on PostgreSQL: one key row
 * `id = 'k'` in `table` and two guarded UPDATEs of it. bench:ledger's raw-driver baseline runs
 * them in one process; its HTTP part runs them around each call of the raw proxy (the floor row).
 */
export function floorSql(table: string) {
  return {
    create: `CREATE TABLE ${table} (id text PRIMARY KEY, lim bigint NOT NULL, used bigint NOT NULL, reserved bigint NOT NULL)`,
    insert: `INSERT INTO ${table} VALUES ('k', 1000000000000000, 0, 0)`,
    /** $1 the amount: changes the row only when it fits the limit. */
    reserve: `UPDATE ${table} SET reserved = reserved + $1 WHERE id = 'k' AND lim - used - reserved >= $1`,
    /** $1 the reserved amount released, $2 the final amount spent. */
    settle: `UPDATE ${table} SET reserved = reserved - $1, used = used + $2 WHERE id = 'k'`,
  };
}
