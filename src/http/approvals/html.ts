import type { ApprovalPage } from "../../services/autotrade-approvals.js";
import { escapeHtml } from "../checkout/html.js";

/**
 * The approval page's HTML: plain, server-rendered, one form per action, each
 * carrying the request's form token. Every text from outside (names, the
 * account, reasons) is escaped.
 */

const STYLE = `body{font-family:system-ui,sans-serif;max-width:34rem;margin:3rem auto;padding:0 1rem;color:#222}
dl{display:grid;grid-template-columns:auto 1fr;gap:.4rem 1rem}dt{font-weight:600}
form{display:inline-block;margin:1rem 1rem 0 0}button{font-size:1rem;padding:.5rem 1.2rem}
.note{background:#f4f4f4;padding:.6rem .8rem;border-radius:4px}.error{background:#fde8e8}`;

function layout(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title><style>${STYLE}</style></head>
<body>${body}</body></html>`;
}

function form(path: string, formToken: string, inner: string): string {
  return `<form method="post" action="${escapeHtml(path)}"><input type="hidden" name="form_token" value="${escapeHtml(formToken)}">${inner}</form>`;
}

const limit = (max: number | undefined, unit: string) => (max === undefined ? "no limit" : `at most ${max} ${unit}`);

/** The setup as the customer reviews it: each asset class on or off with its limit (4.3 defaults: off). */
function terms(page: ApprovalPage): string {
  const b = page.body;
  const rows: [string, string, string][] = [
    ["site", "Site", page.siteName],
    ["strategy", "Strategy", page.strategyName],
    ["broker", "Broker", page.brokerName],
    ["account", "Account", b.Account],
    ["scaling", "Scaling", `${b.ScalingPercentage}% of the strategy's positions, against your account's value`],
    ["futures", "Futures", b.EnableFutures ? `On, ${limit(b.MaxFuturesContracts, "contracts per position")}` : "Off"],
    ["forex", "Forex", b.EnableForex ? `On, ${limit(b.MaxForexUnits, "units of 1,000 per position")}` : "Off"],
    [
      "stocks",
      "Stocks",
      b.EnableStocks
        ? `On, ${b.MaxStocksDollars === undefined ? "no limit" : `at most $${b.MaxStocksDollars} per position`}`
        : "Off",
    ],
    [
      "options",
      "Options",
      b.EnableOptions
        ? `On, ${b.EnableOptionsShorting ? "shorting allowed" : "no shorting"}, ${limit(b.MaxOptionsContracts, "contracts per position")}`
        : "Off",
    ],
    [
      "stoploss",
      "Automatic stop loss",
      b.AutoStopLossDollars === undefined ? "None" : `$${b.AutoStopLossDollars} per position`,
    ],
    [
      "join",
      "Open positions",
      b.DoNotJoinOpenPositions
        ? "The strategy's open positions are not joined"
        : "The strategy's open positions are joined",
    ],
  ];
  return `<dl>${rows.map(([id, name, value]) => `<dt>${name}</dt><dd id="${id}">${escapeHtml(value)}</dd>`).join("\n")}</dl>`;
}

/** The page of a request in its current status; `error` is shown above it (a form that was refused). */
export function approvalHtml(page: ApprovalPage, base: string, error?: string): string {
  const { row, formToken } = page;
  const title = `Approve autotrading of ${page.strategyName}`;
  const status = `<p id="status" class="note" data-status="${row.status}">${escapeHtml(row.status_detail ?? "")}</p>`;
  const shownError = error === undefined ? "" : `<p id="error" class="note error">${escapeHtml(error)}</p>`;
  let actions = "";
  if (row.status === "PendingCustomer") {
    actions = `${form(
      `${base}/approve`,
      formToken,
      `<p><label><input id="consent" type="checkbox" name="consent" value="yes" required> I authorize ${escapeHtml(page.siteName)} to have the orders of ${escapeHtml(page.strategyName)} copied into my account ${escapeHtml(page.body.Account)} as set out above.</label></p>
<button id="approve" type="submit">Approve</button>`,
    )}${form(`${base}/decline`, formToken, `<button id="decline" type="submit">Decline</button>`)}`;
  } else if (row.status === "Completed") {
    actions = `<p>Autotrade setup <span id="setup">${row.setup_id}</span> is on.</p>`;
  }
  return layout(title, `<h1>${escapeHtml(title)}</h1>${terms(page)}${shownError}${status}${actions}`);
}

/** The page for a link that opens no request. */
export const notFoundHtml = (): string =>
  layout(
    "Approval request not found",
    `<h1>Approval request not found</h1><p class="note">This link opens no approval request.</p>`,
  );

/** A form refused before any request could be shown (a stale form). */
export const refusedHtml = (message: string): string =>
  layout("Approval request", `<h1>Approval request</h1><p id="error" class="note error">${escapeHtml(message)}</p>`);
