import { centsToDecimal, type Decimal, formatDecimal } from "../core/decimal.js";
import { refuse } from "../core/errors.js";
import { EXTERNAL_ACCOUNT, houseAccount } from "../core/ledger.js";
import { centsOfText } from "../core/money.js";
import type { Rule575Terms } from "../core/rule575.js";
import { touchModelAccount } from "../store/strategy-rows.js";
import { withTransaction } from "../store/transaction.js";
import { chargeReference } from "./charges.js";
import { balances, post, refundCharge } from "./ledger.js";
import { rule575TermsOf } from "./rule575.js";
import type { Runtime } from "./runtime.js";

/**
 * What operators set from the CLI for white-label commerce: money paid into
 * a site's house account (and back, a resold subscription's charge refunded),
 * whether the site may bill into a negative balance, and a strategy owner's
 * subscription price.
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

export interface SiteSettings extends SiteBilling {
  /** The site's Rule 575 terms (its own, or the service's defaults). */
  readonly rule575: Rule575Terms;
}

/** What an operator changes of a site; undefined leaves a setting, null returns a Rule 575 term to the default. */
export interface SiteChanges {
  readonly allowNegativeBilling?: boolean | undefined;
  readonly rule575ToleranceBps?: Decimal | null | undefined;
  readonly rule575WindowSeconds?: number | null | undefined;
}

/** Sets whether resold subscriptions may be charged into a negative house balance; answers the site's settings. */
export const setNegativeBilling = (runtime: Runtime, siteId: number, allow: boolean): Promise<SiteSettings> =>
  setSiteSettings(runtime, siteId, { allowNegativeBilling: allow });

/** Changes a white-label site's settings (CLI `site set`); answers them all as they are then. */
export async function setSiteSettings(runtime: Runtime, siteId: number, changes: SiteChanges): Promise<SiteSettings> {
  return withTransaction(runtime, async (ctx) => {
    await whiteLabelSite(ctx, siteId);
    const set = {
      ...(changes.allowNegativeBilling === undefined
        ? {}
        : { allow_negative_billing: changes.allowNegativeBilling ? 1 : 0 }),
      ...(changes.rule575ToleranceBps === undefined
        ? {}
        : {
            rule575_tolerance_bps:
              changes.rule575ToleranceBps === null ? null : formatDecimal(changes.rule575ToleranceBps),
          }),
      ...(changes.rule575WindowSeconds === undefined ? {} : { rule575_window_seconds: changes.rule575WindowSeconds }),
    };
    if (Object.keys(set).length > 0) await ctx.tx.updateTable("sites").set(set).where("id", "=", siteId).execute();
    const site = await whiteLabelSite(ctx, siteId);
    const house = houseAccount(siteId);
    return {
      siteId,
      allowNegativeBilling: site.allow_negative_billing === 1,
      houseAccountCents: (await balances(ctx.tx, [house])).get(house) ?? 0,
      rule575: (await rule575TermsOf(ctx.tx, siteId)).terms,
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

export interface HouseRefund {
  readonly subscriptionId: number;
  readonly siteId: number;
  /** Which of the subscription's charges, counted from 1. */
  readonly period: number;
  readonly cents: number;
  /** The charge was refunded before: nothing was moved this time. */
  readonly alreadyRefunded: boolean;
  readonly houseAccountCents: number;
}

/**
 * Gives a site's house account back what one charge of a resold subscription
 * took (CLI `billing refund`): a `refund` posting reversing the charge, once
 * per charge however often it is asked. By default the latest charge. The
 * subscription itself is left as it is (stopping it is
 * WhiteLabelStopSubscription's). A subscription the customer paid through
 * the payment provider is refused: its money is given back there first.
 */
export async function refundHouseCharge(
  runtime: Runtime,
  subscriptionId: number,
  period: number | undefined,
): Promise<HouseRefund> {
  return withTransaction(runtime, async ({ tx }) => {
    const subscription = await tx
      .selectFrom("subscriptions")
      .select(["id", "lane", "site_id", "charge_seq"])
      .where("id", "=", subscriptionId)
      .executeTakeFirst();
    if (!subscription) {
      throw refuse("NotFound", { field: "subscription", message: `No subscription ${subscriptionId}` });
    }
    if (subscription.lane !== "resale" || subscription.site_id === null) {
      throw refuse("WrongState", {
        field: "subscription",
        message: `Subscription ${subscriptionId} is not charged to a house account: refund a customer's payment at the payment provider`,
      });
    }
    const charged = subscription.charge_seq;
    if (charged === 0) {
      throw refuse("WrongState", { field: "subscription", message: `Subscription ${subscriptionId} has no charge` });
    }
    const refunded = period ?? charged;
    if (refunded > charged) {
      throw refuse("NotFound", {
        field: "period",
        message: `Subscription ${subscriptionId} has ${charged} charge${charged === 1 ? "" : "s"}; no period ${refunded}`,
      });
    }
    const reference = chargeReference({ id: subscriptionId, charge_seq: refunded - 1 });
    const refund = await refundCharge(tx, reference, runtime.clock.nowMs());
    const house = houseAccount(subscription.site_id);
    return {
      subscriptionId,
      siteId: subscription.site_id,
      period: refunded,
      cents: refund.cents,
      alreadyRefunded: refund.transactionId === null,
      houseAccountCents: (await balances(tx, [house])).get(house) ?? 0,
    };
  });
}
