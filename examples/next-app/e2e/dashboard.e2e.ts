/**
 * Browser test of the dashboard: `next start` on the production build with a fresh SQLite file,
 * two wallets seeded through the gateway's HTTP API (each signed in with SIWE by a viem local
 * account), then headless Debian Chromium (via playwright-core) with a test EIP-1193 wallet
 * injected as `window.ethereum` — backed by the same viem accounts, signing in Node through
 * `page.exposeFunction` — signs in and checks that: nothing of a wallet shows before sign-in;
 * after it, every key, budget, intent, total, the spend chart, spend by model and the open
 * reservations are exactly the signed-in wallet's seeded data and nothing of the other wallet
 * (spend never counts a reservation); the session is an HttpOnly cookie that survives a reload;
 * "Load more"; key governance (e2e/key-governance.ts: edit a key's limit, period, models and caps,
 * the gateway's 409, the change history, token rotation shown once); the key lifecycle
 * (e2e/key-lifecycle.ts: create a key in the page, pay real calls with its token, see the spend
 * in the chart, by model and the reservation apart, revoke it in the page, its token refused);
 * sign-out clears it all; a declined signature; an empty wallet. Saves e2e/artifacts/
 * signed-out.png, key-edit.png, key-rotate.png, key-created.png, dashboard.png,
 * key-revoke-confirm.png, key-revoked.png and empty-wallet.png. Exits non-zero on any failure.
 * Run: npm run test:e2e
 */
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { parseSiweMessage } from "viem/siwe";
import { startApp, stopAllApps, type AppServer } from "./server";
import { checkKeyGovernance } from "./key-governance";
import { checkKeyLifecycle, SEEDED_CALLS, SEEDED_RESERVED, SEEDED_SPENT } from "./key-lifecycle";
import { CHAT_INTENTS, seedOtherWallet, seedWallet, type Seeded } from "./seed";
import { chartOf, modelTable, reservations, rowsOf, spendTile, today } from "./usage-view";
import { formatUsdc } from "../lib/usdc";

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
// Well-known development keys (never funded anywhere that matters).
const WALLET = privateKeyToAccount("0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80");
const OTHER_WALLET = privateKeyToAccount("0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d");
const EMPTY_WALLET = privateKeyToAccount("0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a");
/** The chain the test wallet reports (`eth_chainId`): Base. */
const WALLET_CHAIN = 8453;
const EXPIRY = "2031-01-15 12:00 UTC";

/**
 * The test wallet behind `window.ethereum`: which account it connects with, whether it declines
 * the next signature, and every message it signed (for the assertions).
 */
interface TestWallet {
  account: PrivateKeyAccount;
  decline: boolean;
  signed: string[];
}

/**
 * Injects an EIP-1193 provider into every page of `page`'s context: `eth_requestAccounts`,
 * `eth_chainId` and `personal_sign`, answered in Node by `wallet`'s viem account. A declined
 * signature is the EIP-1193 error 4001, as a real wallet answers it.
 */
async function injectWallet(page: Page, wallet: TestWallet): Promise<void> {
  await page.exposeFunction("__testWalletAccount", () => wallet.account.address.toLowerCase());
  await page.exposeFunction("__testWalletSign", async (hex: `0x${string}`, address: string) => {
    if (wallet.decline) return { declined: true };
    assert.equal(address.toLowerCase(), wallet.account.address.toLowerCase(), "personal_sign names the connected account");
    wallet.signed.push(Buffer.from(hex.slice(2), "hex").toString("utf8"));
    return { signature: await wallet.account.signMessage({ message: { raw: hex } }) };
  });
  await page.addInitScript((chainId: number) => {
    const bridge = window as unknown as {
      __testWalletAccount(): Promise<string>;
      __testWalletSign(hex: string, address: string): Promise<{ signature?: string; declined?: boolean }>;
      ethereum: unknown;
    };
    bridge.ethereum = {
      async request({ method, params }: { method: string; params?: unknown[] }) {
        if (method === "eth_requestAccounts" || method === "eth_accounts") return [await bridge.__testWalletAccount()];
        if (method === "eth_chainId") return `0x${chainId.toString(16)}`;
        if (method === "personal_sign") {
          const [hex, address] = params as [string, string];
          const answer = await bridge.__testWalletSign(hex, address);
          if (answer.declined) throw Object.assign(new Error("User rejected the request."), { code: 4001 });
          return answer.signature;
        }
        throw Object.assign(new Error(`Unsupported method ${method}`), { code: 4200 });
      },
    };
  }, WALLET_CHAIN);
}

