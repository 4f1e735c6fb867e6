import { randomBytes } from "node:crypto";
import type { FastifyInstance } from "fastify";
import type { Logger } from "pino";
import type { RateLimitConfig } from "./config.js";
import { POLL_INTERVAL_MS } from "./core/checkout.js";
import { ControllableClock } from "./core/clock.js";
import { ApprovalScheduler } from "./engine/approvals.js";
import { AccountMarker } from "./engine/autotrade/account-marker.js";
import { AutoSync } from "./engine/autotrade/auto-sync.js";
import { Copier } from "./engine/autotrade/copier.js";
import { copierMarket } from "./engine/autotrade/copier-market.js";
import { AutotradeDesk } from "./engine/autotrade/desk.js";
import { Biller } from "./engine/biller.js";
import { BrokerRegistry } from "./engine/brokers/registry.js";
import { SimulatedBroker } from "./engine/brokers/simulated.js";
import { FillLoop } from "./engine/fill-loop.js";
import { openFrame } from "./engine/frame/open.js";
import { MarketData, type MarketFeed } from "./engine/market-data.js";
import { StrategyMux } from "./engine/mux/mirror.js";
import { recordsConsumer } from "./engine/outbox/records.js";
import { OutboxRunner } from "./engine/outbox/runner.js";
import { SnapshotScheduler } from "./engine/snapshots.js";
import { WebhookDeliverer } from "./engine/webhooks/deliverer.js";
import { registerApprovalPage } from "./http/approvals/page.js";
import { registerCheckoutPage } from "./http/checkout/page.js";
import { registerConfirmationPage } from "./http/confirmations/page.js";
import { cursorCodec } from "./http/cursor.js";
import { LEGACY_COMMANDS } from "./http/legacy/commands.js";
import { buildLegacyServer } from "./http/legacy/server.js";
import type { Probes } from "./http/probes.js";
import { RateLimiter } from "./http/rate-limit.js";
import type { HttpTimeouts } from "./http/transport.js";
import type { V4Server } from "./http/v4/operation.js";
import { PollGate } from "./http/v4/poll-gate.js";
import { buildV4Server } from "./http/v4/server.js";
import { OPERATIONS } from "./http/v4/table.js";
import { ServiceMetrics } from "./metrics.js";
import { noteHeldCopies } from "./services/autotrade-confirmations.js";
import { type BootstrapOutcome, ensureServiceAdmin } from "./services/bootstrap.js";
import { loadClockSetting } from "./services/clock.js";
import { KeySessions } from "./services/key-sessions.js";
import type { PaymentProvider } from "./services/payments.js";
import { readiness } from "./services/readiness.js";
import type { Runtime } from "./services/runtime.js";
import { SandboxPayments } from "./services/sandbox-payments.js";
import type { TradingRuntime } from "./services/trading.js";
import { migrateToLatest } from "./store/migrate.js";
import { settingOrInit } from "./store/settings.js";
import type { Storage } from "./store/storage.js";

export type ServerName = V4Server | "LEGACY";

export interface AppOptions {
  readonly storage: Storage;
  readonly logger: Logger;
  /** The machine's time in milliseconds; the one place the service reads it. */
  readonly systemNow: () => number;
  readonly sandbox: boolean;
  readonly rateLimit: RateLimitConfig;
  /** The legacy server's budget, counted apart from the v4 servers'. */
  readonly legacyRateLimit: RateLimitConfig;
  readonly bootstrapAdminKey?: string | undefined;
  /** Where prices come from; simulated by default. */
  readonly marketFeed?: MarketFeed;
  /** How often the fill loop samples the market and checks due times (default 1000 ms; 0: only when driven). */
  readonly fillLoopTickMs?: number;
  /** How long clients may take over requests and idle connections (HTTP_TIMEOUTS by default). */
  readonly timeouts?: HttpTimeouts;
  /** Work on the migrated storage before the fill loop starts (demo data, whose history the loop must not race). */
  readonly prepare?: (runtime: Runtime & Pick<TradingRuntime, "frame">) => Promise<void>;
  /** Where customers' money is taken; the sandbox provider unless given (no real processor is wired in). */
  readonly payments?: PaymentProvider;
  /** How often the autotrade desk retries unsent orders and applies stops, real milliseconds (default 5 s; 0: only when driven). */
  readonly autotradePassMs?: number;
  /** How often the recurring biller runs a pass, real milliseconds (default a minute; 0: only when driven). */
  readonly billingIntervalMs?: number;
  /** How often the approvals scheduler runs a pass, real milliseconds (default a minute; 0: only when driven). */
  readonly approvalsIntervalMs?: number;
  /** How often the webhook deliverer runs a pass, real milliseconds (default 5 s; 0: only when driven). */
  readonly webhookIntervalMs?: number;
  /** How often the daily autotrade snapshots' scheduler runs a pass, real milliseconds (default a minute; 0: only when driven). */
  readonly snapshotIntervalMs?: number;
  /**
   * How often the StrategyMux mirror looks for parents' events, real milliseconds (default 1 s; 0: only
   * when this process commits a parent's events, and at start).
   */
  readonly muxPassMs?: number;
  /** How often AutoSync looks for markets that opened, real milliseconds (default 15 s; 0: only when driven). */
  readonly autoSyncIntervalMs?: number;
  /**
   * How long an outbox consumer's position past events that asked nothing of it may wait unwritten, real
   * milliseconds (default 1 s; 0: until the consumer writes in the account or the frame drains).
   */
  readonly outboxPositionsMs?: number;
}

