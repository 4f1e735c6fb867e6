import type { Decimal } from "../core/decimal.js";
import { formatDecimal } from "../core/decimal.js";
import { refuse } from "../core/errors.js";
import type { Tx } from "../store/transaction.js";
import { recordAccountEvents } from "./account-events.js";

/** AccountType of a brokerage account (docs/decisions.md): 1 live, 2 paper. */
export const ACCOUNT_TYPES = { live: 1, paper: 2 } as const;

export interface NewBrokerAccount {
  readonly personId: number;
  readonly brokerId: number;
  readonly account: string;
  readonly cash: Decimal;
  readonly paper: boolean;
  readonly currency?: string;
  readonly brokerUsername?: string | null;
}

/**
 * Records a person's account at a broker: an account of kind broker (its cash
 * the broker's) and its brokerage row. The broker's own side (opening the
 * account at the simulated broker) is the caller's.
 */
export async function insertBrokerAccount(db: Tx, input: NewBrokerAccount, nowMs: number): Promise<number> {
  const taken = await db
    .selectFrom("broker_accounts")
    .select("account_id")
    .where("broker_id", "=", input.brokerId)
    .where("account_number", "=", input.account)
    .executeTakeFirst();
  if (taken)
    throw refuse("AlreadyExists", {
      field: "Account",
      message: `Broker ${input.brokerId} already has an account ${input.account}`,
    });
  const cash = formatDecimal(input.cash);
  const made = await db
    .insertInto("accounts")
    .values({
      kind: "broker",
      strategy_id: null,
      cash,
      starting_cash: cash,
      commission_plan: "Default",
      created_at: nowMs,
    })
    .returning("id")
    .executeTakeFirstOrThrow();
  await db
    .insertInto("broker_accounts")
    .values({
      account_id: made.id,
      person_id: input.personId,
      broker_id: input.brokerId,
      account_number: input.account,
      is_paper: input.paper ? 1 : 0,
      account_type: input.paper ? ACCOUNT_TYPES.paper : ACCOUNT_TYPES.live,
      currency: input.currency ?? "USD",
      broker_username: input.brokerUsername ?? null,
      is_linked: 1,
      net_liquidation: cash,
      net_liquidation_at: nowMs,
      first_activation_at: null,
      created_at: nowMs,
    })
    .execute();
  // The link is the account's first stability event (the instrumentation export).
  await recordAccountEvents(db, [
    { accountId: made.id, personId: input.personId, kind: "Linked", reason: null, atMs: nowMs },
  ]);
  return made.id;
}
