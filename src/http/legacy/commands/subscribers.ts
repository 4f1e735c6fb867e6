import { Type } from "@sinclair/typebox";
import { stopAutotradingUnfollowed } from "../../../services/autotrade-control.js";
import { subscribe, subscribersOf, type UnsubscribeMode, unsubscribe } from "../../../services/subscriptions.js";
import { withTransaction } from "../../../store/transaction.js";
import { defineLegacyCommand, type LegacyCommand, LegacyFailure, type LegacyRequestContext } from "../command.js";
import { id, text } from "../fields.js";
import { mustFollowSystem, mustReachPerson, personOr, systemActedFor } from "../reach.js";
import { GetListSubscribers, SubscribeToStrategy, UnsubscribeFromStrategy } from "../shapes/subscribers.js";
import { newYorkTime } from "./signals.js";

/**
 * The legacy subscriber commands: the owner lists a system's subscribers; a
 * key subscribes or unsubscribes its own person (a platform key, the people of
 * its site) to a public system or to one it reaches (a paid one only as a
 * platform's own customer: src/services/subscriptions.ts). The subscriber
 * list shows each subscription's price and billing as stored.
 */

/** The actionType values and the ending each asks for. */
const ACTION_TYPES: Readonly<Record<string, UnsubscribeMode>> = {
  unsubscribe_immediate: "immediate",
  unsubscribe_end_of_term: "end_of_term",
};

/** The autoTradePositionsAndOrders values, as v4's AutotradePositions LeaveInPlace and AttemptToClose. */
const AUTOTRADE_POSITIONS: readonly string[] = ["leave_in_place", "attempt_to_close"];

/** Whole cents as the legacy dollars text (4900 → "49.00"), in integer arithmetic. */
const dollarsText = (cents: number): string => `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, "0")}`;
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
            const managed = row.platform_id !== null;
            const priced = row.price_cents > 0 || row.lane === "grant";
            const billed = row.next_charge_at !== null;
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
              isPrivateSubManagement: managed ? "1" : "0",
              privateSubManagement_subscription_started_when: managed ? newYorkTime(row.started_at).text : "",
              privateSubManagement_subscription_ends_when: managed ? ends : "",
              privateSubManagement_subscription_is_expired: managed ? (live ? "0" : "1") : "",
              platform_subscription_ends_when: managed ? ends : "",
              platform_subscription_is_expired: managed ? (live ? "0" : "1") : "",
              custom_subscription_guid: priced ? row.guid : "",
              custom_subscription_amount: priced ? dollarsText(row.price_cents) : "",
              custom_subscription_good_until_time: priced ? newYorkTime(row.paid_until ?? row.ended_at).text : "",
              custom_subscription_num_bill_periods_remaining: priced ? (billed ? "" : "0") : "",
              recurring_billing_num_failed_transacts: String(row.failure_count),
              recurring_billing_turned_off_when: priced && !billed ? ends : "",
              recurring_next_billing_amount_default: billed ? dollarsText(row.next_charge_cents ?? 0) : "",
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
    summary:
      "Ends the person's subscription to the system: actionType unsubscribe_immediate (default) at once, unsubscribe_end_of_term when its paid or granted term ends (billing stops now). When access ends now, the person's autotrading of the system stops too: autoTradePositionsAndOrders (leave_in_place or attempt_to_close) is then required of a person who autotrades it.",
    answer: UnsubscribeFromStrategy.answer,
    input: Type.Object({
      systemid: id(),
      personid: Type.Optional(id()),
      actionType: Type.Optional(text(40, { failure: "InvalidValue" })),
      // What becomes of an autotrading subscriber's positions when access ends now: required then.
      autoTradePositionsAndOrders: Type.Optional(text(40, { failure: "InvalidValue" })),
    }),
    async handler(ctx, input) {
      const personId = await subscriberOf(ctx, input.personid);
      const mode = ACTION_TYPES[input.actionType ?? "unsubscribe_immediate"];
      if (mode === undefined) {
        throw new LegacyFailure("InvalidValue", "actionType must be unsubscribe_immediate or unsubscribe_end_of_term");
      }
      const positions = input.autoTradePositionsAndOrders;
      if (positions !== undefined && !AUTOTRADE_POSITIONS.includes(positions)) {
        throw new LegacyFailure(
          "InvalidValue",
          "autoTradePositionsAndOrders must be leave_in_place or attempt_to_close",
        );
      }
      const guid = await withTransaction(ctx, async (inTx) => {
        const ended = await unsubscribe(inTx, input.systemid, personId, mode);
        await stopAutotradingUnfollowed(
          inTx,
          { personId, strategyId: input.systemid },
          positions === undefined ? undefined : positions === "leave_in_place",
          "autoTradePositionsAndOrders",
        );
        return ended;
      });
      return { success: { subscription_guid: guid } };
    },
  }),
];
