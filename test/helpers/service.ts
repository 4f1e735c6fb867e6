import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { FastifyInstance } from "fastify";
import { type Kysely, sql } from "kysely";
import type { Logger } from "pino";
import { type App, createApp, type ServerName } from "../../src/app.js";
import type { RateLimitConfig } from "../../src/config.js";
import type { Role } from "../../src/core/access.js";
import type { MarketFeed } from "../../src/engine/market-data.js";
import type { HttpTimeouts } from "../../src/http/transport.js";
import { serviceLogger } from "../../src/log.js";
import { keyCacheOf } from "../../src/services/key-cache.js";
import { createKey } from "../../src/services/keys.js";
import { createPerson } from "../../src/services/people.js";
import { createSite } from "../../src/services/sites.js";
import { withSchemaChangeLock } from "../../src/store/migrate.js";
import type { Backend, Storage } from "../../src/store/storage.js";
import { openStorage } from "../../src/store/storage.js";

/** The storage backends the suite runs against: SQLite always, PostgreSQL when DATABASE_URL is set. */
export const BACKENDS: readonly Backend[] = process.env.DATABASE_URL ? ["sqlite", "postgres"] : ["sqlite"];

export const ADMIN_KEY = "test-admin-key-0123456789abcdef";

export interface TestStorage {
  readonly storage: Storage;
  /** Environment that points another process (the CLI) at the same storage. */
  readonly env: Readonly<Record<string, string>>;
  /** A second connection to the same database, as another process of the service would have. */
  openAnother(): Promise<Storage>;
  dispose(): Promise<void>;
}

