import type { Clock } from "../core/clock.js";
import { readSetting, writeSetting } from "../store/settings.js";
import type { Storage } from "../store/storage.js";
import type { Tx } from "../store/transaction.js";
import type { PaymentOutcome, PaymentProvider, PaymentRequest } from "./payments.js";

/**
 * The sandbox payment provider, the service's default (no real processor is
 * wired in). It answers each reference once: the outcome is stored with the
 * reference, so a charge retried (after a crash, a restart, by another
 * process) answers as the first did, as real processors do with idempotency
 * keys. A reference that required a further step settles when charged again:
 * that second attempt is the customer having finished the step.
 *
 * What a new reference answers is set by the sandbox (SetPaymentOutcome) for
 * every process of the service: it is a stored setting.
 */

export const SANDBOX_OUTCOMES = ["approve", "decline", "require_action"] as const;
export type SandboxOutcome = (typeof SANDBOX_OUTCOMES)[number];

export interface SandboxOutcomeSetting {
  readonly outcome: SandboxOutcome;
  readonly reason: string | null;
}

const SETTING = "sandbox_payment_outcome";

const DEFAULT_REASONS: Readonly<Record<Exclude<SandboxOutcome, "approve">, string>> = {
  decline: "The card was declined (sandbox)",
  require_action: "The card issuer asks the customer to confirm the payment (sandbox)",
};

/** The payment method the checkout page pays with in the sandbox: a test card. */
export const SANDBOX_PAYMENT_REF = "sandbox-card";

export async function sandboxOutcome(db: Tx): Promise<SandboxOutcomeSetting> {
  const stored = await readSetting(db, SETTING);
  return stored === undefined ? { outcome: "approve", reason: null } : (JSON.parse(stored) as SandboxOutcomeSetting);
}

export async function setSandboxOutcome(db: Tx, setting: SandboxOutcomeSetting): Promise<void> {
  await writeSetting(db, SETTING, JSON.stringify(setting));
}

const STATUS_OF = { approve: "settled", decline: "declined", require_action: "action_required" } as const;

export class SandboxPayments implements PaymentProvider {
  constructor(
    private readonly storage: Storage,
    private readonly clock: Clock,
  ) {}

  async charge(request: PaymentRequest): Promise<PaymentOutcome> {
    const db = this.storage.db;
    const nowMs = this.clock.now().getTime();
    const first = await this.#answered(request.reference);
    if (first?.outcome === "action_required") {
      await db
        .updateTable("sandbox_charges")
        .set({ outcome: "settled", reason: null, updated_at: nowMs })
        .where("reference", "=", request.reference)
        .where("outcome", "=", "action_required")
        .execute();
    } else if (!first) {
      const setting = await sandboxOutcome(db);
      const outcome = STATUS_OF[setting.outcome];
      await db
        .insertInto("sandbox_charges")
        .values({
          reference: request.reference,
          outcome,
          reason: setting.outcome === "approve" ? null : (setting.reason ?? DEFAULT_REASONS[setting.outcome]),
          provider_ref: `sandbox:${request.reference}`,
          payment_ref: request.paymentRef,
          amount_cents: request.amountCents,
          created_at: nowMs,
          updated_at: nowMs,
        })
        // A concurrent first charge of the reference won: its outcome is the answer.
        .onConflict((oc) => oc.column("reference").doNothing())
        .execute();
    }
    const row = await this.#answered(request.reference);
    if (!row) throw new Error(`sandbox charge ${request.reference} neither stored nor found`);
    if (row.outcome === "settled") return { status: "settled", providerRef: row.provider_ref };
    return { status: row.outcome, reason: row.reason ?? "" };
  }

  #answered(reference: string) {
    return this.storage.db
      .selectFrom("sandbox_charges")
      .select(["outcome", "reason", "provider_ref"])
      .where("reference", "=", reference)
      .executeTakeFirst();
  }
}
