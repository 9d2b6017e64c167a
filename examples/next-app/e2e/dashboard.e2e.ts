/**
 * Browser test of the dashboard: `next start` on the production build with a fresh SQLite file,
 * data seeded through the gateway's HTTP API, then headless Debian Chromium (via playwright-core)
 * types the wallet address and checks that every key, budget, intent and total on the page is
 * exactly the seeded data; also an empty wallet, an invalid address, and "Load more".
 * Saves e2e/artifacts/dashboard.png. Exits non-zero on any failure. Run: npm run test:e2e
 */
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type Browser, type Locator, type Page } from "playwright-core";
import { startApp, stopAllApps, type AppServer } from "./server";
import { CHAT_INTENTS, seedWallet, type Seeded } from "./seed";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];
const APP_DIR = join(import.meta.dirname, "..");
const ARTIFACTS = join(import.meta.dirname, "artifacts");
const WALLET = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed";
const EMPTY_WALLET = "0x000000000000000000000000000000000000dEaD";
const EXPIRY = "2031-01-15 12:00 UTC";

interface Row {
  header: string;
  cells: string[];
}

async function rowsOf(table: Locator): Promise<Row[]> {
  const rows = table.locator("tbody tr");
  const out: Row[] = [];
  for (let i = 0, n = await rows.count(); i < n; i++) {
    const row = rows.nth(i);
    out.push({ header: (await row.getByRole("rowheader").innerText()).trim(), cells: (await row.getByRole("cell").allInnerTexts()).map((t) => t.trim()) });
  }
  return out;
}

async function lookUp(page: Page, address: string): Promise<void> {
  await page.getByLabel("Wallet address").fill(address);
  await page.getByRole("button", { name: "Show dashboard" }).click();
}

/** The value shown for `label` in the Spend summary (a `<dt>` and the `<dd>` after it). */
async function total(page: Page, label: string): Promise<string> {
  const term = page
    .getByRole("region", { name: "Spend" })
    .getByRole("term")
    .filter({ hasText: new RegExp(`^${label}$`) });
  return (await term.locator("xpath=following-sibling::dd[1]").innerText()).trim();
}

async function checkSeededWallet(page: Page, base: string, seed: Seeded): Promise<void> {
  await page.goto(base);
  await lookUp(page, WALLET);
  const keysTable = page.getByRole("table", { name: "Service keys" });
  await keysTable.waitFor();
  assert.equal(new URL(page.url()).searchParams.get("address"), WALLET, "the address is mirrored in ?address=");

  const trialExpiry = `${new Date(seed.trialExpiresAt).toISOString().slice(0, 16).replace("T", " ")} UTC`;
  const expectedKeys = new Map([
    [seed.keys.research, { name: "Research agent", cells: ["API", "8453", "25.000000", "1.250000", "0.500000", "23.250000", EXPIRY, "Active"] }],
    [seed.keys.chat, { name: "Chat session", cells: ["Session", "84532", "5.000000", "0.300000", "0.000000", "4.700000", EXPIRY, "Active"] }],
    [seed.keys.old, { name: "Old key", cells: ["API", "8453", "1.000000", "0.000000", "0.000000", "1.000000", EXPIRY, "Revoked"] }],
    [seed.keys.trial, { name: "Short trial", cells: ["API", "8453", "3.000000", "0.000000", "0.000000", "3.000000", trialExpiry, "Expired"] }],
  ]);
  const keyRows = await rowsOf(keysTable);
  assert.equal(keyRows.length, expectedKeys.size, "one row per key");
  for (const row of keyRows) {
    const keyId = [...expectedKeys.keys()].find((id) => row.header.includes(id));
    assert.ok(keyId, `unexpected key row ${row.header}`);
    const expected = expectedKeys.get(keyId)!;
    assert.equal(row.header, `${expected.name}\n${keyId}`);
    assert.deepEqual(row.cells, expected.cells, `key ${expected.name}`);
  }

  assert.equal(await total(page, "Settled"), "1.550000 USDC");
  assert.equal(await total(page, "Reserved"), "0.500000 USDC");
  assert.equal(await total(page, "Total spend"), "2.050000 USDC");
  assert.equal(await total(page, "Available"), "27.950000 USDC", "revoked and expired keys are not available budget");

  const intentsTable = page.getByRole("table", { name: "Payment intents" });
  const chatRow = ["Chat session", "inference · chat.completions", "Settled", "0.020000", "0.015000", "0.005000"];
  const firstPage = await rowsOf(intentsTable);
  assert.equal(firstPage.length, 20, "the first page shows the latest 20 intents");
  assert.deepEqual(new Set(firstPage.map((r) => r.header)), new Set(seed.chatSettled.slice(-20)), "the latest 20 are the chat intents");
  for (const row of firstPage) {
    assert.deepEqual(row.cells.slice(0, 6), chatRow);
    assert.match(row.cells[6] ?? "", /^\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC$/);
  }

  await page.getByRole("button", { name: "Load more" }).click();
  await page.getByText(`${CHAT_INTENTS + 3} intents shown (all)`).waitFor();
  assert.equal(await page.getByRole("button", { name: "Load more" }).count(), 0, "no more pages");
  const all = await rowsOf(intentsTable);
  const expectedResearch = new Map([
    [seed.research.settled, ["Research agent", "inference · chat.completions", "Settled", "2.000000", "1.250000", "0.750000"]],
    [seed.research.aborted, ["Research agent", "inference · images.generate", "Aborted", "0.750000", "—", "0.750000"]],
    [seed.research.authorized, ["Research agent", "inference · embeddings", "Authorized", "0.500000", "—", "—"]],
  ]);
  assert.equal(all.length, CHAT_INTENTS + 3);
  assert.deepEqual(new Set(all.slice(-3).map((r) => r.header)), new Set(expectedResearch.keys()), "the older page holds the research intents");
  for (const row of all.slice(-3)) assert.deepEqual(row.cells.slice(0, 6), expectedResearch.get(row.header), `intent ${row.header}`);
  assert.equal(new Set(all.map((r) => r.header)).size, all.length, "no intent is shown twice");

  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, "dashboard.png"), fullPage: true });
}

