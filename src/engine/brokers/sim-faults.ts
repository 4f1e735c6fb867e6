import type { Decimal } from "../../core/decimal.js";

/**
 * The faults the sandbox can set on an account at the simulated broker
 * (POST /Sandbox/SetBrokerFault; docs/decisions.md "The simulated broker's
 * faults"). Standing faults stay, durably, until `clear` (reject also runs
 * out after its count); the others act once, when set.
 */
export const FAULT_NAMES = [
  "reject",
  "delay",
  "partialFill",
  "disconnect",
  "reconnect",
  "delink",
  "marginCall",
  "patternDayTrader",
  "externalExecution",
  "clear",
] as const;

export type FaultName = (typeof FAULT_NAMES)[number];

export type Fault =
  /** The next `count` orders are refused with the reason. */
  | { readonly kind: "reject"; readonly count: number; readonly reason: string }
  /** Orders placed while it stands are acknowledged, and fill, no sooner than `seconds` of the service clock later. */
  | { readonly kind: "delay"; readonly seconds: number }
  /** Orders placed while it stands fill only the fraction of their quantity at first; the rest rests. */
  | { readonly kind: "partialFill"; readonly fraction: Decimal }
  /** Place, cancel and replace fail with an error until `reconnect` or `clear`. */
  | { readonly kind: "disconnect" }
  | { readonly kind: "reconnect" }
  /** The broker delinks the account: open orders are canceled, new ones refused until linked again. */
  | { readonly kind: "delink"; readonly reason: string }
  /** The account is restricted (orders refused) until `clear`. */
  | { readonly kind: "marginCall"; readonly reason: string }
  | { readonly kind: "patternDayTrader"; readonly reason: string }
  /** An order the service did not send executes in the account (at the price, or at the quote). */
  | {
      readonly kind: "externalExecution";
      readonly symbol: string;
      readonly side: "buy" | "sell";
      readonly quantity: Decimal;
      readonly price: Decimal | null;
    }
  | { readonly kind: "clear" };

/** The faults an account keeps until cleared, as stored. */
export type StandingFault = Extract<
  Fault,
  { readonly kind: "reject" | "delay" | "partialFill" | "disconnect" | "marginCall" | "patternDayTrader" }
>;

export const STANDING: ReadonlySet<FaultName> = new Set([
  "reject",
  "delay",
  "partialFill",
  "disconnect",
  "marginCall",
  "patternDayTrader",
]);

export const RESTRICTIONS = ["marginCall", "patternDayTrader"] as const;

export const DEFAULT_REASONS = {
  reject: "Rejected by the broker",
  delink: "The broker delinked the account",
  marginCall: "Margin call",
  patternDayTrader: "Pattern day trader: the account is restricted",
} as const;
