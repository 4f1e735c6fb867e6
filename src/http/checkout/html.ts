import { awaitsCustomer } from "../../core/checkout.js";
import type { CheckoutPage } from "../../services/checkout.js";

/**
 * The checkout page's HTML: plain, server-rendered, one form per action,
 * every form carrying the checkout's form token. Every text from outside
 * (the strategy's name, reasons from the payment provider) is escaped.
 */

const ESCAPES: Readonly<Record<string, string>> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

export const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => ESCAPES[c] as string);

const STYLE = `body{font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem;color:#222}
dl{display:grid;grid-template-columns:auto 1fr;gap:.4rem 1rem}dt{font-weight:600}
form{display:inline-block;margin:1rem 1rem 0 0}button{font-size:1rem;padding:.5rem 1.2rem}
.note{background:#f4f4f4;padding:.6rem .8rem;border-radius:4px}.error{background:#fde8e8}`;

function layout(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title><style>${STYLE}</style></head>
<body>${body}</body></html>`;
}

const money = (cents: number) => `$${(cents / 100).toFixed(2)} USD`;

function every(count: number, interval: string): string {
  return count === 1 ? `every ${interval}` : `every ${count} ${interval}s`;
}

function form(path: string, formToken: string, inner: string): string {
  return `<form method="post" action="${escapeHtml(path)}"><input type="hidden" name="form_token" value="${escapeHtml(formToken)}">${inner}</form>`;
}

/** The page of a checkout in its current status; `error` is shown above it (a form that was refused). */
export function checkoutHtml(page: CheckoutPage, base: string, error?: string): string {
  const { row, strategyName, formToken } = page;
  const price = money(row.price_cents);
  const terms = `${price} ${every(row.billing_interval_count, row.billing_interval)}`;
  const summary = `<h1>Subscribe to ${escapeHtml(strategyName)}</h1>
<dl><dt>Strategy</dt><dd id="strategy">${escapeHtml(strategyName)}</dd>
<dt>Price</dt><dd id="price">${escapeHtml(terms)}</dd>${
    awaitsCustomer(row.status)
      ? `<dt>Billing</dt><dd>Charged now, then ${escapeHtml(every(row.billing_interval_count, row.billing_interval))} until you cancel</dd>`
      : ""
  }</dl>`;
  const status = `<p id="status" class="note" data-status="${row.status}">${escapeHtml(row.status_detail)}</p>`;
  const shownError = error === undefined ? "" : `<p id="error" class="note error">${escapeHtml(error)}</p>`;
  const decline = form(`${base}/decline`, formToken, `<button id="decline" type="submit">Decline</button>`);
  let actions = "";
  if (row.status === "PendingCustomer") {
    actions = `${form(
      `${base}/pay`,
      formToken,
      `<p><label><input id="consent" type="checkbox" name="consent" value="yes" required> I agree to be charged ${escapeHtml(terms)} until I cancel.</label></p>
<button id="pay" type="submit">Pay ${escapeHtml(price)}</button>`,
    )}${decline}`;
  } else if (row.status === "RequiresAction") {
    actions = `${form(`${base}/confirm`, formToken, `<button id="confirm" type="submit">Confirm payment</button>`)}${decline}`;
  } else if (row.status === "Processing") {
    actions = form(`${base}/pay`, formToken, `<button id="retry" type="submit">Check the payment again</button>`);
  } else if (row.status === "Active") {
    actions = `<p>Subscription <span id="subscription">${row.subscription_id}</span> is active.</p>`;
  }
  return layout(`Subscribe to ${strategyName}`, `${summary}${shownError}${status}${actions}`);
}

/** The page for a link that opens no checkout. */
export const notFoundHtml = (): string =>
  layout("Checkout not found", `<h1>Checkout not found</h1><p class="note">This link opens no checkout.</p>`);

/** A form refused before any checkout could be shown (a stale form, a link that opens none). */
export const refusedHtml = (message: string): string =>
  layout("Checkout", `<h1>Checkout</h1><p id="error" class="note error">${escapeHtml(message)}</p>`);
