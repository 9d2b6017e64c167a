/**
 * The key-lifecycle part of the browser test, on the signed-in seeded wallet: create a key
 * through the page ("Create a key": errors checked in the page shown under their fields, a
 * refusal of the gateway shown with its message), read its token from the page (shown once, with
 * a copy button), pay real calls with it from Node through the typed client (a chat completion
 * and embeddings served by the offline `local` provider) and hold a reservation with it (an
 * authorized intent), reload and see the spend in the chart, by model and in the totals, the
 * reservation apart from spend; then revoke the key through the page (cancel first, then
 * confirm) and see the gateway refuse its token (401 key_revoked). Saves
 * e2e/artifacts/key-created.png, dashboard.png (the chart with the new spend),
 * key-revoke-confirm.png and key-revoked.png.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { AuthenticationError, createTollgateClient } from "@tollgate/client";
import type { Page } from "playwright-core";
import { formatUsdc } from "../lib/usdc";
import { chartOf, modelTable, reservations, rowsOf, spendTile, today } from "./usage-view";

/** What the seeded wallet has spent (see seed.ts): 1.25 + 20 × 0.015 USDC in 21 charges naming no model. */
export const SEEDED_SPENT = 1_550_000n;
export const SEEDED_CALLS = 21;
/** What the seeded wallet's research key holds (its authorized intent). */
export const SEEDED_RESERVED = 500_000n;
/** What this part's intent holds with the new key. */
const HOLD = 250_000n;
const NAME = "E2E agent";
const EXPIRES = "2031-01-15T12:00";
const NO_MODEL = "No model (priced by the caller)";

const keysTable = (page: Page) => page.getByRole("table", { name: "Service keys" });
const keyRow = (page: Page, keyId: string) => keysTable(page).locator("tbody tr:not(.detail-row)").filter({ hasText: keyId });
const createForm = (page: Page) => page.getByRole("form", { name: "Create a key" });
const focusedName = (page: Page) => page.evaluate(() => document.activeElement?.getAttribute("name"));

/** Fills `fill` (label → text), submits, and expects the page to refuse the field labelled `field` with `message`, focused. */
async function expectInvalid(page: Page, fill: Record<string, string>, field: string, name: string, message: string): Promise<void> {
  const form = createForm(page);
  for (const [label, value] of Object.entries(fill)) await form.getByLabel(label, { exact: true }).fill(value);
  await form.getByRole("button", { name: "Create key" }).click();
  await form.getByText(message, { exact: true }).waitFor();
  assert.equal(await form.getByLabel(field, { exact: true }).getAttribute("aria-invalid"), "true", `${field} is marked invalid`);
  assert.equal(await focusedName(page), name, `the focus moves to ${field}`);
  await form.getByText("Check the highlighted field.").waitFor();
}