export interface App {
  readonly runtime: TradingRuntime & { readonly clock: ControllableClock };
  readonly market: MarketData;
  readonly fillLoop: FillLoop;
  /** Health, readiness and metrics, which every v4 server serves. */
  readonly probes: Probes;
  readonly servers: Readonly<Record<ServerName, FastifyInstance>>;
  readonly bootstrap: BootstrapOutcome;
  /** The payment provider the checkout's first charges (and the biller's renewals) ask. */
  readonly payments: PaymentProvider;
  readonly biller: Biller;
  readonly approvals: ApprovalScheduler;
  /** Takes each account's daily autotrade snapshot (GetAutotradeStats). */
  readonly snapshots: SnapshotScheduler;
  /** Sends the sites' webhook deliveries. */
  readonly webhooks: WebhookDeliverer;
  /** The brokers the service trades through, by broker id. */
  readonly brokers: BrokerRegistry;
  /** The autotrade desk: brokerage accounts, their setups and account orders. */
  readonly desk: AutotradeDesk;
  /** The StrategyMux mirror: parents' orders into their variants. */
  readonly mux: StrategyMux;
  /** AutoSync: brings followers' accounts to the strategies' positions at each market's open. */
  readonly autoSync: AutoSync;
  /** Stops the servers (finishing in-flight requests) and the trading frame; the caller closes storage. */
  close(): Promise<void>;
}

