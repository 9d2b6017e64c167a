/**
 * The key-governance part of the browser test, on the signed-in seeded wallet: open the research
 * key's panel, get the gateway's 409 for a limit below used + reserved (shown with its message),
 * save a new limit, a weekly period, allowed models and per-model caps (the row and the totals
 * follow, the history shows the event), then rotate the token with a grace: the new token is
 * shown once with a copy button and the old token's expiry, works at once, and the old one keeps
 * working for the grace. Saves e2e/artifacts/key-edit.png and key-rotate.png.
 */
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Locator, Page } from "playwright-core";
import type { Seeded } from "./seed";
import { spendTile } from "./usage-view";

const DAY = 86_400_000;
const minute = (ms: number) => `${new Date(ms).toISOString().slice(0, 16).replace("T", " ")} UTC`;
const second = (text: string) => Date.parse(text.replace(" UTC", "Z").replace(" ", "T"));

/** End of the weekly budget window (Monday 00:00 UTC) that contains `now`. */
function weekEnd(now: number): number {
  const d = new Date(now);
  const day = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
  return day - ((d.getUTCDay() + 6) % 7) * DAY + 7 * DAY;
}

const keyRow = (page: Page, keyId: string) => page.getByRole("table", { name: "Service keys" }).locator("tbody tr:not(.detail-row)").filter({ hasText: keyId });

/** The cells of the key's row in the keys table. */
async function keyCells(page: Page, keyId: string): Promise<string[]> {
  return (await keyRow(page, keyId).getByRole("cell").allInnerTexts()).map((t) => t.trim());
}

/** The detail line under the key's row (its period, models and caps), as "term: value" lines. */
async function keyRules(page: Page, keyId: string): Promise<string[]> {
  const detail = keyRow(page, keyId).locator("xpath=following-sibling::tr[1][contains(@class, 'detail-row')]");
  const items = detail.locator("dl > div");
  const out: string[] = [];
  for (let i = 0, n = await items.count(); i < n; i++)
    out.push(`${(await items.nth(i).locator("dt").innerText()).trim()}: ${(await items.nth(i).locator("dd").innerText()).trim()}`);
  return out;
}

/** The events of a key as the gateway answers the page (with its session cookie). */
function eventsInPage(page: Page, keyId: string) {
  return page.evaluate(
    (id) =>
      fetch(`/api/keys/${id}/events`, { cache: "no-store" }).then(
        (r) => r.json() as Promise<{ events: { type: string; actor: string; changes: Record<string, { from: unknown; to: unknown }> }[] }>,
      ),
    keyId,
  );
}

/** GET /api/keys/{keyId} with a service-key token, from Node: the status and error code. */
async function inspectWith(base: string, keyId: string, token: string): Promise<{ status: number; code?: string }> {
  const response = await fetch(`${base}/api/keys/${keyId}`, { headers: { authorization: `Bearer ${token}` } });
  const body = (await response.json()) as { error?: { code?: string } };
  return { status: response.status, ...(body.error?.code ? { code: body.error.code } : {}) };
}

async function historyItems(panel: Locator): Promise<string[]> {
  return (await panel.getByRole("list", { name: "Change history" }).locator(":scope > li").allInnerTexts()).map((t) => t.trim());
}

