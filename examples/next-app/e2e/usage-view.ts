/**
 * Reads what the dashboard shows of the wallet's spend, for the browser test's assertions: the
 * "Spend" tiles, the chart's bars and day labels, the spend-by-model rows and the open
 * reservations (total and per key), and table rows in general.
 */
import type { Locator, Page } from "playwright-core";

/** A table row: its header cell and its other cells, as the page shows them. */
export interface Row {
  header: string;
  cells: string[];
}

/** The rows of `table` (not the detail line under a governed key's row). */
export async function rowsOf(table: Locator): Promise<Row[]> {
  const rows = table.locator("tbody tr:not(.detail-row)");
  const out: Row[] = [];
  for (let i = 0, n = await rows.count(); i < n; i++) {
    const row = rows.nth(i);
    out.push({ header: (await row.getByRole("rowheader").innerText()).trim(), cells: (await row.getByRole("cell").allInnerTexts()).map((t) => t.trim()) });
  }
  return out;
}

/** The value and hint shown for `label` in the "Spend" card (a `<dt>` and the two `<dd>` after it). */
export async function spendTile(page: Page, label: string): Promise<{ value: string; hint: string }> {
  const term = page
    .getByRole("region", { name: "Spend", exact: true })
    .getByRole("term")
    .filter({ hasText: new RegExp(`^${label}$`) });
  return {
    value: (await term.locator("xpath=following-sibling::dd[1]").innerText()).trim(),
    hint: (await term.locator("xpath=following-sibling::dd[2]").innerText()).trim(),
  };
}

/** The chart of the "Spend" card once loaded: its bars (day, tooltip, height) and day labels. */
export async function chartOf(
  page: Page,
): Promise<{ label: string; bars: { date: string; title: string; height: number }[]; ticks: string[]; caption: string }> {
  const figure = page.getByRole("region", { name: "Spend", exact: true }).locator("figure.chart");
  await figure.waitFor();
  const svg = figure.getByRole("img");
  const bars = await svg.locator("rect.bar").evaluateAll((rects) =>
    rects.map((r) => ({
      date: r.getAttribute("data-date") ?? "",
      title: r.querySelector("title")?.textContent ?? "",
      height: Number(r.getAttribute("height")),
    })),
  );
  return {
    label: (await svg.getAttribute("aria-label")) ?? "",
    bars,
    ticks: (await svg.locator("text.tick").allTextContents()).map((t) => t.trim()),
    caption: (await figure.locator("figcaption").innerText()).trim(),
  };
}

/** The rows of "Spend by model" and the line under them. */
export async function modelTable(page: Page): Promise<{ rows: Row[]; note: string }> {
  const region = page.getByRole("region", { name: "Spend by model" });
  const table = region.getByRole("table", { name: "Spend by model" });
  await table.waitFor();
  return { rows: await rowsOf(table), note: (await region.locator("p.count").innerText()).trim() };
}

/** The "Open reservations" panel: the total held now and the keys holding it. */
export async function reservations(page: Page): Promise<{ total: string; rows: Row[] }> {
  const region = page.getByRole("region", { name: "Open reservations" });
  const table = region.getByRole("table", { name: "Open reservations" });
  return {
    total: (await region.locator(".reserved-total").innerText()).trim(),
    rows: (await table.count()) === 0 ? [] : await rowsOf(table),
  };
}

/** Today (UTC) as `YYYY-MM-DD`. */
export const today = (): string => new Date().toISOString().slice(0, 10);
