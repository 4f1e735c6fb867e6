import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { after, before, describe, test } from "node:test";
import { ControllableClock } from "../../src/core/clock.js";
import { decimal } from "../../src/core/decimal.js";
import { EXTERNAL_ACCOUNT, houseAccount } from "../../src/core/ledger.js";
import { applyClockSetting } from "../../src/services/clock.js";
import { balances, post } from "../../src/services/ledger.js";
import { migrateToLatest } from "../../src/store/migrate.js";
import { insertStrategy } from "../../src/store/strategy-rows.js";
import { transaction } from "../../src/store/transaction.js";
import { builtArgs, ROOT } from "../helpers/built.js";
import { childEnv, onlyJson, spawnCli } from "../helpers/cli.js";
import { BACKENDS, freshStorage, type TestStorage } from "../helpers/service.js";

/**
 * The biller never charges twice (docs/decisions.md "Billing and the
 * ledger"): `billing run` (the biller's pass in a process of its own) is
 * killed with SIGKILL in the middle of a pass over thousands of due
 * subscriptions, then two passes run at once in two processes. Every period
 * is charged exactly once, every ledger transaction balances, and each house
 * paid exactly what its subscriptions cost.
 */

const START = Date.UTC(2027, 0, 15, 12);
const RESOLD = 6_000;
const DIRECT = 400;
const PRICE = 1_500;
const SITES = 4;