/** What GET /api/keys answers from inside the page (with the browser's cookies). */
const keysStatusInPage = (page: Page) => page.evaluate(() => fetch("/api/keys", { cache: "no-store" }).then((r) => r.status));

/** Asserts the signed-out page: the sign-in button, no wallet data, and the API refusing the browser. */
async function expectSignedOut(page: Page): Promise<void> {
  await page.getByRole("button", { name: "Sign in with wallet" }).waitFor();
  assert.equal(await page.getByRole("table").count(), 0, "no table before sign-in");
  for (const region of ["Spend", "Spend by model", "Open reservations"])
    assert.equal(await page.getByRole("region", { name: region, exact: true }).count(), 0, `no ${region} before sign-in`);
  assert.equal(await page.getByText("Signed in as").count(), 0);
  assert.equal(await keysStatusInPage(page), 401, "the gateway serves no wallet to this browser");
  const cookies = await page.context().cookies();
  assert.equal(cookies.filter((c) => c.name === "tollgate_session" && c.value !== "").length, 0, "no session cookie");
}

async function signIn(page: Page): Promise<void> {
  await page.getByRole("button", { name: "Sign in with wallet" }).click();
  await page.getByText("Signed in as").waitFor();
}

async function checkSignedOutAtFirst(page: Page, base: string): Promise<void> {
  await page.goto(base);
  await expectSignedOut(page);
  assert.equal(await page.getByLabel("Wallet address").count(), 0, "no address to type in any more");
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, "signed-out.png"), fullPage: true });
}

async function checkSeededWallet(page: Page, base: string, wallet: TestWallet, seed: Seeded, other: { keyId: string; intentId: string }): Promise<void> {
  await signIn(page);
  const keysTable = page.getByRole("table", { name: "Service keys" });
  await keysTable.waitFor();
  assert.equal((await page.getByRole("region", { name: "Wallet session" }).locator("code").innerText()).trim(), WALLET.address.toLowerCase());
  const siwe = parseSiweMessage(wallet.signed.at(-1)!);
  assert.deepEqual(
    [siwe.domain, siwe.address, siwe.uri, siwe.chainId],
    [new URL(base).host, WALLET.address, new URL(base).origin, WALLET_CHAIN],
    "the wallet signed a SIWE message for this host",
  );

  const trialExpiry = `${new Date(seed.trialExpiresAt).toISOString().slice(0, 16).replace("T", " ")} UTC`;
  const expectedKeys = new Map([
    // No detail line (period, models, caps) until a key is governed; "Edit" opens its panel, "Revoke" (live keys only) its confirmation.
    [
      seed.keys.research,
      { name: "Research agent", cells: ["API", "8453", "25.000000", "1.250000", "0.500000", "23.250000", EXPIRY, "Active", "Edit\nRevoke"] },
    ],
    [seed.keys.chat, { name: "Chat session", cells: ["Session", "84532", "5.000000", "0.300000", "0.000000", "4.700000", EXPIRY, "Active", "Edit\nRevoke"] }],
    [seed.keys.old, { name: "Old key", cells: ["API", "8453", "1.000000", "0.000000", "0.000000", "1.000000", EXPIRY, "Revoked", "Edit"] }],
    [seed.keys.trial, { name: "Short trial", cells: ["API", "8453", "3.000000", "0.000000", "0.000000", "3.000000", trialExpiry, "Expired", "Edit"] }],
  ]);
  const keyRows = await rowsOf(keysTable);
  assert.equal(keyRows.length, expectedKeys.size, "one row per key of this wallet, none of the other wallet");
  assert.equal(await keysTable.locator("tr.detail-row").count(), 0, "no key has a period, an allow-list or caps yet");
  for (const row of keyRows) {
    const keyId = [...expectedKeys.keys()].find((id) => row.header.includes(id));
    assert.ok(keyId, `unexpected key row ${row.header}`);
    const expected = expectedKeys.get(keyId)!;
    assert.equal(row.header, `${expected.name}\n${keyId}`);
    assert.deepEqual(row.cells, expected.cells, `key ${expected.name}`);
  }

  await checkSeededSpend(page);

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

  const text = await page.locator("main").innerText();
  for (const hidden of [other.keyId, other.intentId, "Other wallet key", "other.wallet", OTHER_WALLET.address.toLowerCase()])
    assert.ok(!text.includes(hidden), `the other wallet's ${hidden} is not shown`);
}

