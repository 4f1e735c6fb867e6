/**
 * `npm run bench:billing`: the recurring biller's pass over 100,000 due
 * subscriptions (resold, charged to the house accounts of 100 white-label
 * sites), every charge durably committed with its ledger entries; on
 * embedded storage and, with DATABASE_URL, on PostgreSQL (a schema of its
 * own, dropped at the end). Beside it, in the same run, the bare cost of the
 * storage the pass must do at least: its ledger rows (a transaction and two
 * entries per charge) written in multi-row statements in one transaction.
 *
 * Then the service (as `npm start` runs it) answers on GEN, under autocannon,
 * the first page of the strategy's subscribers (GetSubscribers) and of its
 * revenue charged in a day (GetSubscriptionRevenue), each beside a bare
 * Fastify server sending the same bytes in the same run. On PostgreSQL the
 * freshly loaded tables are analyzed before the pass and after it, as
 * autovacuum does for a running service within a minute: without statistics
 * the planner scans them whole.
 *
 * Env: BILLING_SUBSCRIPTIONS (default 100000); BENCH_SECONDS (default 5) and
 * BENCH_CONNECTIONS (default 10) per read.
 */
import type { ChildProcess } from "node:child_process";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { sql } from "kysely";
import { ControllableClock } from "../src/core/clock.js";
import { decimal } from "../src/core/decimal.js";
import { EXTERNAL_ACCOUNT, houseAccount } from "../src/core/ledger.js";
import { billDue } from "../src/services/billing.js";
import { accountIds, post } from "../src/services/ledger.js";
import type { PaymentProvider } from "../src/services/payments.js";
import { migrateToLatest } from "../src/store/migrate.js";
import { openStorage, type Storage } from "../src/store/storage.js";
import { insertStrategy } from "../src/store/strategy-rows.js";
import { transaction } from "../src/store/transaction.js";
import { type Comparison, compareWithBare, type Route, type RunSettings } from "./comparison.js";
import {
  ADMIN_KEY,
  apiCall,
  freePorts,
  HOST,
  JSON_HEADERS,
  MARKET_OPEN_ISO,
  MARKET_OPEN_MS,
  onCleanup,
  positiveIntFromEnv,
  printLogTail,
  printTable,
  progress,
  runBench,
  schemaOfOurOwn,
  startService,
  stopChild,
  tempDir,
  waitUntilAnswering,
} from "./support.js";

type BackendName = "sqlite" | "postgres";

/** The targets for the pass over 100,000 due subscriptions. */
const TARGET_SECONDS: Readonly<Record<BackendName, number>> = { sqlite: 10, postgres: 20 };
const SITES = 100;
const ROWS = 500;
const PRICE_CENTS = 4_900;

interface Run {
  readonly seconds: number;
  readonly cpuSeconds: number;
}

interface BackendFigures {
  readonly subscriptions: number;
  readonly pass: Run;
  readonly bare: Run;
  readonly settled: number;
  readonly charges: number;
  readonly reads: Readonly<Record<string, Comparison>>;
}

async function timed(work: () => Promise<unknown>): Promise<Run> {
  const cpu = process.cpuUsage();
  const started = performance.now();
  await work();
  const used = process.cpuUsage(cpu);
  return {
    seconds: Number(((performance.now() - started) / 1000).toFixed(3)),
    cpuSeconds: Number(((used.user + used.system) / 1e6).toFixed(3)),
  };
}

/** A person's row as sign-up would store it, without the optional profile. */
const personRow = (email: string, firstName: string, lastName: string, siteId: number | null) => ({
  email,
  first_name: firstName,
  last_name: lastName,
  role: "person" as const,
  white_label_site_id: siteId,
  geo_site_id: null,
  alias: null,
  phone: null,
  language: null,
  country_code: null,
  division_code: null,
  last_logged_in: null,
  last_ip: null,
  created_at: MARKET_OPEN_MS,
  alias_key: null,
  first_name_folded: null,
  last_name_folded: null,
  password_hash: null,
  street: null,
  street2: null,
  city: null,
  zip_code: null,
  company: null,
  signup_ip: null,
  user_token: null,
});

