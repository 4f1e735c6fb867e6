import { centsToDecimal, formatDecimal } from "../core/decimal.js";
import { refuse } from "../core/errors.js";
import { EXTERNAL_ACCOUNT, houseAccount } from "../core/ledger.js";
import { centsOfText } from "../core/money.js";
import { touchModelAccount } from "../store/strategy-rows.js";
import { withTransaction } from "../store/transaction.js";
import { balances, post } from "./ledger.js";
import type { Runtime } from "./runtime.js";

/**
 * What operators set from the CLI for white-label commerce: money paid into
 * a site's house account, whether the site may bill into a negative balance,
 * and a strategy owner's subscription price.
 */

async function whiteLabelSite(runtime: Runtime & { readonly tx: NonNullable<Runtime["tx"]> }, siteId: number) {
  const site = await runtime.tx
    .selectFrom("sites")
    .select(["id", "kind", "allow_negative_billing"])
    .where("id", "=", siteId)
    .executeTakeFirst();
  if (site?.kind !== "whitelabel") throw refuse("NotFound", { field: "id", message: `No white-label site ${siteId}` });
  return site;
}

/** Credits the site's house account from outside (a `fund` posting); answers its new balance in cents. */
export async function fundHouseAccount(runtime: Runtime, siteId: number, cents: number): Promise<number> {
  return withTransaction(runtime, async (ctx) => {
    await whiteLabelSite(ctx, siteId);
    const house = houseAccount(siteId);
    const now = runtime.clock.nowMs();
    await post(
      ctx.tx,
      [
        {
          kind: "fund",
          reference: null,
          subscriptionId: null,
          memo: null,
          transfers: [{ from: EXTERNAL_ACCOUNT, to: house, cents }],
        },
      ],
      now,
    );
    return (await balances(ctx.tx, [house])).get(house) ?? 0;
  });
}

export interface SiteBilling {
  readonly siteId: number;
  readonly allowNegativeBilling: boolean;
  readonly houseAccountCents: number;
}

/** Sets whether resold subscriptions may be charged into a negative house balance; answers the site's settings. */
export async function setNegativeBilling(runtime: Runtime, siteId: number, allow: boolean): Promise<SiteBilling> {
  return withTransaction(runtime, async (ctx) => {
    await whiteLabelSite(ctx, siteId);
    await ctx.tx
      .updateTable("sites")
      .set({ allow_negative_billing: allow ? 1 : 0 })
      .where("id", "=", siteId)
      .execute();
    const house = houseAccount(siteId);
    return {
      siteId,
      allowNegativeBilling: allow,
      houseAccountCents: (await balances(ctx.tx, [house])).get(house) ?? 0,
    };
  });
}

export interface StrategyPrice {
  readonly strategyId: number;
  readonly monthlyCents: number;
  /** null: no annual billing. */
  readonly annualCents: number | null;
}

/**
 * Sets the owner's price of a strategy: monthly, and yearly where given (a
 * price set without --annual keeps no annual billing). Subscriptions already
 * running keep the price they started at.
 */
export async function setStrategyPrice(
  runtime: Runtime,
  strategyId: number,
  monthlyCents: number,
  annualCents: number | null,
): Promise<StrategyPrice> {
  const text = (cents: number) => formatDecimal(centsToDecimal(cents));
  return withTransaction(runtime, async ({ tx }) => {
    const updated = await tx
      .updateTable("strategies")
      .set({
        monthly_cost: text(monthlyCents),
        annual_cost: annualCents === null ? null : text(annualCents),
        updated_at: runtime.clock.nowMs(),
      })
      .where("id", "=", strategyId)
      .returning(["monthly_cost", "annual_cost"])
      .executeTakeFirst();
    if (!updated) throw refuse("NotFound", { field: "id", message: `No strategy ${strategyId}` });
    // Records computed from the strategy (its details' MonthlyCost) are kept at its account's version.
    await touchModelAccount(tx, strategyId);
    return {
      strategyId,
      monthlyCents: centsOfText(updated.monthly_cost) ?? 0,
      annualCents: centsOfText(updated.annual_cost),
    };
  });
}