async function createThroughPage(page: Page, base: string, artifacts: string): Promise<{ keyId: string; token: string }> {
  await page.context().grantPermissions(["clipboard-read", "clipboard-write"], { origin: base });
  const before = (await rowsOf(keysTable(page))).length;
  await page.getByRole("button", { name: "New key…" }).click();
  const form = createForm(page);
  await form.waitFor();
  assert.equal(await focusedName(page), "name", "the form takes the focus");
  assert.equal(await form.getByLabel("Budget (USDC)").inputValue(), "5.00", "a new key starts at 5 USDC");

  // Checked in the page: never sent.
  await expectInvalid(
    page,
    { Name: NAME, "Budget (USDC)": "1.0000001" },
    "Budget (USDC)",
    "budget",
    '"1.0000001" has more than 6 decimals (the smallest USDC unit is 0.000001).',
  );
  await expectInvalid(page, { "Budget (USDC)": "0" }, "Budget (USDC)", "budget", "The budget limit must be more than 0 USDC.");
  await expectInvalid(page, { "Budget (USDC)": "2.5", "Expires (UTC)": "2020-01-01T00:00" }, "Expires (UTC)", "expiresAt", "The expiry must be in the future.");
  assert.equal((await rowsOf(keysTable(page))).length, before, "nothing was created");

  // Refused by the gateway (its SQLite store keeps at most 2^63-1 atomic units): its envelope message.
  await form.getByLabel("Expires (UTC)").fill(EXPIRES);
  await form.getByLabel("Budget (USDC)").fill("9,223,372,036,854.775808");
  await form.getByRole("button", { name: "Create key" }).click();
  const alert = form.getByRole("alert");
  await alert.waitFor();
  assert.equal((await alert.innerText()).trim(), "Could not create the key. budgetLimit must be at most 9223372036854775807 with this store");
  assert.equal((await rowsOf(keysTable(page))).length, before, "the refused key was not created");

  await form.getByLabel("Budget (USDC)").fill("2.5");
  assert.equal(await alert.count(), 0, "editing a field clears the gateway's error");
  assert.equal(await focusedName(page), "budget", "and keeps the focus in that field");
  await form.getByLabel("Purpose").selectOption("api");
  await form.getByRole("button", { name: "Create key" }).click();

  const created = page.getByRole("region", { name: "Create a key" });
  const tokenBox = created.getByLabel("Token of the new key");
  await tokenBox.waitFor();
  const token = await tokenBox.inputValue();
  assert.match(token, /^svc-[A-Za-z0-9_-]{43}$/);
  await created.getByText("Token of the new key, shown only this once.").waitFor();
  assert.ok((await created.innerText()).includes("you won't see it again"), "the page says the token is not shown again");
  await created.getByRole("button", { name: "Copy token" }).click();
  await created.getByText("Copied to the clipboard.").waitFor();
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), token, "the copy button copies the token");

  const rows = await rowsOf(keysTable(page));
  assert.equal(rows.length, before + 1);
  const [first] = rows;
  const keyId = /key_[A-Za-z0-9]+/.exec(first?.header ?? "")?.[0];
  assert.ok(keyId && first?.header === `${NAME}\n${keyId}`, `the new key is listed first: ${first?.header}`);
  assert.match(await created.innerText(), new RegExp(`Created ${NAME} ${keyId} with a budget of 2\\.500000 USDC on chain 8453\\.`));
  assert.deepEqual(first.cells.slice(0, 8), ["API", "8453", "2.500000", "0.000000", "0.000000", "2.500000", "2031-01-15 12:00 UTC", "Active"]);
  await page.screenshot({ path: join(artifacts, "key-created.png"), fullPage: true });

  // Shown once: "Done" forgets it.
  await created.getByRole("button", { name: "Done: hide the token" }).click();
  assert.ok(!(await page.content()).includes(token), "the hidden token is nowhere in the page");
  await page.getByRole("button", { name: "New key…" }).waitFor();
  assert.equal(await createForm(page).count(), 0);
  return { keyId, token };
}

/** Pays a chat completion and embeddings with `token` and holds {@link HOLD} with an authorized intent; returns what each call charged. */
async function useKey(base: string, token: string): Promise<{ chat: bigint; embeddings: bigint }> {
  const client = createTollgateClient({ baseUrl: base, apiKey: token, networkId: 8453, maxRetries: 0 });
  const completion = await client.chat.completions.create({ model: "gpt-4o", messages: [{ role: "user", content: "Hello from the dashboard test" }] });
  const embedded = await client.embeddings.create({ model: "text-embedding-3-small", input: "spend shows in the chart" });
  const intent = await client.payments.prepare({
    service: "inference",
    action: "held",
    resource: "/v1/chat/completions",
    method: "POST",
    maxAmountWei: HOLD.toString(),
  });
  assert.equal(intent.status, "authorized");
  const chat = BigInt(completion.receipt.finalAmountWei);
  const embeddings = BigInt(embedded.receipt.finalAmountWei);
  assert.ok(chat > 0n && embeddings > 0n, "both calls were charged");
  return { chat, embeddings };
}