/** Sites, an owner with one strategy per site, customers each holding one resold subscription due now. */
async function populate(storage: Storage, count: number): Promise<number> {
  return transaction(storage, async (tx) => {
    const sites = await tx
      .insertInto("sites")
      .values(
        Array.from({ length: SITES }, (_, i) => ({
          kind: "whitelabel" as const,
          name: `Reseller ${i + 1}`,
          domain: null,
          geo_site_id: null,
          created_at: MARKET_OPEN_MS,
          support_company_name: null,
          support_site_url: null,
          support_email: null,
        })),
      )
      .returning("id")
      .execute();
    const [owner] = await tx
      .insertInto("persons")
      .values(personRow("owner@example.com", "Strategy", "Owner", null))
      .returning("id")
      .execute();
    // One strategy, resold by every site: its subscribers and revenue are the 100,000 rows the reads go over.
    const strategyId = await insertStrategy(tx, {
      name: "Resold",
      owner: { id: owner?.id as number, white_label_site_id: null },
      startingCapital: decimal("100000"),
      isPublic: true,
      nowMs: MARKET_OPEN_MS,
    });
    // Each house holds enough for its customers' month.
    await post(
      tx,
      sites.map((site) => ({
        kind: "fund" as const,
        reference: null,
        subscriptionId: null,
        memo: null,
        transfers: [
          { from: EXTERNAL_ACCOUNT, to: houseAccount(site.id), cents: Math.ceil(count / SITES) * PRICE_CENTS },
        ],
      })),
      MARKET_OPEN_MS,
    );
    for (let first = 0; first < count; first += ROWS) {
      const n = Math.min(ROWS, count - first);
      const customers = await tx
        .insertInto("persons")
        .values(
          Array.from({ length: n }, (_, i) =>
            personRow(
              `customer${first + i}@example.com`,
              "Customer",
              String(first + i),
              sites[(first + i) % SITES]?.id as number,
            ),
          ),
        )
        .returning("id")
        .execute();
      await tx
        .insertInto("subscriptions")
        .values(
          customers.map((customer, i) => {
            const k = (first + i) % SITES;
            return {
              guid: `bench-${first + i}`,
              strategy_id: strategyId,
              person_id: customer.id,
              platform_id: null,
              started_at: MARKET_OPEN_MS,
              ended_at: null,
              kind: "real" as const,
              lane: "resale" as const,
              site_id: sites[k]?.id as number,
              price_cents: PRICE_CENTS,
              base_price_cents: PRICE_CENTS,
              billing_interval: "month" as const,
              billing_interval_count: 1,
              paid_until: MARKET_OPEN_MS,
              next_charge_at: MARKET_OPEN_MS,
              next_charge_cents: PRICE_CENTS,
              live_key: `${customer.id}:${strategyId}`,
            };
          }),
        )
        .execute();
    }
    return strategyId;
  });
}

class BareDone extends Error {}

/** The ledger rows of `count` charges, in multi-row statements, in one transaction rolled back. */
async function bare(storage: Storage, count: number): Promise<void> {
  await transaction(storage, async (tx) => {
    const ids = await accountIds(tx, ["bare:from", "bare:to"], MARKET_OPEN_MS);
    for (let first = 0; first < count; first += ROWS) {
      const n = Math.min(ROWS, count - first);
      const made = await tx
        .insertInto("ledger_transactions")
        .values(
          Array.from({ length: n }, (_, i) => ({
            kind: "charge" as const,
            reference: `bare:${first + i}`,
            subscription_id: null,
            memo: null,
            created_at: MARKET_OPEN_MS,
          })),
        )
        .returning("id")
        .execute();
      const entries = made.flatMap((t) => [
        {
          transaction_id: t.id,
          account_id: ids.get("bare:from") as number,
          amount_cents: -PRICE_CENTS,
          balance_after_cents: -PRICE_CENTS,
        },
        {
          transaction_id: t.id,
          account_id: ids.get("bare:to") as number,
          amount_cents: PRICE_CENTS,
          balance_after_cents: PRICE_CENTS,
        },
      ]);
      for (let at = 0; at < entries.length; at += ROWS)
        await tx
          .insertInto("ledger_entries")
          .values(entries.slice(at, at + ROWS))
          .execute();
    }
    throw new BareDone();
  }).catch((error: unknown) => {
    if (!(error instanceof BareDone)) throw error;
  });
}