async function checkEmptyWallet(page: Page, base: string): Promise<void> {
  await page.goto(`${base}/?address=${EMPTY_WALLET}`);
  await page.getByText("This wallet has no keys yet.").waitFor();
  assert.equal(await page.getByLabel("Wallet address").inputValue(), EMPTY_WALLET, "?address= fills the form");
  await page.getByText("No payment intents yet.").waitFor();
  for (const label of ["Settled", "Reserved", "Total spend", "Available"]) assert.equal(await total(page, label), "0.000000 USDC", label);
}

async function checkInvalidAddress(page: Page, base: string): Promise<void> {
  const response = await fetch(`${base}/api/keys`, { headers: { "x-session-user-address": "0x1234" } });
  assert.equal(response.status, 400);
  const { error } = (await response.json()) as { error: { message: string } };
  await page.goto(base);
  await lookUp(page, "0x1234");
  // Next renders its own (empty) route announcer with role=alert as well.
  const alert = page.getByRole("alert").filter({ hasText: "Could not load this wallet." });
  await alert.waitFor();
  assert.equal((await alert.innerText()).trim(), `Could not load this wallet. ${error.message}`);
  assert.equal(await page.getByRole("table").count(), 0, "no data is shown for an invalid address");
}

async function main(): Promise<void> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `Chromium not found at ${CHROMIUM}. Install the Debian package (apt-get install -y chromium; CI's .ci/run does) or set CHROMIUM_PATH. This test never downloads a browser.`,
    );
  }
  const started = Date.now();
  const dir = mkdtempSync(join(tmpdir(), "tollgate-next-e2e-"));
  let server: AppServer | undefined;
  let browser: Browser | undefined;
  let page: Page | undefined;
  // The server runs in its own process group, so Ctrl-C does not reach it: stop it here.
  const onSignal = () =>
    void Promise.allSettled([browser?.close(), stopAllApps()]).then(() => {
      rmSync(dir, { recursive: true, force: true });
      process.exit(130);
    });
  process.once("SIGINT", onSignal).once("SIGTERM", onSignal);
  try {
    server = await startApp(APP_DIR, { TOLLGATE_DB: join(dir, "tollgate.db") });
    const seed = await seedWallet(server.url, WALLET);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.setDefaultTimeout(15_000);
    // The trial key must be past its expiry before the page reads it.
    await new Promise((r) => setTimeout(r, Math.max(0, seed.trialExpiresAt + 50 - Date.now())));
    await checkSeededWallet(page, server.url, seed);
    await checkEmptyWallet(page, server.url);
    await checkInvalidAddress(page, server.url);
    console.log(`dashboard e2e: passed in ${((Date.now() - started) / 1000).toFixed(1)} s; screenshot ${join(ARTIFACTS, "dashboard.png")}`);
  } catch (error) {
    if (page) {
      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: join(ARTIFACTS, "failure.png"), fullPage: true }).catch(() => {});
    }
    if (server) console.error(`--- next start output ---\n${server.output()}`);
    throw error;
  } finally {
    await browser?.close().catch(() => {});
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error("dashboard e2e: FAILED");
  console.error(error);
  process.exitCode = 1;
});
