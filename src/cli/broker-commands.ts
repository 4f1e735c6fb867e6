import { formatDecimal, parseDecimal, round, ZERO } from "../core/decimal.js";
import { SIMULATED_BROKER_ID } from "../engine/brokers/simulated.js";
import { openSimulatedBrokerAccount } from "../services/simulated-accounts.js";
import type { CliCommand } from "./commands.js";
import { required, requiredId } from "./options.js";
import { UsageError } from "./usage-error.js";

/** Brokerage accounts from the command line: an operator opens a customer's account at the simulated broker. */
export const BROKER_COMMANDS: readonly CliCommand[] = [
  {
    noun: "broker",
    verb: "account create",
    synopsis: `broker account create --person N --broker ID --account NAME --cash D [--paper]   (ID ${SIMULATED_BROKER_ID}: the simulated broker)`,
    options: {
      person: { type: "string" },
      broker: { type: "string" },
      account: { type: "string" },
      cash: { type: "string" },
      paper: { type: "boolean" },
    },
    async run(runtime, o) {
      const personId = requiredId(o, "person");
      const brokerId = requiredId(o, "broker");
      const account = required(o, "account");
      if (account.length > 64 || account.trim() !== account) {
        throw new UsageError("--account is 1 to 64 characters without leading or trailing spaces");
      }
      const cash = parseDecimal(required(o, "cash"));
      if (cash === null || cash < ZERO || round(cash, 2) !== cash) {
        throw new UsageError("--cash is an amount of dollars to the cent, 0 or more");
      }
      const paper = o.paper === "true";
      const accountId = await openSimulatedBrokerAccount(runtime, { personId, brokerId, account, cash, paper });
      return {
        json: {
          AccountId: accountId,
          PersonId: personId,
          BrokerId: brokerId,
          Account: account,
          Cash: formatDecimal(cash),
          IsPaper: paper,
        },
        text: `Opened ${paper ? "paper " : ""}account ${account} (account ${accountId}) at broker ${brokerId} for person ${personId} with ${formatDecimal(cash)}`,
      };
    },
  },
];