const NO_PROVIDER: PaymentProvider = {
  charge: () => Promise.reject(new Error("no direct subscriptions in this bench")),
};

/** The reads measured over the subscriptions and their charges, each beside a bare server sending the same bytes. */
const READS = [
  { name: "GetSubscribers", path: (strategyId: number) => `/Strategies/GetSubscribers?StrategyId=${strategyId}` },
  {
    name: "GetSubscriptionRevenue",
    path: (strategyId: number) =>
      `/Strategies/GetSubscriptionRevenue?StrategyId=${strategyId}&StartDate=${encodeURIComponent(MARKET_OPEN_ISO)}&EndDate=${encodeURIComponent(READ_CLOCK_ISO)}`,
  },
] as const;

/** The service clock while the reads run: a day after the charges. */
const READ_CLOCK_ISO = new Date(MARKET_OPEN_MS + 86_400_000).toISOString();

async function backendBench(
  backend: BackendName,
  pgUrl: string | undefined,
  count: number,
  settings: RunSettings,
): Promise<BackendFigures> {
  const schema = `bench_billing_${process.pid}`;
  const dropSchema = backend === "postgres" ? await schemaOfOurOwn(pgUrl as string, schema, false) : null;
  const dir = await tempDir("strategy-hub-bench-billing-");
  const dataDir = join(dir, "data");
  const logPath = join(dir, "service.log");
  const storage = await openStorage(
    backend === "postgres" ? { databaseUrl: pgUrl, dataDir, pgSchema: schema } : { dataDir },
  );
  const close = onCleanup(`close ${backend} storage`, () => storage.close());
  let service: ChildProcess | undefined;
  try {
    await migrateToLatest(storage);
    progress(`${backend}: ${count} resold subscriptions due on ${SITES} house accounts`);
    const strategyId = await populate(storage, count);
    // Freshly loaded tables: the planner's statistics as a running service's would be (autovacuum's analyze).
    if (backend === "postgres") await sql`analyze`.execute(storage.db);
    const clock = new ControllableClock(() => Date.now(), { kind: "fixed", atMs: MARKET_OPEN_MS });
    progress(`${backend}: bare, the ledger rows of ${count} charges`);
    const bareRun = await timed(() => bare(storage, count));
    progress(`${backend}: the biller's pass`);
    let settled = 0;
    const pass = await timed(async () => {
      settled = (await billDue({ storage, clock, payments: NO_PROVIDER })).settled;
    });
    const charges = await storage.db
      .selectFrom("ledger_transactions")
      .select((eb) => eb.fn.countAll<number | string>().as("n"))
      .where("kind", "=", "charge")
      .executeTakeFirstOrThrow();
    // The pass wrote 100,000 ledger transactions: analyzed again, as autovacuum would within its minute.
    if (backend === "postgres") await sql`analyze`.execute(storage.db);
    await close();

    progress(`${backend}: starting the service for the reads`);
    const ports = await freePorts(4);
    const gen = ports[1] ?? 0;
    service = startService(ports, dataDir, ADMIN_KEY, logPath, {
      SANDBOX: "1",
      MARKET_FEED: "manual",
      ...(backend === "postgres" ? { DATABASE_URL: pgUrl as string, PGOPTIONS: `-c search_path=${schema}` } : {}),
    });
    await waitUntilAnswering(
      "service",
      service,
      `http://${HOST}:${gen}/General/Hello`,
      { method: "POST", headers: JSON_HEADERS, body: "{}" },
      (status) => status === 200,
    );
    await apiCall(gen, "POST", "/Sandbox/SetClock", { Now: READ_CLOCK_ISO });
    const reads: Record<string, Comparison> = {};
    for (const read of READS) {
      const path = read.path(strategyId);
      progress(`${backend}: ${read.name}, then a bare server with its answer`);
      const route: Route = { method: "GET", path: path.split("?")[0] as string, request: () => ({ path }) };
      const comparison = await compareWithBare(`${backend} ${read.name}`, gen, route, settings, dir);
      if (comparison.service.figures.totalRequests === 0) {
        throw new Error(`${backend} ${read.name}: no request finished within the run`);
      }
      reads[read.name] = comparison;
    }
    return { subscriptions: count, pass, bare: bareRun, settled, charges: Number(charges.n), reads };
  } catch (error) {
    await printLogTail(`${backend} service`, logPath);
    throw error;
  } finally {
    await close();
    if (service) await stopChild(service);
    await dropSchema?.();
  }
}