for (const backend of BACKENDS) {
  describe(`the biller killed mid-pass (${backend})`, () => {
    let fresh: TestStorage;
    let siteIds: number[] = [];

    before(async () => {
      fresh = await freshStorage(backend);
      const storage = fresh.storage;
      await migrateToLatest(storage);
      await applyClockSetting(storage, new ControllableClock(Date.now), { kind: "fixed", atMs: START });
      await transaction(storage, async (tx) => {
        const sites = await tx
          .insertInto("sites")
          .values(
            Array.from({ length: SITES }, (_, i) => ({
              kind: "whitelabel" as const,
              name: `Reseller ${i + 1}`,
              domain: null,
              geo_site_id: null,
              created_at: START,
              support_company_name: null,
              support_site_url: null,
              support_email: null,
            })),
          )
          .returning("id")
          .execute();
        siteIds = sites.map((s) => s.id);
        const people = await insertPeople(tx, 1 + RESOLD + DIRECT);
        const [owner, ...customers] = people;
        const strategies: number[] = [];
        for (const [i] of siteIds.entries()) {
          strategies.push(
            await insertStrategy(tx, {
              name: `Resold ${i + 1}`,
              owner: { id: owner as number, white_label_site_id: null },
              startingCapital: decimal("100000"),
              isPublic: true,
              nowMs: START,
            }),
          );
        }
        await post(
          tx,
          siteIds.map((siteId) => ({
            kind: "fund" as const,
            reference: null,
            subscriptionId: null,
            memo: null,
            transfers: [{ from: EXTERNAL_ACCOUNT, to: houseAccount(siteId), cents: RESOLD * PRICE }],
          })),
          START,
        );
        const rows = customers.map((personId, i) => {
          const k = i % SITES;
          const strategyId = strategies[k] as number;
          const direct = i >= RESOLD;
          return {
            guid: `crash-${i}`,
            strategy_id: strategyId,
            person_id: personId,
            platform_id: null,
            started_at: START,
            ended_at: null,
            lane: direct ? ("direct" as const) : ("resale" as const),
            site_id: direct ? null : (siteIds[k] as number),
            price_cents: PRICE,
            base_price_cents: PRICE,
            billing_interval: "month" as const,
            billing_interval_count: 1,
            paid_until: START,
            next_charge_at: START,
            next_charge_cents: PRICE,
            payment_ref: direct ? "sandbox-card" : null,
            live_key: `${personId}:${strategyId}`,
          };
        });
        for (let at = 0; at < rows.length; at += 500) {
          await tx
            .insertInto("subscriptions")
            .values(rows.slice(at, at + 500))
            .execute();
        }
      });
    });
    after(() => fresh?.dispose());

    const charges = async () =>
      Number(
        (
          await fresh.storage.db
            .selectFrom("ledger_transactions")
            .select((eb) => eb.fn.countAll<number | string>().as("n"))
            .where("kind", "=", "charge")
            .executeTakeFirstOrThrow()
        ).n,
      );

    test("killed mid-pass, then two passes at once: each period charged once", async () => {
      const env = childEnv(fresh.env);
      const child = spawn(process.execPath, [...builtArgs("cli/main"), "billing", "run", "--json"], {
        cwd: ROOT,
        env,
        stdio: "ignore",
      });
      const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on("exit", (_, signal) => resolve(signal)));
      let atKill = 0;
      for (;;) {
        atKill = await charges();
        if (atKill > 0) break;
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      child.kill("SIGKILL");
      assert.equal(await exited, "SIGKILL");
      const afterKill = await charges();
      assert.ok(afterKill < RESOLD + DIRECT, `killed mid-pass: ${afterKill} of ${RESOLD + DIRECT} charged`);

      // The claims of the killed pass's direct charges run out at once: the next passes ask again.
      const [one, two] = await Promise.all([
        spawnCli(env, ["billing", "run", "--claim-seconds", "0", "--json"]),
        spawnCli(env, ["billing", "run", "--claim-seconds", "0", "--json"]),
      ]);
      assert.equal(one.code, 0, one.stderr);
      assert.equal(two.code, 0, two.stderr);
      assert.equal(onlyJson(one).Failed + onlyJson(two).Failed, 0);

      const db = fresh.storage.db;
      const perSubscription = await db
        .selectFrom("subscriptions as s")
        .leftJoin("ledger_transactions as t", "t.subscription_id", "s.id")
        .select(["s.id", "s.charge_seq", (eb) => eb.fn.count<number | string>("t.id").as("charges")])
        .groupBy(["s.id", "s.charge_seq"])
        .execute();
      assert.equal(perSubscription.length, RESOLD + DIRECT);
      const wrong = perSubscription.filter((row) => Number(row.charges) !== 1 || row.charge_seq !== 1);
      assert.deepEqual(wrong, [], "every subscription charged exactly once");
      const unbalanced = await db
        .selectFrom("ledger_entries")
        .select(["transaction_id", (eb) => eb.fn.sum<number | string>("amount_cents").as("total")])
        .groupBy("transaction_id")
        .having((eb) => eb.fn.sum("amount_cents"), "!=", 0)
        .execute();
      assert.deepEqual(unbalanced, []);
      const houses = await balances(db, siteIds.map(houseAccount));
      for (const siteId of siteIds) {
        assert.equal(houses.get(houseAccount(siteId)), (RESOLD - RESOLD / SITES) * PRICE, `house ${siteId}`);
      }
      const settledAtProvider = await db
        .selectFrom("sandbox_charges")
        .select((eb) => eb.fn.countAll<number | string>().as("n"))
        .where("outcome", "=", "settled")
        .executeTakeFirstOrThrow();
      assert.equal(Number(settledAtProvider.n), DIRECT, "the provider settled each direct period once");
    });
  });
}

async function insertPeople(tx: Parameters<Parameters<typeof transaction>[1]>[0], count: number): Promise<number[]> {
  const ids: number[] = [];
  for (let first = 0; first < count; first += 500) {
    const made = await tx
      .insertInto("persons")
      .values(
        Array.from({ length: Math.min(500, count - first) }, (_, i) => ({
          email: `billed${first + i}@example.com`,
          first_name: "Billed",
          last_name: String(first + i),
          role: "person" as const,
          white_label_site_id: null,
          geo_site_id: null,
          alias: null,
          phone: null,
          language: null,
          country_code: null,
          division_code: null,
          last_logged_in: null,
          last_ip: null,
          created_at: START,
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
        })),
      )
      .returning("id")
      .execute();
    ids.push(...made.map((row) => row.id));
  }
  return ids;
}
