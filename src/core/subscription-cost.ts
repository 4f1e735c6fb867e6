import type { SubscriptionLane } from "../store/schema.js";
import { type BillingInterval, monthsIn } from "./billing.js";

/**
 * What a subscription costs its subscriber a month (SubscribedStrategy
 * MonthlyCost), in whole cents. A resold subscription costs the site's
 * customer the strategy's base price plus the site's markup as they were when
 * it started (the site bills its customer that; the service bills the site
 * the base). A direct one costs its price spread over the months of its
 * interval, rounded half up to the cent (an annual price of 100.00 is 8.33 a
 * month). A grant and a free subscription cost the subscriber nothing here:
 * the service charges nothing for them.
 */
export interface SubscriptionPrice {
  readonly lane: SubscriptionLane;
  readonly priceCents: number;
  readonly basePriceCents: number;
  readonly markupCents: number;
  readonly billingInterval: BillingInterval | null;
  readonly billingIntervalCount: number | null;
}

export function monthlyCostCents(price: SubscriptionPrice): number {
  switch (price.lane) {
    case "resale":
      return price.basePriceCents + price.markupCents;
    case "direct": {
      const months = monthsIn(price.billingInterval ?? "month", price.billingIntervalCount ?? 1);
      return Math.floor((2 * price.priceCents + months) / (2 * months));
    }
    case "grant":
    case "free":
      return 0;
  }
}