/** The seeded wallet's spend: 1.55 USDC in 21 charges today (no model), 0.5 USDC held apart, 27.95 available. */
async function checkSeededSpend(page: Page): Promise<void> {
  const chart = await chartOf(page);
  const day = today();
  assert.equal(chart.bars.length, 30, "the last 30 days");
  assert.equal(chart.bars.at(-1)?.date, day);
  assert.deepEqual(
    chart.bars.filter((b) => b.height > 0).map((b) => b.title),
    [`${day}: 1.550000 USDC, 21 calls`],
    "one bar: today's settled charges, without the 0.5 USDC reservation",
  );
  assert.ok(chart.ticks.length >= 4 && chart.ticks.length <= 9, `day labels: ${chart.ticks.join(", ")}`);
  assert.match(
    chart.label,
    new RegExp(`^Spend per day \\(UTC\\)\\. 1\\.550000 USDC in 21 calls from ${chart.bars[0]?.date} to ${day}; the busiest day was ${day}`),
  );
  assert.deepEqual(await spendTile(page, "Spent"), { value: "1.550000 USDC", hint: `21 calls, ${chart.bars[0]?.date} to ${day} (UTC), settled charges only` });
  assert.deepEqual(
    await spendTile(page, "Available"),
    { value: "27.950000 USDC", hint: "budget left across 2 active keys" },
    "revoked and expired keys are not available budget",
  );
  const models = await modelTable(page);
  assert.deepEqual(models.rows, [{ header: "No model (priced by the caller)", cells: [String(SEEDED_CALLS), formatUsdc(SEEDED_SPENT), "100.0%"] }]);
  const held = await reservations(page);
  assert.equal(held.total, `${formatUsdc(SEEDED_RESERVED)} USDC held now`);
  assert.deepEqual(held.rows, [{ header: "Research agent", cells: ["8453", "0.500000"] }]);

  // Another range reads the usage again: 7 days, every one labelled.
  const range = page.getByRole("region", { name: "Spend", exact: true }).getByLabel("Range");
  const bars = (n: number) => page.waitForFunction((count) => document.querySelectorAll("figure.chart rect.bar").length === count, n);
  await range.selectOption("7");
  await bars(7);
  const week = await chartOf(page);
  assert.equal(week.ticks.length, 7);
  assert.equal(week.bars[0]?.date, new Date(Date.parse(day) - 6 * 86_400_000).toISOString().slice(0, 10));
  assert.deepEqual(await spendTile(page, "Spent"), { value: "1.550000 USDC", hint: `21 calls, ${week.bars[0]?.date} to ${day} (UTC), settled charges only` });
  await range.selectOption("30");
  await bars(30);
}

