/**
 * The payment provider: the edge where a customer's money is taken (GEN
 * checkout and its renewals). A real adapter (a card processor) and the
 * sandbox provider implement the same interface. Charges carry the ledger
 * reference as their idempotency key, so a charge retried after a crash is
 * settled once by the provider, as real processors do with idempotency keys.
 */
export interface PaymentRequest {
  /** Unique per charge (charge:<subscription>:<seq>): the provider settles one reference once. */
  readonly reference: string;
  /** The provider's reference of the customer's payment method, from checkout. */
  readonly paymentRef: string;
  readonly amountCents: number;
  readonly currency: "USD";
  readonly description: string;
}

export type PaymentOutcome =
  | { readonly status: "settled"; readonly providerRef: string }
  | { readonly status: "declined"; readonly reason: string }
  | { readonly status: "action_required"; readonly reason: string };

export interface PaymentProvider {
  charge(request: PaymentRequest): Promise<PaymentOutcome>;
}
