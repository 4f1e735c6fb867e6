import type { Static, TObject, TSchema } from "@sinclair/typebox";
import type { Permission } from "../../core/access.js";
import type { ApprovalScheduler } from "../../engine/approvals.js";
import type { AutoSync } from "../../engine/autotrade/auto-sync.js";
import type { AutotradeDesk } from "../../engine/autotrade/desk.js";
import type { Biller } from "../../engine/biller.js";
import type { BrokerRegistry } from "../../engine/brokers/registry.js";
import type { FillLoop } from "../../engine/fill-loop.js";
import type { MarketData } from "../../engine/market-data.js";
import type { SnapshotScheduler } from "../../engine/snapshots.js";
import type { WebhookDeliverer } from "../../engine/webhooks/deliverer.js";
import type { Principal } from "../../services/keys.js";
import type { PaymentProvider } from "../../services/payments.js";
import type { TradingContext } from "../../services/trading.js";
import type { Page, PageRequest } from "../../store/page.js";
import type { PollGate } from "./poll-gate.js";

/** The three v4 servers. */
export const V4_SERVERS = ["WL", "GEN", "GEO"] as const;
export type V4Server = (typeof V4_SERVERS)[number];

export interface OperationContext extends TradingContext {
  readonly market: MarketData;
  /** Sandbox operations drive it: a hand quote or a clock move is worked before they answer. */
  readonly fillLoop: FillLoop;
  readonly caller: Principal;
  /** The key as the caller presented it (GetAccessKey echoes it). */
  readonly presentedKey: string;
  readonly server: V4Server;
  /** Where customers' money is taken (the sandbox provider unless another is wired in). */
  readonly payments: PaymentProvider;
  /** The polls of checkouts' statuses admitted so far. */
  readonly checkoutPolls: PollGate;
  /** The recurring biller: the sandbox's clock moves run a pass before they answer. */
  readonly biller: Biller;
  /** The approvals scheduler: the sandbox's clock moves run a pass before they answer. */
  readonly approvals: ApprovalScheduler;
  /** The daily autotrade snapshots' scheduler: the sandbox's clock moves run a pass before they answer. */
  readonly snapshots: SnapshotScheduler;
  /** The webhook deliverer: the sandbox's clock moves run a pass before they answer. */
  readonly webhooks: WebhookDeliverer;
  /** Whether the sandbox is on (webhook endpoints may then be http and local). */
  readonly sandbox: boolean;
  /** The brokers, by id (the sandbox sets the simulated broker's faults). */
  readonly brokers: BrokerRegistry;
  /** The autotrade desk: the sandbox's clock moves run a pass before they answer. */
  readonly desk: AutotradeDesk;
  /** AutoSync: the sandbox's clock moves run a pass (after the desk's) before they answer. */
  readonly sync: AutoSync;
}

interface OperationBase<Input extends TObject> {
  /** The operation's name, as in the spec (Hello, GetAccessKey...). */
  readonly id: string;
  readonly method: "GET" | "POST" | "PUT" | "DELETE";
  readonly path: string;
  /** Another path on some servers (SetDesiredPositions is under /v2 on WL). */
  readonly pathOn?: Partial<Record<V4Server, string>>;
  readonly servers: readonly V4Server[];
  readonly summary: string;
  /** Request schema, read from the query string (GET, DELETE) or the JSON body. */
  readonly input: Input;
  /** The same input with other required fields on some servers (e.g. WhiteLabelSiteId required on GEO). */
  readonly inputOn?: Partial<Record<V4Server, TObject>>;
  /** The record type of one entry of Results. */
  readonly result: TSchema;
  readonly permission: Permission;
  /** Served only while the sandbox is enabled. */
  readonly sandbox?: boolean;
  /** Result fields present only on some servers (e.g. GeoSiteId on GEN; a nested record's as `Record.Field`, which the handler leaves out itself). */
  readonly fieldServers?: Readonly<Record<string, readonly V4Server[]>>;
  /** Successful answers may be cached by the client for this long (the data changes rarely). */
  readonly cacheSeconds?: number;
  /** Servers that list the operation but do not offer it: they answer 501. */
  readonly notAvailableOn?: readonly V4Server[];
  /** Servers answering a bare JSON boolean instead of the envelope. */
  readonly bareBooleanOn?: readonly V4Server[];
  /** Fields of the Results entries may hold JSON serialized ahead (RawJson, raw-json.ts), sent as it is. */
  readonly preSerialized?: boolean;
  /** A request repeated with its Idempotency-Key answers as the first did and makes nothing (./idempotency.ts). */
  readonly idempotent?: boolean;
  /** A detail for ResponseStatus.Message of a success, from its Results (OK when it gives none). */
  readonly successMessage?: (results: readonly unknown[]) => string | undefined;
  /**
   * A valid request (its query or body) for the OpenAPI documents, naming the objects of the
   * example service (./examples.ts); a test sends it on every server listing the operation.
   */
  readonly example?: Static<Input>;
}

export interface PlainOperation<Input extends TObject> extends OperationBase<Input> {
  readonly paginated: false;
  readonly handler: (ctx: OperationContext, input: Static<Input>) => Promise<readonly unknown[]>;
}

export interface PaginatedOperation<Input extends TObject> extends OperationBase<Input> {
  readonly paginated: true;
  readonly handler: (ctx: OperationContext, input: Static<Input>, page: PageRequest) => Promise<Page<unknown>>;
}

export type Operation<Input extends TObject = TObject> = PlainOperation<Input> | PaginatedOperation<Input>;

/** Keeps each entry's handler typed by its own input schema inside the one table. */
export const defineOperation = <Input extends TObject>(operation: Operation<Input>): Operation =>
  operation as unknown as Operation;

/** The operation's path on a server. */
export const pathOf = (operation: Operation, server: V4Server): string => operation.pathOn?.[server] ?? operation.path;

/** Where an operation reads its input. */
export const inputSource = (operation: Operation): "query" | "body" =>
  operation.method === "GET" || operation.method === "DELETE" ? "query" : "body";
