import { subscribe, subscribersOf, unsubscribe } from "../../../services/subscriptions.js";
import { type LegacyCommand, LegacyFailure, type LegacyRequestContext } from "../command.js";
import { integerOf, mustReachPerson, personOf, systemActedFor, systemFollowable } from "../reach.js";
import { GetListSubscribers, SubscribeToStrategy, UnsubscribeFromStrategy } from "../shapes/subscribers.js";
import { newYorkTime } from "./signals.js";

/**
 * The legacy subscriber commands: the owner lists a system's subscribers; a
 * key subscribes or unsubscribes its own person (a platform key, the people of
 * its site) to a public system or to one it reaches. Subscriptions carry no
 * billing yet: the billing fields answer empty.
 */
async function subscriberOf(ctx: LegacyRequestContext, request: Readonly<Record<string, unknown>>): Promise<number> {
  const personId = personOf(ctx, request, "personid");
  await mustReachPerson(ctx, personId, `This apikey cannot act for person ${personId}`);
  return personId;
}

export const subscriberCommands: readonly LegacyCommand[] = [
  {
    name: "getListSubscribers",
    summary: "The system's subscribers, current and past. Its owner's keys only.",
    input: GetListSubscribers.input,
    answer: GetListSubscribers.answer,
    contexts: ["world", "platform"],
    async handler(ctx, request) {
      const { strategyId } = await systemActedFor(ctx, request);
      const rows = await subscribersOf(ctx, strategyId);
      return {
        response: {
          listSubscribers: rows.map((row) => {
            const { live } = row;
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
    summary:
      "Subscribes the key's person (a platform key: a person of its site) to a public system or one the key reaches.",
    input: SubscribeToStrategy.input,
    answer: SubscribeToStrategy.answer,
    contexts: ["world", "platform"],
    async handler(ctx, request) {
      const strategyId = await systemFollowable(ctx, request);
      const personId = await subscriberOf(ctx, request);
      const guid = await subscribe(ctx, strategyId, personId, ctx.platformId);
      return { success: { subscription_guid: guid } };
    },
  },
  {
    name: "unsubscribeFromStrategy",
    summary: "Ends the person's subscription to the system at once.",
    input: UnsubscribeFromStrategy.input,
    answer: UnsubscribeFromStrategy.answer,
    contexts: ["world", "platform"],
    async handler(ctx, request) {
      const strategyId = integerOf(request.systemid, "systemid");
      const personId = await subscriberOf(ctx, request);
      const action = String(request.actionType ?? "unsubscribe_immediate");
      if (action !== "unsubscribe_immediate") {
        throw new LegacyFailure("InvalidValue", "actionType must be unsubscribe_immediate");
      }
      const guid = await unsubscribe(ctx, strategyId, personId);
      return { success: { subscription_guid: guid } };
    },
  },
];