async function checkEdit(page: Page, panel: Locator, keyId: string, wallet: string, expiry: string, artifacts: string): Promise<void> {
  const limit = panel.getByLabel("Budget limit (USDC)");
  const save = panel.getByRole("button", { name: "Save changes" });
  assert.equal(await limit.inputValue(), "25.000000", "the form starts from the key's values");
  assert.equal(await panel.getByLabel("Budget period").inputValue(), "");
  await panel.getByText("No changes yet: the key is as it was created.").waitFor();

  // Checked in the page: never sent.
  await limit.fill("1.0000001");
  await save.click();
  await panel.getByText('"1.0000001" has more than 6 decimals (the smallest USDC unit is 0.000001).').waitFor();
  assert.equal(await limit.getAttribute("aria-invalid"), "true");

  // Refused by the gateway: 409 limit_below_committed, with its envelope message.
  await limit.fill("1");
  await save.click();
  const alert = panel.getByRole("alert").filter({ hasText: "Could not save." });
  await alert.waitFor();
  assert.equal(
    (await alert.innerText()).trim(),
    "Could not save. budgetLimit 1000000 is below what the key has used and reserved in this window (1750000).\n\n" +
      "In its current window the key has used 1.250000 and reserved 0.500000 USDC, so the limit must be at least 1.750000 USDC.",
  );
  assert.equal((await keyCells(page, keyId))[2], "25.000000", "the refused limit changed nothing");

  await limit.fill("20");
  await panel.getByLabel("Budget period").selectOption("weekly");
  await panel.getByLabel("Allowed models").fill("openai/*, claude-sonnet-4-5");
  await panel.getByLabel("Per-model caps (USDC)").fill("openai/* = 2.5\nclaude-sonnet-4-5 = 1");
  await save.click();
  await panel.getByText("Saved (4 fields changed).").waitFor();
  assert.equal(await alert.count(), 0, "the error is gone");
  assert.equal(await limit.inputValue(), "20.000000");

  // A new weekly window starts now: used 0, the reservation carries over.
  const resets = minute(weekEnd(Date.now()));
  assert.deepEqual(await keyCells(page, keyId), ["API", "8453", "20.000000", "0.000000", "0.500000", "19.500000", expiry, "Active", "Edit\nRevoke"]);
  assert.deepEqual(await keyRules(page, keyId), [
    `Period: Weekly, resets ${resets}`,
    "Models: openai/*, claude-sonnet-4-5",
    "Per-model caps: openai/* ≤ 2.500000 · claude-sonnet-4-5 ≤ 1.000000 USDC",
  ]);
  const overflow = await page.getByRole("table", { name: "Service keys" }).evaluate((table) => table.scrollWidth - table.parentElement!.clientWidth);
  assert.ok(overflow <= 0, `the keys table fits its card at this viewport (${overflow}px too wide)`);
  assert.equal((await spendTile(page, "Available")).value, "24.200000 USDC", "the totals follow the saved key");

  await panel.getByText(/^Updated /).waitFor();
  const [event, ...older] = await historyItems(panel);
  assert.equal(older.length, 0, "the refused update recorded nothing");
  assert.match(event ?? "", new RegExp(`^Updated \\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2}:\\d{2} UTC by wallet ${wallet}\\n`));
  for (const line of [
    "Budget limit: 25.000000 USDC → 20.000000 USDC",
    "Budget period: none (lifetime budget) → weekly",
    "Allowed models: every model → openai/*, claude-sonnet-4-5",
    "Per-model caps: none → openai/* ≤ 2.500000 USDC, claude-sonnet-4-5 ≤ 1.000000 USDC",
  ])
    assert.ok(event?.includes(line), `the event shows "${line}"`);
  const { events } = await eventsInPage(page, keyId);
  assert.equal(events.length, 1);
  assert.deepEqual(events[0]?.changes.budgetLimit, { from: "25000000", to: "20000000" });
  assert.deepEqual(events[0]?.changes.budgetPeriod, { from: null, to: "weekly" });
  assert.equal(events[0]?.actor, `wallet:${wallet}`);
  mkdirSync(artifacts, { recursive: true });
  await page.screenshot({ path: join(artifacts, "key-edit.png"), fullPage: true });

  await save.click();
  await panel.getByText("Nothing changed: there is nothing to save.").waitFor();
}

