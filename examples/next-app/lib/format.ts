/** Display helpers shared by the dashboard's tables. */

/** Unix milliseconds as `YYYY-MM-DD HH:MM UTC` (UTC, so server, browser and tests agree). */
export function formatTime(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 16).replace("T", " ")} UTC`;
}

/** Upper-cases the first letter: `"settled"` → `"Settled"`. */
export function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** Unix milliseconds as `YYYY-MM-DD HH:MM:SS UTC`, for instants a minute is too coarse for (token grace, changes). */
export function formatInstant(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 19).replace("T", " ")} UTC`;
}