async function checkCookieAndReload(page: Page): Promise<void> {
  const [cookie] = (await page.context().cookies()).filter((c) => c.name === "tollgate_session");
  assert.ok(cookie, "the gateway set the session cookie");
  assert.match(cookie.value, /^sess_/);
  assert.deepEqual([cookie.httpOnly, cookie.sameSite, cookie.path], [true, "Lax", "/"]);
  assert.ok(!(await page.evaluate(() => document.cookie)).includes("tollgate_session"), "page scripts cannot read the session");
  assert.equal(await keysStatusInPage(page), 200);
  await page.reload();
  await page.getByRole("table", { name: "Service keys" }).waitFor();
  assert.equal(await page.getByRole("button", { name: "Sign in with wallet" }).count(), 0, "the cookie keeps the page signed in across a reload");
}

async function checkSignOut(page: Page): Promise<void> {
  await page.getByRole("button", { name: "Sign out" }).click();
  await expectSignedOut(page);
  await page.reload();
  await expectSignedOut(page);
}

async function checkDeclined(page: Page, wallet: TestWallet): Promise<void> {
  wallet.decline = true;
  await page.getByRole("button", { name: "Sign in with wallet" }).click();
  // Next renders its own (empty) route announcer with role=alert as well.
  const alert = page.getByRole("alert").filter({ hasText: "Not signed in." });
  await alert.waitFor();
  assert.equal((await alert.innerText()).trim(), "Not signed in. The wallet declined the request.");
  await expectSignedOut(page);
  wallet.decline = false;
}

async function checkEmptyWallet(page: Page, wallet: TestWallet): Promise<void> {
  wallet.account = EMPTY_WALLET;
  await signIn(page);
  await page.getByText("This wallet has no keys yet.").waitFor();
  await page.getByText("No payment intents yet.").waitFor();
  assert.equal((await page.getByRole("region", { name: "Wallet session" }).locator("code").innerText()).trim(), EMPTY_WALLET.address.toLowerCase());
  for (const label of ["Spent", "Available"]) assert.equal((await spendTile(page, label)).value, "0.000000 USDC", label);
  const chart = await chartOf(page);
  assert.deepEqual([chart.bars.filter((b) => b.height > 0).length, chart.caption.endsWith(`No spend from ${chart.bars[0]?.date} to ${today()}.`)], [0, true]);
  await page.getByRole("region", { name: "Spend by model" }).getByText(`No spend from ${chart.bars[0]?.date} to ${today()}.`).waitFor();
  assert.deepEqual(await reservations(page), { total: "0.000000 USDC held now", rows: [] });
  await page.screenshot({ path: join(ARTIFACTS, "empty-wallet.png"), fullPage: true });
  await checkSignOut(page);
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
    const other = await seedOtherWallet(server.url, OTHER_WALLET);
    const seed = await seedWallet(server.url, WALLET);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.setDefaultTimeout(15_000);
    const wallet: TestWallet = { account: WALLET, decline: false, signed: [] };
    await injectWallet(page, wallet);
    await checkSignedOutAtFirst(page, server.url);
    // The trial key must be past its expiry before the page reads it.
    await new Promise((r) => setTimeout(r, Math.max(0, seed.trialExpiresAt + 50 - Date.now())));
    await checkSeededWallet(page, server.url, wallet, seed, other);
    await checkKeyGovernance(page, server.url, seed, WALLET.address.toLowerCase(), EXPIRY, ARTIFACTS);
    await checkKeyLifecycle(page, server.url, ARTIFACTS);
    await checkCookieAndReload(page);
    await checkSignOut(page);
    await checkDeclined(page, wallet);
    await checkEmptyWallet(page, wallet);
    console.log(`dashboard e2e: passed in ${((Date.now() - started) / 1000).toFixed(1)} s; screenshots in ${ARTIFACTS}`);
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
