import { isServiceAdmin } from "../../../core/access.js";
import { subscribe, subscribersOf, unsubscribe } from "../../../services/subscriptions.js";
import { type LegacyCommand, LegacyFailure, type LegacyRequestContext } from "../command.js";
import { integerOf, newYorkTime, service, system } from "./signals.js";

/**
 * The legacy subscriber commands: the owner lists a system's subscribers; a
 * key subscribes or unsubscribes its own person (a platform key, the people of
 * its site) to a public system or to one it reaches. Subscriptions carry no
 * billing yet: the billing fields answer empty.
 */
async function subscriberOf(ctx: LegacyRequestContext, value: unknown): Promise<number> {
  const personId = value === undefined ? Number(ctx.caller.personId) : integerOf(value, "personid");
  if (personId === Number(ctx.caller.personId) || isServiceAdmin(ctx.caller)) return personId;
  if (ctx.context === "platform" && ctx.platformId !== null) {
    const inSite = await ctx.storage.db
      .selectFrom("persons as p")
      .innerJoin("platforms as pl", "pl.white_label_site_id", "p.white_label_site_id")
      .select("p.id")
      .where("p.id", "=", personId)
      .where("pl.id", "=", ctx.platformId)
      .executeTakeFirst();
    if (inSite) return personId;
  }
  throw new LegacyFailure("Unable to access this person", `This apikey cannot act for person ${personId}`);
}

/** A system a person may follow: a public one, or one the key reaches. */
async function followable(ctx: LegacyRequestContext, request: Readonly<Record<string, unknown>>): Promise<number> {
  const strategyId = integerOf(request.systemid, "systemid");
  const strategy = await ctx.storage.db
    .selectFrom("strategies")
    .select(["is_private", "is_alive"])
    .where("id", "=", strategyId)
    .executeTakeFirst();
  if (strategy?.is_private === 0) return strategyId;
  return (await system(ctx, request)).strategyId;
}

export const subscriberCommands: readonly LegacyCommand[] = [
  {
    name: "getListSubscribers",
    contexts: ["world", "platform"],
    async handler(ctx, request) {
      const { strategyId } = await system(ctx, request);
      const now = ctx.clock.nowMs();
      const rows = await subscribersOf(ctx, strategyId);
      return {
        response: {
          listSubscribers: rows.map((row) => {
            const live = row.ended_at === null || row.ended_at > now;
            const ends = newYorkTime(row.ended_at).text;
            return {
              subscription_guid: row.guid,
              subscription_status: live ? "active" : "ended",
              subscription_started_date: newYorkTime(row.started_at).text,
              subscription_ended: live ? "" : ends,
              subscriber_personid: String(row.person_id),
              subscriber_email: row.email,
              subscriber_first_name: row.first_name,
              subscriber_last_name: row.last_name,
              subscriber_country: row.country_code ?? "",
              subscriber_countrycode: row.country_code ?? "",
              systemid: String(strategyId),
              isPrivateSubManagement: row.platform_id === null ? "0" : "1",
              privateSubManagement_subscription_started_when:
                row.platform_id === null ? "" : newYorkTime(row.started_at).text,
              privateSubManagement_subscription_ends_when: row.platform_id === null ? "" : ends,
              privateSubManagement_subscription_is_expired: row.platform_id === null ? "" : live ? "0" : "1",
              platform_subscription_ends_when: row.platform_id === null ? "" : ends,
              platform_subscription_is_expired: row.platform_id === null ? "" : live ? "0" : "1",
              custom_subscription_guid: "",
              custom_subscription_amount: "",
              custom_subscription_good_until_time: "",
              custom_subscription_num_bill_periods_remaining: "",
              recurring_billing_num_failed_transacts: "0",
              recurring_billing_turned_off_when: "",
              recurring_next_billing_amount_default: "",
              subscription_schedule_guid: "",
            };
          }),
        },
      };
    },
  },
  {
    name: "subscribeToStrategy",
    contexts: ["world", "platform"],
    async handler(ctx, request) {
      const strategyId = await followable(ctx, request);
      const personId = await subscriberOf(ctx, request.personid);
      const guid = await service(() => subscribe(ctx, strategyId, personId, ctx.platformId));
      return { success: { subscription_guid: guid } };
    },
  },
  {
    name: "unsubscribeFromStrategy",
    contexts: ["world", "platform"],
    async handler(ctx, request) {
      const strategyId = integerOf(request.systemid, "systemid");
      const personId = await subscriberOf(ctx, request.personid);
      const action = String(request.actionType ?? "unsubscribe_immediate");
      if (action !== "unsubscribe_immediate") {
        throw new LegacyFailure("Invalid value", "actionType must be unsubscribe_immediate");
      }
      const guid = await service(() => unsubscribe(ctx, strategyId, personId));
      return { success: { subscription_guid: guid } };
    },
  },
];