/** A fresh, empty database: a temporary SQLite directory, or a PostgreSQL schema of its own. */
export async function freshStorage(backend: Backend): Promise<TestStorage> {
  if (backend === "sqlite") {
    const dataDir = mkdtempSync(join(tmpdir(), "strategy-hub-test-"));
    const storage = await openStorage({ dataDir });
    return {
      storage,
      env: { DATA_DIR: dataDir },
      openAnother: () => openStorage({ dataDir }),
      async dispose() {
        await storage.close();
        rmSync(dataDir, { recursive: true, force: true });
      },
    };
  }
  const url = process.env.DATABASE_URL as string;
  const schema = `t_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
  const storage = await openStorage({ databaseUrl: url, dataDir: "", pgSchema: schema });
  return {
    storage,
    env: { DATABASE_URL: url, PGOPTIONS: `-c search_path=${schema}` },
    openAnother: () => openStorage({ databaseUrl: url, dataDir: "", pgSchema: schema }),
    async dispose() {
      await storage.close();
      const cleanup = await openStorage({ databaseUrl: url, dataDir: "" });
      try {
        await dropTestSchema(cleanup.db, schema);
      } finally {
        await cleanup.close();
      }
    },
  };
}

/**
 * Drops a test's PostgreSQL schema under the migrations' lock: a migration in a
 * parallel test reads every schema's catalog and must not see one half gone.
 */
export async function dropTestSchema<DB>(db: Kysely<DB>, schema: string): Promise<void> {
  await withSchemaChangeLock(db, (connection) => connection.schema.dropSchema(schema).ifExists().cascade().execute());
}

export interface TestServiceOptions {
  readonly sandbox?: boolean;
  readonly rateLimit?: RateLimitConfig;
  readonly legacyRateLimit?: RateLimitConfig;
  /** The machine time the service sees; defaults to the real one. */
  readonly systemNow?: () => number;
  /** Storage to run on (disposed with the service); a fresh one by default. */
  readonly storage?: TestStorage;
  /** Where prices come from; simulated by default (trading scenarios use manual: hand quotes only). */
  readonly marketFeed?: MarketFeed;
  /** The fill loop's timer; off by default, so scenarios drive it through SetQuote and the clock. */
  readonly fillLoopTickMs?: number;
  /** How long the outbox consumers' positions may wait unwritten; off by default (a drain writes them). */
  readonly outboxPositionsMs?: number;
  /** The servers' HTTP timeouts (the service's defaults unless given). */
  readonly timeouts?: HttpTimeouts;
  /** Where the service logs; silent (or TEST_LOG_LEVEL) by default. */
  readonly logger?: Logger;
}

export interface CallOptions {
  readonly key?: string | null;
  readonly body?: unknown;
  /** A raw body string, sent as is. */
  readonly rawBody?: string;
  readonly query?: Record<string, string | string[]>;
  readonly headers?: Record<string, string>;
}

export interface CallResult {
  readonly status: number;
  readonly headers: Record<string, string | string[] | number | undefined>;
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON answers
  readonly json: any;
  readonly text: string;
}

export interface TestService {
  readonly app: App;
  readonly backend: Backend;
  readonly storage: Storage;
  readonly env: Readonly<Record<string, string>>;
  call(server: ServerName, method: string, path: string, options?: CallOptions): Promise<CallResult>;
  /** Stops this service (not its storage) and starts a new one on the same storage, as a restart does. */
  restart(): Promise<TestService>;
  /** Another instance of the service on the same database (its own connection), as a second process. */
  sibling(): Promise<TestService>;
  close(): Promise<void>;
}

/** The whole service on a fresh database, its servers answering through inject(). */
export async function startTestService(backend: Backend, options: TestServiceOptions = {}): Promise<TestService> {
  const fresh = options.storage ?? (await freshStorage(backend));
  return serviceOn(backend, fresh, options, () => fresh.dispose());
}

async function serviceOn(
  backend: Backend,
  fresh: TestStorage,
  options: TestServiceOptions,
  dispose: () => Promise<void>,
): Promise<TestService> {
  const app = await createApp({
    storage: fresh.storage,
    logger: options.logger ?? serviceLogger(process.env.TEST_LOG_LEVEL ?? "silent"),
    systemNow: options.systemNow ?? Date.now,
    sandbox: options.sandbox ?? true,
    rateLimit: options.rateLimit ?? { max: 100_000, windowSeconds: 60 },
    legacyRateLimit: options.legacyRateLimit ?? { max: 100_000, windowSeconds: 60 },
    bootstrapAdminKey: ADMIN_KEY,
    marketFeed: options.marketFeed,
    fillLoopTickMs: options.fillLoopTickMs ?? 0,
    billingIntervalMs: 0,
    approvalsIntervalMs: 0,
    autotradePassMs: 0,
    webhookIntervalMs: 0,
    snapshotIntervalMs: 0,
    muxPassMs: 0,
    autoSyncIntervalMs: 0,
    outboxPositionsMs: options.outboxPositionsMs ?? 0,
    timeouts: options.timeouts,
  });
  return {
    app,
    backend,
    storage: fresh.storage,
    env: fresh.env,
    call: (server, method, path, callOptions = {}) => call(app.servers[server], method, path, callOptions),
    async restart() {
      await app.close();
      return serviceOn(backend, fresh, options, dispose);
    },
    async sibling() {
      const storage = await fresh.openAnother();
      return serviceOn(backend, { ...fresh, storage }, options, () => storage.close());
    },
    async close() {
      await app.close();
      await dispose();
    },
  };
}

async function call(server: FastifyInstance, method: string, path: string, options: CallOptions): Promise<CallResult> {
  const key = options.key === undefined ? ADMIN_KEY : options.key;
  const headers: Record<string, string> = { ...(options.headers ?? {}) };
  if (key !== null) headers.authorization = `Bearer ${key}`;
  let payload: string | undefined;
  if (options.rawBody !== undefined) payload = options.rawBody;
  else if (options.body !== undefined) {
    payload = JSON.stringify(options.body);
    headers["content-type"] ??= "application/json";
  }
  const response = await server.inject({
    method: method as "GET",
    url: path,
    headers,
    ...(options.query ? { query: options.query } : {}),
    ...(payload !== undefined ? { payload } : {}),
  });
  let json: unknown;
  try {
    json = JSON.parse(response.body);
  } catch {
    json = undefined;
  }
  return { status: response.statusCode, headers: response.headers, json, text: response.body };
}

export interface Population {
  readonly siteA: number;
  readonly siteB: number;
  readonly geo: number;
  readonly keys: Readonly<Record<PopulationRole, string>>;
  readonly people: Readonly<Record<PopulationRole, number>>;
  /** Each person's private KYC token. */
  readonly userTokens: Readonly<Record<PopulationRole, string>>;
}

export type PopulationRole = "admin" | "wlAdminA" | "wlAdminB" | "geoAdmin" | "personA" | "personB" | "expired";

/**
 * Two white-label sites (A inside the geo-site), a geo-site and one key for
 * each role the permission tests call with.
 */
export async function populate(service: TestService): Promise<Population> {
  const runtime = service.app.runtime;
  const geo = (await createSite(runtime, { kind: "geo", name: "Geo Europe", domain: "geo.example.com" })).id;
  const siteA = (await createSite(runtime, { kind: "whitelabel", name: "Site A", geoSiteId: geo })).id;
  const siteB = (await createSite(runtime, { kind: "whitelabel", name: "Site B" })).id;
  const specs: Record<PopulationRole, { role: Role; siteId?: number; expired?: boolean }> = {
    admin: { role: "admin" },
    wlAdminA: { role: "whitelabel-admin", siteId: siteA },
    wlAdminB: { role: "whitelabel-admin", siteId: siteB },
    geoAdmin: { role: "geo-admin", siteId: geo },
    personA: { role: "person", siteId: siteA },
    personB: { role: "person", siteId: siteB },
    expired: { role: "admin", expired: true },
  };
  const keys = {} as Record<PopulationRole, string>;
  const people = {} as Record<PopulationRole, number>;
  for (const [name, spec] of Object.entries(specs) as [PopulationRole, (typeof specs)[PopulationRole]][]) {
    const { personId } = await createPerson(runtime, {
      email: `${name.toLowerCase()}@example.com`,
      firstName: name,
      lastName: "Tester",
      role: spec.role,
      siteId: spec.siteId,
    });
    const expiresAt = spec.expired ? new Date(runtime.clock.nowMs() - 1000) : undefined;
    keys[name] = (await createKey(runtime, { personId, expiresAt })).accessKey;
    people[name] = personId;
  }
  const userTokens = {} as Record<PopulationRole, string>;
  for (const [name, personId] of Object.entries(people) as [PopulationRole, number][]) {
    const row = await service.storage.db
      .selectFrom("persons")
      .select("user_token")
      .where("id", "=", personId)
      .executeTakeFirstOrThrow();
    userTokens[name] = row.user_token as string;
  }
  return { siteA, siteB, geo, keys, people, userTokens };
}

/** Sets the service clock through the sandbox, as a client would. */
export async function setClock(service: TestService, now: string): Promise<void> {
  const r = await service.call("WL", "POST", "/Sandbox/SetClock", { body: { Now: now } });
  if (r.status !== 200) throw new Error(`SetClock answered ${r.status}: ${r.text}`);
}

/** Moves the service clock forward through the sandbox; answers the new time. */
export async function advanceClock(service: TestService, seconds: number): Promise<string> {
  const r = await service.call("WL", "POST", "/Sandbox/AdvanceClock", { body: { Seconds: seconds } });
  if (r.status !== 200) throw new Error(`AdvanceClock answered ${r.status}: ${r.text}`);
  return r.json.Results[0].Now as string;
}

/** How long a test waits for another process's key change to be heard (PostgreSQL) before failing. */
const KEY_CHANGE_HEARD_WITHIN_MS = 5_000;

/**
 * Resolves once the service has heard of the next key change made elsewhere.
 * On SQLite at once: the next request reads the change itself. On PostgreSQL
 * when its notification arrives (the notification delay); call it before the
 * change is made.
 */
export function keyChangeHeard(service: TestService): Promise<void> {
  if (service.backend === "sqlite") return Promise.resolve();
  return withinMs(keyCacheOf(service.storage).nextChange(), KEY_CHANGE_HEARD_WITHIN_MS, "a key change to be heard");
}

/** Waits until `condition` holds (a state reached in the background, such as a connection coming back). */
export async function until(condition: () => boolean | Promise<boolean>, withinMsOf = 10_000): Promise<void> {
  const deadline = Date.now() + withinMsOf;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`not reached within ${withinMsOf} ms: ${condition}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

async function withinMs<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`waited ${ms} ms for ${what}`)), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** How many statements the service's storage ran while `work` ran (a test's way to see what was read). */
export async function statementsDuring(service: TestService, work: () => Promise<void>): Promise<number> {
  const db = service.storage.db;
  const executeQuery = db.executeQuery;
  let statements = 0;
  db.executeQuery = ((query) => {
    statements += 1;
    return executeQuery.call(db, query);
  }) as typeof db.executeQuery;
  try {
    await work();
  } finally {
    db.executeQuery = executeQuery;
  }
  return statements;
}
