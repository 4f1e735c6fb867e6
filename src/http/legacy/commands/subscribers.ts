import { Type } from "@sinclair/typebox";
import { subscribe, subscribersOf, unsubscribe } from "../../../services/subscriptions.js";
import { defineLegacyCommand, type LegacyCommand, LegacyFailure, type LegacyRequestContext } from "../command.js";
import { id, text } from "../fields.js";
import { mustFollowSystem, mustReachPerson, personOr, systemActedFor } from "../reach.js";
import { GetListSubscribers, SubscribeToStrategy, UnsubscribeFromStrategy } from "../shapes/subscribers.js";
import { newYorkTime } from "./signals.js";

/**
 * The legacy subscriber commands: the owner lists a system's subscribers; a
 * key subscribes or unsubscribes its own person (a platform key, the people of
 * its site) to a public system or to one it reaches. Subscriptions carry no
 * billing yet: the billing fields answer empty.
 */
async function subscriberOf(ctx: LegacyRequestContext, named: number | undefined): Promise<number> {
  const personId = personOr(ctx, named);
  await mustReachPerson(ctx, personId, `This apikey cannot act for person ${personId}`);
  return personId;
}

export const subscriberCommands: readonly LegacyCommand[] = [
  defineLegacyCommand({
    name: "getListSubscribers",
    contexts: ["world", "platform"],
    summary: "The system's subscribers, current and past. Its owner's keys only.",
    answer: GetListSubscribers.answer,
    input: Type.Object({ systemid: id() }),
    async handler(ctx, { systemid }) {
      const { strategyId } = await systemActedFor(ctx, systemid);
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
  }),
  defineLegacyCommand({
    name: "subscribeToStrategy",
    contexts: ["world", "platform"],
    summary:
      "Subscribes the key's person (a platform key: a person of its site) to a public system or one the key reaches.",
    answer: SubscribeToStrategy.answer,
    input: Type.Object({ systemid: id(), personid: Type.Optional(id()) }),
    async handler(ctx, input) {
      await mustFollowSystem(ctx, input.systemid);
      const personId = await subscriberOf(ctx, input.personid);
      const guid = await subscribe(ctx, input.systemid, personId, ctx.platformId);
      return { success: { subscription_guid: guid } };
    },
  }),
  defineLegacyCommand({
    name: "unsubscribeFromStrategy",
    contexts: ["world", "platform"],
    summary: "Ends the person's subscription to the system at once.",
    answer: UnsubscribeFromStrategy.answer,
    input: Type.Object({
      systemid: id(),
      personid: Type.Optional(id()),
      actionType: Type.Optional(text(40, { failure: "InvalidValue" })),
      // Its values are not shown (API.md); it waits for autotrade (docs/decisions.md).
      autoTradePositionsAndOrders: Type.Optional(text(40, { failure: "InvalidValue" })),
    }),
    async handler(ctx, input) {
      const personId = await subscriberOf(ctx, input.personid);
      if ((input.actionType ?? "unsubscribe_immediate") !== "unsubscribe_immediate") {
        throw new LegacyFailure("InvalidValue", "actionType must be unsubscribe_immediate");
      }
      const guid = await unsubscribe(ctx, input.systemid, personId);
      return { success: { subscription_guid: guid } };
    },
  }),
];