async function main(): Promise<void> {
  const count = positiveIntFromEnv("BILLING_SUBSCRIPTIONS", 100_000);
  const pgUrl = process.env.DATABASE_URL || undefined;
  const backends: BackendName[] = pgUrl ? ["sqlite", "postgres"] : ["sqlite"];
  const results: [BackendName, BackendFigures][] = [];
  const settings: RunSettings = {
    seconds: positiveIntFromEnv("BENCH_SECONDS", 5),
    warmupSeconds: 1,
    connections: positiveIntFromEnv("BENCH_CONNECTIONS", 10),
  };
  for (const backend of backends) results.push([backend, await backendBench(backend, pgUrl, count, settings)]);
  console.log(
    `The biller's pass over ${count} due resold subscriptions (${SITES} house accounts): each charge checked against ` +
      "its house's balance, written to the ledger (a transaction, two entries) and moving its subscription's term on, " +
      "durably committed. bare: the same ledger rows in multi-row statements in one transaction, in the same run.",
  );
  console.log("");
  printTable(
    ["", "subscriptions", "pass s", "pass cpu s", "bare s", "pass/bare", "target", "holds"],
    results.map(([backend, r]) => [
      backend,
      String(r.subscriptions),
      r.pass.seconds.toFixed(3),
      r.pass.cpuSeconds.toFixed(3),
      r.bare.seconds.toFixed(3),
      (r.pass.seconds / r.bare.seconds).toFixed(1),
      `≤ ${TARGET_SECONDS[backend]} s`,
      r.pass.seconds <= TARGET_SECONDS[backend] ? "yes" : "no",
    ]),
  );
  console.log("");
  console.log(
    `The first page (1,000 rows) of the strategy's ${count} subscribers (GetSubscribers) and of its revenue charged ` +
      `in a day (GetSubscriptionRevenue), as a service admin, on the general server, ${settings.connections} connections, ` +
      `${settings.seconds} s each, beside a bare Fastify server sending the same bytes in the same run.`,
  );
  console.log("");
  printTable(
    ["", "read", "req/s", "p99 ms", "bytes", "bare req/s", "ratio"],
    results.flatMap(([backend, r]) =>
      Object.entries(r.reads).map(([name, c]) => [
        backend,
        name,
        c.service.figures.requestsPerSec.toFixed(0),
        String(c.service.figures.latencyP99Ms),
        String(c.answerBytes),
        c.bare.figures.requestsPerSec.toFixed(0),
        c.ratio === null ? "-" : `${(100 * c.ratio).toFixed(1)}%`,
      ]),
    ),
  );
  for (const [backend, r] of results) {
    if (r.settled !== r.subscriptions || r.charges !== r.subscriptions) {
      throw new Error(`${backend}: ${r.settled} settled and ${r.charges} charges written, not ${r.subscriptions}`);
    }
  }
  console.log(`RESULT ${JSON.stringify({ subscriptions: count, results: Object.fromEntries(results) })}`);
}

await runBench(main);
