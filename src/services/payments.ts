/**
 * The payment provider: the edge where a customer's money is taken (GEN
 * checkout and its renewals). A real adapter (a card processor) and the
 * sandbox provider implement the same interface. Each attempt at a charge
 * carries a reference as its idempotency key, so an attempt asked again after
 * a crash is settled once by the provider, as real processors do with
 * idempotency keys; a retry after a decline is a new attempt with a new one.
 */
export interface PaymentRequest {
  /** Unique per attempt (charge:<subscription>:<seq>[:attempt:<k>]): the provider answers one reference once. */
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
