import { dollarsOf } from "../core/money.js";
import { billDue } from "../services/billing.js";
import { refundHouseCharge } from "../services/commerce-admin.js";
import { SandboxPayments } from "../services/sandbox-payments.js";
import type { CliCommand } from "./commands.js";
import { optionalId, requiredId } from "./options.js";
import { UsageError } from "./usage-error.js";

/**
 * A billing pass from the command line: what the service's biller does every
 * minute, for an operator who wants it now (or runs billing from cron beside
 * several service processes). Safe beside the service's own biller: a period
 * is charged once whoever charges it. And a resold subscription's charge given
 * back to its site's house account, once however often it is asked.
 */
export const BILLING_COMMANDS: readonly CliCommand[] = [
  {
    noun: "billing",
    verb: "run",
    synopsis: "billing run [--claim-seconds N]",
    options: { "claim-seconds": { type: "string" } },
    async run(runtime, o) {
      const claim = o["claim-seconds"];
      if (claim !== undefined && !/^\d{1,6}$/.test(claim)) {
        throw new UsageError("--claim-seconds is a whole number of seconds (0 to 999999)");
      }
      const pass = await billDue(
        // No real processor is wired in: the sandbox provider answers, as it does for the service.
        { ...runtime, payments: new SandboxPayments(runtime.storage, runtime.clock) },
        claim === undefined ? {} : { claimMs: Number(claim) * 1000 },
      );
      return {
        json: { Charged: pass.charged, Settled: pass.settled, Failed: pass.failed, GivenUp: pass.givenUp },
        text: `Charged ${pass.charged}: ${pass.settled} settled, ${pass.failed} failed (${pass.givenUp} given up)`,
      };
    },
  },
  {
    noun: "billing",
    verb: "refund",
    synopsis:
      "billing refund --subscription SUBSCRIPTION_ID [--period N]   (a resold subscription's charge, the latest by default)",
    options: { subscription: { type: "string" }, period: { type: "string" } },
    async run(runtime, o) {
      const refund = await refundHouseCharge(runtime, requiredId(o, "subscription"), optionalId(o, "period"));
      const amount = dollarsOf(refund.cents);
      const balance = dollarsOf(refund.houseAccountCents);
      return {
        json: {
          SubscriptionId: refund.subscriptionId,
          SiteId: refund.siteId,
          Period: refund.period,
          Refunded: amount,
          AlreadyRefunded: refund.alreadyRefunded,
          HouseAccountBalance: balance,
        },
        text: `${refund.alreadyRefunded ? "Already refunded" : "Refunded"} ${amount} of subscription ${refund.subscriptionId}'s charge ${refund.period} to site ${refund.siteId}: house account balance ${balance}`,
      };
    },
  },
];
