import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { MUX_CONSUMER } from "../../src/services/strategy-mux.js";
import { assertSucceeded, childEnv, onlyJson, runCli } from "../helpers/cli.js";
import {
  BACKENDS,
  type Population,
  populate,
  setClock,
  startTestService,
  type TestService,
} from "../helpers/service.js";
import { MARKET_OPEN, newStrategy, placed, setQuote, stockOrder } from "../helpers/trading.js";

/**
 * The operator CLI's `strategy mux` and `strategy unmux` as operators give
 * them, beside a running service: their JSON, their refusals (exit 1 naming
 * the option, 2 for a usage error), and a family made by the CLI mirrored by
 * the service.
 */
for (const backend of BACKENDS) {
  describe(`operator CLI: strategy mux (${backend})`, () => {
    let service: TestService;
    let env: NodeJS.ProcessEnv;
    let p: Population;
    const ids: Record<string, number> = {};
    const cli = (...args: string[]) => runCli(env, args);
    const mux = (parent: number, child: number, ...more: string[]) =>
      cli("strategy", "mux", "--parent", String(parent), "--child", String(child), ...more, "--json");
    const refused = (run: Awaited<ReturnType<typeof cli>>, code: number, field?: string) => {
      assert.equal(run.code, code, `${run.stdout}${run.stderr}`);
      const error = onlyJson(run).Error;
      assert.ok(error.Message, run.stdout);
      if (field !== undefined) assert.equal(error.Field, field, run.stdout);
      return error.Message as string;
    };

    before(async () => {
      service = await startTestService(backend, { marketFeed: { kind: "manual" } });
      env = childEnv(service.env);
      p = await populate(service);
      await setClock(service, MARKET_OPEN);
      await setQuote(service, "AAPL", 200, 200.1);
      for (const name of ["parent", "child", "other", "grandchild"]) {
        ids[name] = await newStrategy(service, p.keys.personA, 100_000, `CLI ${name}`);
      }
      ids.siteAdmins = await newStrategy(service, p.keys.wlAdminA, 100_000, "CLI site admin's");
      ids.siteB = await newStrategy(service, p.keys.personB, 100_000, "CLI site B");
    });
    after(() => service.close());

    test("strategy mux makes a variant, answers the link, and the running service mirrors the parent's orders", async () => {
      await placed(service, p.keys.personA, stockOrder(ids.parent as number, "AAPL", "buy", 10));
      const run = await mux(ids.parent as number, ids.child as number);
      assertSucceeded(run);
      const answer = onlyJson(run);
      assert.deepEqual(answer, {
        ParentStrategyId: ids.parent,
        ChildStrategyId: ids.child,
        ScalingPercentage: 100,
        LinkedDate: answer.LinkedDate,
        Created: true,
      });
      assert.equal(answer.LinkedDate, MARKET_OPEN.replace("Z", ".000Z"), "the service clock's time");
      const link = await service.storage.db
        .selectFrom("strategy_mux")
        .selectAll()
        .where("child_strategy_id", "=", ids.child as number)
        .executeTakeFirstOrThrow();
      const account = await service.storage.db
        .selectFrom("accounts")
        .select(["id", "event_seq"])
        .where("strategy_id", "=", ids.parent as number)
        .executeTakeFirstOrThrow();
      assert.equal(link.from_seq, account.event_seq, "the parent's orders from before are not mirrored");
      const position = await service.storage.db
        .selectFrom("outbox_positions")
        .select("seq")
        .where("consumer", "=", MUX_CONSUMER)
        .where("account_id", "=", account.id)
        .executeTakeFirstOrThrow();
      assert.equal(position.seq, account.event_seq);

      const order = await placed(service, p.keys.personA, stockOrder(ids.parent as number, "AAPL", "buy", 4));
      service.app.mux.request();
      await service.app.mux.settled();
      await service.app.runtime.frame.drain();
      const mirrored = await service.storage.db
        .selectFrom("orders")
        .select(["local_signal_id", "quantity", "status"])
        .where("strategy_id", "=", ids.child as number)
        .execute();
      assert.deepEqual(mirrored, [{ local_signal_id: `mux:${order.SignalId}`, quantity: "4", status: "Filled" }]);

      const again = await mux(ids.parent as number, ids.child as number, "--scaling", "50");
      assertSucceeded(again);
      assert.deepEqual(onlyJson(again), { ...answer, ScalingPercentage: 50, Created: false });
      const text = await cli("strategy", "mux", "--parent", String(ids.parent), "--child", String(ids.child));
      assertSucceeded(text);
      assert.match(text.stdout, /mirrors strategy \d+ at 50%/);
    });

    test("a variant of another owner of the parent's white-label site is allowed; of another site, not", async () => {
      const siteAdmins = await mux(ids.parent as number, ids.siteAdmins as number, "--scaling", "12.5");
      assertSucceeded(siteAdmins);
      assert.equal(onlyJson(siteAdmins).ScalingPercentage, 12.5);
      assert.match(refused(await mux(ids.parent as number, ids.siteB as number), 1, "child"), /owner|site/);
    });

    test("refusals: itself, no such strategy, a second parent, a cycle; usage errors exit 2", async () => {
      assert.match(refused(await mux(ids.other as number, ids.other as number), 1, "child"), /itself/);
      refused(await mux(999_999, ids.other as number), 1, "parent");
      refused(await mux(ids.other as number, 999_999), 1, "child");
      const second = await mux(ids.other as number, ids.child as number);
      assert.match(refused(second, 1, "child"), /one parent/);
      // child → grandchild, then grandchild → parent would make parent descend from itself.
      assertSucceeded(await mux(ids.child as number, ids.grandchild as number));
      assert.match(refused(await mux(ids.grandchild as number, ids.parent as number), 1, "parent"), /descends/);
      for (const args of [
        ["--parent", "1"],
        ["--child", "1"],
        ["--parent", "x", "--child", "2"],
        ["--parent", "1", "--child", "2", "--scaling", "0"],
        ["--parent", "1", "--child", "2", "--scaling", "1001"],
        ["--parent", "1", "--child", "2", "--scale", "5"],
      ]) {
        refused(await cli("strategy", "mux", ...args, "--json"), 2);
      }
      const links = await service.storage.db.selectFrom("strategy_mux").select("child_strategy_id").execute();
      assert.deepEqual(
        links.map((l) => l.child_strategy_id).sort((a, b) => a - b),
        [ids.child, ids.grandchild, ids.siteAdmins].sort((a, b) => (a as number) - (b as number)),
      );
    });

    test("strategy unmux ends a variant's mirroring", async () => {
      const run = await cli("strategy", "unmux", "--child", String(ids.grandchild), "--json");
      assertSucceeded(run);
      assert.deepEqual(onlyJson(run), { ParentStrategyId: ids.child, ChildStrategyId: ids.grandchild });
      refused(await cli("strategy", "unmux", "--child", String(ids.grandchild), "--json"), 1, "child");
      refused(await cli("strategy", "unmux", "--json"), 2);
    });
  });
}