/** Migrates storage, makes sure an administrator exists and builds the four servers (not yet listening). */
export async function createApp(options: AppOptions): Promise<App> {
  const { storage, logger } = options;
  await migrateToLatest(storage);
  const clock = new ControllableClock(options.systemNow, await loadClockSetting(storage));
  // A replay file that cannot be read stops the start before an administrator's key is made.
  const market = await MarketData.open(options.marketFeed ?? { kind: "simulated", seed: "strategy-hub" }, clock);
  const bootstrap = await ensureServiceAdmin({ storage, clock }, options.bootstrapAdminKey);
  const secret = await settingOrInit(storage.db, "cursor_secret", randomBytes(32).toString("base64url"));
  const sessions = new KeySessions();
  const frame = openFrame(storage);
  const brokers = new BrokerRegistry(
    new SimulatedBroker(storage, clock, market, logger.child({ component: "simulated-broker" })),
  );
  const desk = new AutotradeDesk(storage, clock, brokers, logger.child({ component: "autotrade" }), {
    passMs: options.autotradePassMs ?? 5000,
    // The customer is told, with the confirmation page's address, of copies held for them.
    onHeld: (accountId, rows) => noteHeldCopies({ storage, clock }, accountId, rows),
  });
  const autoSync = new AutoSync(storage, clock, frame, market, desk, logger.child({ component: "auto-sync" }), {
    intervalMs: options.autoSyncIntervalMs ?? 15_000,
  });
  // Services tell the desk when setups change (runtime.autotrade), and ask AutoSync for syncs (runtime.autoSync).
  const runtime = { storage, clock, frame, market, autotrade: desk, autoSync };
  let fillLoop: FillLoop;
  // The outbox's consumers: the strategies' records, and the autotrade copier.
  const consumers = [recordsConsumer, new Copier(desk, copierMarket(frame, market, clock))];
  const outbox = new OutboxRunner(storage, frame, consumers, logger.child({ component: "outbox" }), {
    positionsMs: options.outboxPositionsMs ?? 1000,
  });
  const mux = new StrategyMux(runtime, logger.child({ component: "strategy-mux" }), {
    passMs: options.muxPassMs ?? 1000,
  });
  try {
    await options.prepare?.(runtime);
    fillLoop = new FillLoop(runtime, market, logger.child({ component: "fill-loop" }), {
      tickMs: options.fillLoopTickMs ?? 1000,
      systemNow: options.systemNow,
    });
    fillLoop.follow(brokers.simulated);
    // Brokerage accounts are marked at the closes the clock passes (GetDashBoard's returns).
    fillLoop.marksCloses(
      new AccountMarker(storage, market, brokers, desk, logger.child({ component: "account-marks" })),
    );
    await fillLoop.start();
    await brokers.start();
    await desk.start();
    await outbox.start();
    mux.start();
  } catch (error) {
    await mux.stop();
    await outbox.stop();
    await desk.stop();
    await frame.close();
    throw error;
  }
  const metrics = new ServiceMetrics({
    storage,
    frame,
    fillLoop: () => fillLoop.status,
    consumers: consumers.map((consumer) => consumer.name),
    systemNow: options.systemNow,
  });
  const probes: Probes = {
    metrics,
    readiness: () =>
      readiness({
        storage,
        journal: { failure: () => frame.journalFailure, probe: (atMs) => frame.probeJournal(atMs) },
        fillLoop: () => fillLoop.status,
        systemNow: options.systemNow,
        logger,
      }),
  };
  const payments = options.payments ?? new SandboxPayments(storage, clock);
  const biller = new Biller({ storage, clock, payments }, logger.child({ component: "biller" }), {
    intervalMs: options.billingIntervalMs ?? 60_000,
  });
  biller.start();
  const approvals = new ApprovalScheduler(runtime, logger.child({ component: "approvals" }), {
    intervalMs: options.approvalsIntervalMs ?? 60_000,
  });
  approvals.start();
  const snapshots = new SnapshotScheduler(runtime, logger.child({ component: "snapshots" }), {
    intervalMs: options.snapshotIntervalMs ?? 60_000,
  });
  snapshots.start();
  const webhooks = new WebhookDeliverer({ storage, clock }, logger.child({ component: "webhooks" }), {
    intervalMs: options.webhookIntervalMs ?? 5000,
  });
  webhooks.start();
  autoSync.start();
  const v4 = {
    probes,
    payments,
    biller,
    approvals,
    snapshots,
    webhooks,
    checkoutPolls: new PollGate(POLL_INTERVAL_MS, options.systemNow),
    fillLoop,
    brokers,
    desk,
    sync: autoSync,
    runtime,
    sessions,
    limiter: new RateLimiter(options.rateLimit, options.systemNow),
    cursors: cursorCodec(secret),
    sandbox: options.sandbox,
    logger,
    operations: OPERATIONS,
    timeouts: options.timeouts,
  };
  const servers = {
    WL: registerConfirmationPage(registerApprovalPage(await buildV4Server("WL", v4), runtime), {
      storage,
      clock,
      desk,
    }),
    GEN: registerConfirmationPage(registerCheckoutPage(await buildV4Server("GEN", v4), { runtime, payments }), {
      storage,
      clock,
      desk,
    }),
    GEO: await buildV4Server("GEO", v4),
    LEGACY: await buildLegacyServer({
      runtime,
      logger,
      commands: LEGACY_COMMANDS,
      sessions,
      limiter: new RateLimiter(options.legacyRateLimit, options.systemNow),
      timeouts: options.timeouts,
    }),
  };
  return {
    runtime,
    market,
    fillLoop,
    probes,
    servers,
    bootstrap,
    payments,
    biller,
    approvals,
    snapshots,
    webhooks,
    brokers,
    desk,
    mux,
    autoSync,
    async close() {
      await Promise.all(Object.values(servers).map((server) => server.close()));
      await autoSync.stop();
      await biller.stop();
      await approvals.stop();
      await snapshots.stop();
      await webhooks.stop();
      await fillLoop.stop();
      await mux.stop();
      await outbox.stop();
      await desk.stop();
      await brokers.close();
      await frame.close();
    },
  };
}
