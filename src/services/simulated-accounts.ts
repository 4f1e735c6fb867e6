import type { Decimal } from "../core/decimal.js";
import { refuse } from "../core/errors.js";
import { openSimulatedAccount } from "../engine/brokers/sim-store.js";
import { SIMULATED_BROKER_ID } from "../engine/brokers/simulated.js";
import { withTransaction } from "../store/transaction.js";
import { insertBrokerAccount } from "./broker-accounts.js";
import type { Runtime } from "./runtime.js";

export interface NewSimulatedAccount {
  readonly personId: number;
  readonly brokerId: number;
  readonly account: string;
  readonly cash: Decimal;
  readonly paper: boolean;
}

/**
 * Opens a brokerage account in one go: recorded at the service (an account
 * of kind broker) and opened at the simulated broker with the cash, in one
 * transaction. Only the simulated broker's accounts can be opened here: a
 * real broker's are opened at the broker.
 */
export function openSimulatedBrokerAccount(runtime: Runtime, input: NewSimulatedAccount): Promise<number> {
  return withTransaction(runtime, async (ctx) => {
    const person = await ctx.tx.selectFrom("persons").select("id").where("id", "=", input.personId).executeTakeFirst();
    if (!person) throw refuse("NotFound", { field: "Person", message: `No person ${input.personId}` });
    const broker = await ctx.tx.selectFrom("brokers").select("id").where("id", "=", input.brokerId).executeTakeFirst();
    if (!broker) throw refuse("NotFound", { field: "Broker", message: `No broker ${input.brokerId}` });
    if (input.brokerId !== SIMULATED_BROKER_ID) {
      throw refuse("InvalidValue", {
        field: "Broker",
        message: `Broker ${input.brokerId} is not the simulated broker: its accounts are opened at the broker`,
      });
    }
    const nowMs = ctx.clock.nowMs();
    const accountId = await insertBrokerAccount(ctx.tx, input, nowMs);
    await openSimulatedAccount(ctx.tx, input.account, input.cash, nowMs);
    return accountId;
  });
}
