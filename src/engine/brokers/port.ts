import type { Decimal } from "../../core/decimal.js";

/**
 * The broker port: what the service needs of a broker, and what a real
 * broker adapter (a FIX session, a broker's REST API) implements. The
 * simulated broker (src/engine/brokers/simulated.ts) is the one behind it
 * here. Orders are placed under the service's idempotency key: a broker
 * answers a key it has seen with the order it made for it, so a retry, a
 * restart or a second process never makes a second order. What happens to
 * orders and accounts later (acknowledgements, fills, cancels, a delink, a
 * margin call) comes back as reports, each at least once.
 */
export interface BrokerAccountRef {
  readonly brokerId: number;
  /** The account as the broker names it. */
  readonly account: string;
}

export interface BrokerOrderRequest extends BrokerAccountRef {
  readonly idempotencyKey: string;
  readonly symbol: string;
  readonly symbolType: "stock" | "option" | "future" | "forex";
  readonly side: "buy" | "sell";
  readonly orderType: "market" | "limit" | "stop";
  readonly tif: "day" | "gtc";
  readonly quantity: Decimal;
  readonly limit: Decimal | null;
  readonly stop: Decimal | null;
  /** A stock traded as a contract for difference rather than the shares (TradeStocksAsCFD). */
  readonly asCfd: boolean;
}

/** The broker's first answer to a placement: taken (its id), or refused at once. */
export type PlaceAnswer =
  | { readonly ok: true; readonly brokerOrderId: string }
  | { readonly ok: false; readonly reason: string };

export interface BrokerPosition {
  readonly symbol: string;
  readonly symbolType: "stock" | "option" | "future" | "forex";
  /** Signed: negative is short. */
  readonly quantity: Decimal;
}

export interface AccountValue {
  readonly netLiquidation: Decimal;
  readonly cash: Decimal;
  readonly atMs: number;
}

/** What the broker tells about an order it holds (by the service's key). */
export type OrderReport = BrokerAccountRef & {
  readonly idempotencyKey: string;
  readonly brokerOrderId: string;
  readonly atMs: number;
} & (
    | { readonly kind: "acknowledged" }
    | { readonly kind: "rejected"; readonly reason: string }
    | {
        readonly kind: "fill";
        /** The broker's id of the execution: the same fill heard twice counts once. */
        readonly fillId: string;
        readonly quantity: Decimal;
        readonly price: Decimal;
      }
    | { readonly kind: "canceled"; readonly reason: string | null }
    | { readonly kind: "cancelRejected"; readonly reason: string }
    | {
        readonly kind: "replaced";
        readonly newBrokerOrderId: string;
        readonly limit: Decimal | null;
        readonly stop: Decimal | null;
      }
    | { readonly kind: "replaceRejected"; readonly reason: string }
    | { readonly kind: "expired" }
  );

/** What the broker tells about an account. */
export type AccountReport = BrokerAccountRef & { readonly atMs: number } & (
    | { readonly kind: "delinked"; readonly reason: string }
    /** The broker restricts the account: a margin call, a pattern-day-trader flag. */
    | { readonly kind: "restricted"; readonly reason: string }
    /** An order the service did not send executed in the account. */
    | {
        readonly kind: "externalExecution";
        readonly symbol: string;
        readonly side: "buy" | "sell";
        readonly quantity: Decimal;
        readonly price: Decimal;
      }
    /**
     * The broker settled a position in a contract that expired (an option's
     * expiry in cash, a future's final settlement): the position is gone, at
     * that price.
     */
    | {
        readonly kind: "contractSettled";
        readonly symbol: string;
        /** The position settled (signed: negative was short). */
        readonly quantity: Decimal;
        readonly price: Decimal;
      }
    | { readonly kind: "value"; readonly value: AccountValue }
  );

export type BrokerReport = OrderReport | AccountReport;

export interface BrokerPort {
  readonly brokerId: number;
  /** Links an account for trading: refused (with the broker's reason) when the broker does not know it. */
  link(account: BrokerAccountRef, username: string | null): Promise<{ ok: true } | { ok: false; reason: string }>;
  delink(account: BrokerAccountRef): Promise<void>;
  accountValue(account: BrokerAccountRef): Promise<AccountValue>;
  positions(account: BrokerAccountRef): Promise<readonly BrokerPosition[]>;
  /** Places an order under its idempotency key; the same key answers the same order. */
  place(request: BrokerOrderRequest): Promise<PlaceAnswer>;
  /** Asks for a cancel; the answer comes as a report (canceled, or cancelRejected). */
  cancel(account: BrokerAccountRef, idempotencyKey: string): Promise<void>;
  /** Asks for a new price; the answer comes as a report (replaced, or replaceRejected). */
  replace(
    account: BrokerAccountRef,
    idempotencyKey: string,
    price: { readonly limit: Decimal | null; readonly stop: Decimal | null },
  ): Promise<void>;
  /**
   * A paper-trading account back to its starting state, as paper-trading
   * brokers offer (a reset to a chosen balance): its open orders canceled
   * (each reported canceled), its positions cleared and its cash set to
   * `startingCash`. Throws when the broker is not reached (nothing is reset)
   * or does not know the account; the service resets paper accounts only.
   */
  resetPaperAccount(account: BrokerAccountRef, startingCash: Decimal): Promise<void>;
  /** Where reports go; a report may come more than once. */
  onReport(listener: (report: BrokerReport) => void): void;
}
