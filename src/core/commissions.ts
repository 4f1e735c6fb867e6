import { add, compare, type Decimal, decimal, formatDecimal, max, min, mul, round, ZERO } from "./decimal.js";
import type { Instrument } from "./symbols/instrument.js";

/**
 * Commission plans: what a fill costs, by asset class. Strategies' model
 * accounts pay the plan's commission on every fill; equity "after
 * commissions" (CommissionPlan parameters) recomputes with another plan.
 * Amounts are in the instrument's currency, rounded to the cent per fill.
 */
interface AssetRate {
  /** Per share, contract or unit. */
  readonly perUnit: Decimal;
  readonly minimum: Decimal;
  /** A cap as a fraction of the trade's value (stocks), or null. */
  readonly maximumShareOfValue: Decimal | null;
}

export interface CommissionPlan {
  readonly name: string;
  readonly stock: AssetRate;
  readonly option: AssetRate;
  readonly future: AssetRate;
  /** Per currency unit traded (e.g. $2 per 100,000 units = 0.00002). */
  readonly forex: AssetRate;
}

const rate = (perUnit: string, minimum: string, maximumShareOfValue: string | null = null): AssetRate => ({
  perUnit: decimal(perUnit),
  minimum: decimal(minimum),
  maximumShareOfValue: maximumShareOfValue === null ? null : decimal(maximumShareOfValue),
});

export const COMMISSION_PLANS: readonly CommissionPlan[] = [
  {
    name: "Default",
    stock: rate("0.005", "1", "0.01"),
    option: rate("0.65", "1"),
    future: rate("2.5", "0"),
    forex: rate("0.00002", "2"),
  },
  {
    name: "Institutional",
    stock: rate("0.002", "0.35", "0.005"),
    option: rate("0.25", "0"),
    future: rate("1", "0"),
    forex: rate("0.00001", "0"),
  },
  {
    name: "None",
    stock: rate("0", "0"),
    option: rate("0", "0"),
    future: rate("0", "0"),
    forex: rate("0", "0"),
  },
];

/** A plan by name, without regard to case; null when there is no such plan. */
export function commissionPlan(name: string): CommissionPlan | null {
  const wanted = name.trim().toLowerCase();
  return COMMISSION_PLANS.find((plan) => plan.name.toLowerCase() === wanted) ?? null;
}

/** The commission of one fill of `quantity` at `price`. */
export function commission(plan: CommissionPlan, instrument: Instrument, quantity: Decimal, price: Decimal): Decimal {
  const r = plan[instrument.symbolType];
  let amount = max(mul(r.perUnit, quantity), r.minimum);
  if (r.maximumShareOfValue !== null) {
    const value = mul(mul(quantity, price), instrument.multiplier);
    amount = min(amount, mul(value, r.maximumShareOfValue));
  }
  return compare(amount, ZERO) <= 0 ? ZERO : round(amount, 2);
}

/** Dollar commissions by plan name: a fill's under every plan, or their running totals. */
export type PlanCommissions = Readonly<Record<string, Decimal>>;

/** The commission of one fill under every plan, in dollars to the cent. */
export function commissionsByPlan(
  instrument: Instrument,
  quantity: Decimal,
  price: Decimal,
  usdRate: Decimal,
): Record<string, Decimal> {
  const fees: Record<string, Decimal> = {};
  for (const plan of COMMISSION_PLANS)
    fees[plan.name] = round(mul(commission(plan, instrument, quantity, price), usdRate), 2);
  return fees;
}

/** A fill that costs nothing under any plan (a contract settling at its expiry). */
export function noCommissions(): Record<string, Decimal> {
  const fees: Record<string, Decimal> = {};
  for (const plan of COMMISSION_PLANS) fees[plan.name] = ZERO;
  return fees;
}

/** Running totals plus one fill's commissions. */
export function addCommissions(totals: PlanCommissions, fees: PlanCommissions): PlanCommissions {
  const sum: Record<string, Decimal> = { ...totals };
  for (const [name, fee] of Object.entries(fees)) sum[name] = add(sum[name] ?? ZERO, fee);
  return sum;
}

/**
 * As stored: {"Default":"12.5",...}. Totals are made anew at every fill and
 * written with it (the account's and the trade's), so the text is put
 * together directly: a decimal's text never needs escaping in JSON.
 */
export function planCommissionsText(totals: PlanCommissions): string {
  let text = "";
  for (const name in totals) {
    text += `${text === "" ? "{" : ","}${JSON.stringify(name)}:"${formatDecimal(totals[name] as Decimal)}"`;
  }
  return text === "" ? "{}" : `${text}}`;
}

export function planCommissionsOf(text: string): PlanCommissions {
  const parsed = JSON.parse(text) as Record<string, string>;
  return Object.fromEntries(Object.entries(parsed).map(([name, fee]) => [name, decimal(fee)]));
}