async function checkRotate(page: Page, panel: Locator, base: string, keyId: string, oldToken: string, artifacts: string): Promise<string> {
  await page.context().grantPermissions(["clipboard-read", "clipboard-write"], { origin: base });
  await panel.getByLabel("Old token keeps working for").selectOption({ label: "5 minutes" });
  const before = Date.now();
  await panel.getByRole("button", { name: "Rotate token" }).click();
  const tokenBox = panel.getByLabel("New token");
  await tokenBox.waitFor();
  const after = Date.now();
  const token = await tokenBox.inputValue();
  assert.match(token, /^svc-[A-Za-z0-9_-]{43}$/);
  assert.notEqual(token, oldToken);
  await panel.getByText("New token, shown only this once.").waitFor();

  const expiry = (await panel.getByText(/^The old token keeps working until /).innerText()).match(/until (.+ UTC),/)?.[1];
  assert.ok(expiry, "the old token's expiry is shown");
  const until = second(expiry);
  assert.ok(
    until >= Math.floor((before + 300_000) / 1000) * 1000 - 2000 && until <= after + 300_000 + 2000,
    `old token valid until ${expiry}: five minutes from now`,
  );

  await panel.getByRole("button", { name: "Copy token" }).click();
  await panel.getByText("Copied to the clipboard.").waitFor();
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), token, "the copy button copies the new token");

  await panel.getByText(/^Token rotated /).waitFor();
  const [rotated] = await historyItems(panel);
  assert.ok(rotated?.includes(`Old token valid until: — → ${expiry}`), `rotation event: ${rotated}`);

  assert.deepEqual(await inspectWith(base, keyId, token), { status: 200 }, "the new token works at once");
  assert.deepEqual(await inspectWith(base, keyId, oldToken), { status: 200 }, "the old token works during its grace");

  mkdirSync(artifacts, { recursive: true });
  await page.screenshot({ path: join(artifacts, "key-rotate.png"), fullPage: true });
  return token;
}

/** Runs the governance checks on the seeded wallet's research key; the page is signed in. */
export async function checkKeyGovernance(page: Page, base: string, seed: Seeded, wallet: string, expiry: string, artifacts: string): Promise<void> {
  const keyId = seed.keys.research;
  const edit = page.getByRole("button", { name: "Edit Research agent" });
  assert.equal(await edit.getAttribute("aria-expanded"), "false");
  await edit.click();
  const panel = page.getByRole("region", { name: `Manage Research agent ${keyId}` });
  await panel.waitFor();
  assert.equal(await edit.getAttribute("aria-expanded"), "true");
  assert.equal(await page.evaluate(() => document.activeElement?.id), "key-panel-heading", "the panel takes the focus");

  await checkEdit(page, panel, keyId, wallet, expiry, artifacts);

  const token = await checkRotate(page, panel, base, keyId, seed.researchToken, artifacts);

  // Shown once: hidden, it is gone from the page, and reopening the panel does not bring it back.
  await panel.getByRole("button", { name: "Hide token" }).click();
  assert.equal(await panel.getByLabel("New token").count(), 0);
  assert.ok(!(await page.content()).includes(token), "the hidden token is nowhere in the page");
  await panel.getByRole("button", { name: "Close" }).click();
  assert.equal(await panel.count(), 0);
  assert.equal(await page.evaluate(() => document.activeElement?.id), `edit-${keyId}`, "closing returns the focus to Edit");
  await edit.click();
  await panel.getByText(/^Token rotated /).waitFor();
  assert.ok(!(await page.content()).includes(token), "reopening shows no token");

  // A rotation without grace: the token shown before stops at once (401 key_rotated).
  await panel.getByLabel("Old token keeps working for").selectOption("0");
  await panel.getByRole("button", { name: "Rotate token" }).click();
  await panel.getByText(/^The old token stopped working at /).waitFor();
  assert.deepEqual(await inspectWith(base, keyId, token), { status: 401, code: "key_rotated" });
  assert.deepEqual(await inspectWith(base, keyId, await panel.getByLabel("New token").inputValue()), { status: 200 });
  await panel.getByRole("button", { name: "Close" }).click();
}
