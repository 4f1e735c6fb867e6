import { Type } from "@sinclair/typebox";
import { Flag, NewYorkTime, OneOf, Text } from "./values.js";

/** The subscriber commands' requests and answers. */

const Subscriber = Type.Object(
  {
    subscription_guid: Text(),
    subscription_status: OneOf(["active", "ended"], "Whether the subscription runs"),
    subscription_started_date: NewYorkTime("Started"),
    subscription_ended: NewYorkTime("Ended"),
    subscriber_personid: Text(),
    subscriber_email: Text(),
    subscriber_first_name: Text(),
    subscriber_last_name: Text(),
    subscriber_country: Text(),
    subscriber_countrycode: Text(),
    systemid: Text(),
    isPrivateSubManagement: Flag("1: made through a Private Platform"),
    privateSubManagement_subscription_started_when: Text(),
    privateSubManagement_subscription_ends_when: Text(),
    privateSubManagement_subscription_is_expired: Text(),
    platform_subscription_ends_when: Text(),
    platform_subscription_is_expired: Text(),
    custom_subscription_guid: Text(),
    custom_subscription_amount: Text(),
    custom_subscription_good_until_time: Text(),
    custom_subscription_num_bill_periods_remaining: Text(),
    recurring_billing_num_failed_transacts: Text(),
    recurring_billing_turned_off_when: Text(),
    recurring_next_billing_amount_default: Text(),
    subscription_schedule_guid: Text(),
  },
  { title: "LegacySubscriber" },
);

const SubscriptionAnswer = Type.Object({ success: Type.Object({ subscription_guid: Text() }) });

export const GetListSubscribers = {
  answer: Type.Object({ response: Type.Object({ listSubscribers: Type.Array(Subscriber) }) }),
};

export const SubscribeToStrategy = {
  answer: SubscriptionAnswer,
};

export const UnsubscribeFromStrategy = {
  answer: SubscriptionAnswer,
};
