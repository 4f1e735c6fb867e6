import { type ConfirmationPage, type HeldCopy, LINK_STATES } from "../../services/autotrade-confirmations.js";
import { escapeHtml } from "../checkout/html.js";

/**
 * The confirmation page's HTML: plain, server-rendered, the account's held
 * copies in a table with a Confirm and a Discard form per copy, each carrying
 * the link's form token. Every text from outside is escaped.
 */

const STYLE = `body{font-family:system-ui,sans-serif;max-width:48rem;margin:3rem auto;padding:0 1rem;color:#222}
table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:.4rem .6rem;border-bottom:1px solid #ddd}
form{display:inline-block;margin-right:.4rem}button{font-size:1rem;padding:.3rem .9rem}
.note{background:#f4f4f4;padding:.6rem .8rem;border-radius:4px}.error{background:#fde8e8}`;

function layout(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title><style>${STYLE}</style></head>
<body><h1>${escapeHtml(title)}</h1>${body}</body></html>`;
}

const TITLE = "Autotrade copies waiting for your confirmation";

/** What a finished action left, shown after its redirect. */
export const DONE = {
  confirmed: "The copy was confirmed and sent to your broker.",
  discarded: "The copy was discarded: it will not be sent.",
} as const;

const TYPES: Record<string, string> = { market: "Market", limit: "Limit", stop: "Stop" };

function prices(copy: HeldCopy): string {
  const parts = [
    copy.limitPrice === null ? null : `limit ${copy.limitPrice}`,
    copy.stopPrice === null ? null : `stop ${copy.stopPrice}`,
  ].filter((part) => part !== null);
  return parts.length === 0 ? "at the market" : parts.join(", ");
}

function action(base: string, formToken: string, copy: HeldCopy, name: "confirm" | "discard"): string {
  return `<form method="post" action="${escapeHtml(`${base}/${name}`)}"><input type="hidden" name="form_token" value="${escapeHtml(formToken)}"><input type="hidden" name="copy" value="${escapeHtml(copy.key)}"><button type="submit" data-action="${name}">${name === "confirm" ? "Confirm" : "Discard"}</button></form>`;
}

function row(base: string, formToken: string, copy: HeldCopy): string {
  const cells = [
    copy.strategyName,
    copy.symbol,
    copy.side === "buy" ? "Buy" : "Sell",
    copy.quantity,
    TYPES[copy.orderType] ?? copy.orderType,
    prices(copy),
    `${new Date(copy.heldAtMs).toISOString().replace("T", " ").slice(0, 19)} UTC`,
  ];
  return `<tr data-copy="${escapeHtml(copy.key)}">${cells.map((cell) => `<td>${escapeHtml(cell)}</td>`).join("")}<td>${action(base, formToken, copy, "confirm")}${action(base, formToken, copy, "discard")}</td></tr>`;
}

/** A live link's page; `note` is a finished action's outcome, `error` a refused form's reason. */
export function confirmationHtml(
  page: Extract<ConfirmationPage, { state: "live" }>,
  base: string,
  shown: { readonly note?: string; readonly error?: string } = {},
): string {
  const intro = `<p>Account <span id="account">${escapeHtml(page.account)}</span> at ${escapeHtml(page.brokerName)}. Each copy below is sent to your broker only once you confirm it.</p>`;
  const note = shown.note === undefined ? "" : `<p id="note" class="note">${escapeHtml(shown.note)}</p>`;
  const error = shown.error === undefined ? "" : `<p id="error" class="note error">${escapeHtml(shown.error)}</p>`;
  const copies =
    page.copies.length === 0
      ? `<p id="empty" class="note">No copy waits for your confirmation.</p>`
      : `<table id="copies"><thead><tr><th>Strategy</th><th>Symbol</th><th>Side</th><th>Quantity</th><th>Type</th><th>Prices</th><th>Held since</th><th></th></tr></thead><tbody>${page.copies.map((copy) => row(base, page.formToken, copy)).join("")}</tbody></table>`;
  return layout(TITLE, `${intro}${note}${error}${copies}`);
}

/** A link that opens no page, or no longer does; `note` is the outcome of the action that spent it. */
export function closedHtml(state: "unknown" | keyof typeof LINK_STATES, note?: string): string {
  const reason = state === "unknown" ? "This link opens no confirmation page." : LINK_STATES[state];
  const shownNote = note === undefined ? "" : `<p id="note" class="note">${escapeHtml(note)}</p>`;
  return layout(TITLE, `${shownNote}<p id="error" class="note error">${escapeHtml(reason)}</p>`);
}

/** A form refused before the page could be shown again (a stale form). */
export const refusedHtml = (message: string): string =>
  layout(TITLE, `<p id="error" class="note error">${escapeHtml(message)}</p>`);