async function checkSpendShown(page: Page, keyId: string, charged: { chat: bigint; embeddings: bigint }, artifacts: string): Promise<void> {
  const spent = SEEDED_SPENT + charged.chat + charged.embeddings;
  const calls = SEEDED_CALLS + 2;
  const chart = await chartOf(page);
  const day = today();
  const bar = chart.bars.find((b) => b.date === day);
  assert.equal(bar?.title, `${day}: ${formatUsdc(spent)} USDC, ${calls} calls`, "today's bar holds the new spend, not the reservation");
  assert.ok(bar.height > 0);
  assert.equal(chart.bars.filter((b) => b.height > 0).length, 1, "no other day has spend");
  assert.equal(chart.bars.length, 30);
  assert.ok(chart.caption.startsWith(`Spend per day (UTC, USDC). ${formatUsdc(spent)} USDC in ${calls} calls from `), chart.caption);

  assert.deepEqual(await spendTile(page, "Spent"), {
    value: `${formatUsdc(spent)} USDC`,
    hint: `${calls} calls, ${chart.bars[0]?.date} to ${day} (UTC), settled charges only`,
  });

  const models = await modelTable(page);
  const expected = new Map([
    [NO_MODEL, [String(SEEDED_CALLS), formatUsdc(SEEDED_SPENT)]],
    ["gpt-4o", ["1", formatUsdc(charged.chat)]],
    ["text-embedding-3-small", ["1", formatUsdc(charged.embeddings)]],
  ]);
  assert.equal(models.rows.length, 3);
  for (const row of models.rows) assert.deepEqual(row.cells.slice(0, 2), expected.get(row.header), `model ${row.header}`);
  assert.equal(models.rows[0]?.header, NO_MODEL, "most spent first");
  assert.equal(
    models.note,
    `Total ${formatUsdc(spent)} USDC in ${calls} calls, ${chart.bars[0]?.date} to ${day} (UTC). Open reservations are not spend: they are listed apart.`,
  );

  const held = await reservations(page);
  assert.equal(held.total, `${formatUsdc(SEEDED_RESERVED + HOLD)} USDC held now`);
  assert.deepEqual(
    held.rows.map((r) => [r.header, ...r.cells]),
    [
      [NAME, "8453", formatUsdc(HOLD)],
      ["Research agent", "8453", formatUsdc(SEEDED_RESERVED)],
    ],
  );
  assert.deepEqual((await rowsOf(keysTable(page))).find((r) => r.header.includes(keyId))?.cells.slice(2, 6), [
    "2.500000",
    formatUsdc(charged.chat + charged.embeddings),
    formatUsdc(HOLD),
    formatUsdc(2_500_000n - charged.chat - charged.embeddings - HOLD),
  ]);
  await page.screenshot({ path: join(artifacts, "dashboard.png"), fullPage: true });
}

async function revokeThroughPage(page: Page, base: string, keyId: string, token: string, artifacts: string): Promise<void> {
  const revoke = page.getByRole("button", { name: `Revoke ${NAME}` });
  const dialog = page.getByRole("alertdialog", { name: `Revoke ${NAME}? ${keyId}` });
  await revoke.click();
  await dialog.waitFor();
  assert.equal(await revoke.getAttribute("aria-expanded"), "true");
  assert.ok(
    (await dialog.innerText()).includes(`the ${formatUsdc(HOLD)} USDC its open intents hold stays reserved`),
    "the confirmation says the reservation stays",
  );
  await dialog.getByRole("button", { name: "Cancel" }).click();
  assert.equal(await dialog.count(), 0);
  assert.equal(await page.evaluate(() => document.activeElement?.id), `revoke-${keyId}`, "cancelling returns the focus to Revoke");
  const paid = createTollgateClient({ baseUrl: base, apiKey: token, maxRetries: 0 });
  assert.equal((await paid.keys.get(keyId)).status, "active", "cancel revoked nothing");

  await revoke.click();
  await dialog.waitFor();
  assert.equal(await page.evaluate(() => document.activeElement?.closest("[role=alertdialog]") !== null), true, "the confirmation takes the focus");
  await page.screenshot({ path: join(artifacts, "key-revoke-confirm.png"), fullPage: true });
  await dialog.getByRole("button", { name: "Revoke key" }).click();
  await dialog.waitFor({ state: "detached" });
  await keyRow(page, keyId).getByText("Revoked", { exact: true }).waitFor();
  assert.equal(await revoke.count(), 0, "a revoked key offers no Revoke");
  assert.equal(await page.evaluate(() => document.activeElement?.id), `edit-${keyId}`, "the focus lands on the key's Edit");
  await page.screenshot({ path: join(artifacts, "key-revoked.png"), fullPage: true });

  // The gateway refuses the token from now on, on a paid route and on the key's own view.
  for (const call of [() => paid.embeddings.create({ model: "text-embedding-3-small", input: "after revocation" }), () => paid.keys.get(keyId)]) {
    const error = await call().then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(error instanceof AuthenticationError, `refused with 401: ${String(error)}`);
    assert.equal(error.status, 401);
    assert.equal(error.code, "key_revoked");
  }
  // The revocation survives a reload (the gateway's state, not the page's).
  await page.reload();
  await keyRow(page, keyId).getByText("Revoked", { exact: true }).waitFor();
  assert.equal((await reservations(page)).total, `${formatUsdc(SEEDED_RESERVED + HOLD)} USDC held now`, "the revoked key's reservation is still held, apart");
}

/** Runs the lifecycle checks on the signed-in seeded wallet (see the file comment). */
export async function checkKeyLifecycle(page: Page, base: string, artifacts: string): Promise<void> {
  const { keyId, token } = await createThroughPage(page, base, artifacts);
  const charged = await useKey(base, token);
  await page.reload();
  await keysTable(page).waitFor();
  await checkSpendShown(page, keyId, charged, artifacts);
  await revokeThroughPage(page, base, keyId, token, artifacts);
}
