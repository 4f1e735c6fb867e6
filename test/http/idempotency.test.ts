import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { placeOrder } from "../../src/services/orders.js";
import {
  advanceClock,
  BACKENDS,
  type CallResult,
  type Population,
  populate,
  setClock,
  startTestService,
  type TestService,
} from "../helpers/service.js";
import { callerOf, orderInput } from "../helpers/services.js";
import { activeOrders, MARKET_OPEN, newStrategy, positions, setQuote, stockOrder } from "../helpers/trading.js";

/** The Idempotency-Key header of order entry, as a client retrying over a flaky network uses it. */
for (const backend of BACKENDS) {
  describe(`Idempotency-Key on order entry (${backend})`, () => {
    let service: TestService;
    let population: Population;
    let key: string;
    let serial = 0;
    before(async () => {
      service = await startTestService(backend, { marketFeed: { kind: "manual" } });
      population = await populate(service);
      key = population.keys.personA;
      await setClock(service, MARKET_OPEN);
      await setQuote(service, "AAPL", 200, 200.05);
    });
    after(() => service.close());

    const fresh = () => `retry-${backend}-${++serial}-${Math.random().toString(36).slice(2)}`;
    const send = (
      method: "POST" | "PUT" | "DELETE",
      path: string,
      idempotencyKey: string | undefined,
      input: Record<string, unknown>,
      caller = key,
    ): Promise<CallResult> =>
      service.call("GEN", method, path, {
        key: caller,
        ...(method === "DELETE" ? { query: input as Record<string, string> } : { body: input }),
        ...(idempotencyKey === undefined ? {} : { headers: { "Idempotency-Key": idempotencyKey } }),
      });
    const order = (idempotencyKey: string | undefined, body: Record<string, unknown>, caller = key) =>
      send("POST", "/Strategies/NewStrategyOrder", idempotencyKey, { Order: body }, caller);
    const limitBuy = (strategyId: number, limit: number) =>
      stockOrder(strategyId, "AAPL", "buy", 1, { OrderType: "2", Limit: limit });
    const refusedWith = (r: CallResult, status: number, code: string, field: string) => {
      assert.equal(r.status, status, r.text);
      assert.equal(r.json.ResponseStatus.Errors[0].ErrorCode, code, r.text);
      assert.equal(r.json.ResponseStatus.Errors[0].FieldName, field, r.text);
    };

    test("the same key and body again answers the first answer, marked replayed, and places nothing more", async () => {
      const strategyId = await newStrategy(service, key);
      const retry = fresh();
      const first = await order(retry, limitBuy(strategyId, 150));
      assert.equal(first.status, 200, first.text);
      assert.equal(first.headers["idempotent-replayed"], undefined);
      const again = await order(retry, limitBuy(strategyId, 150));
      assert.equal(again.status, 200, again.text);
      assert.equal(again.headers["idempotent-replayed"], "true");
      assert.equal(again.text, first.text, "the very answer of the first request");
      assert.equal((await activeOrders(service, key, strategyId)).length, 1);
      // Another order of the fields is the same request.
      const { Limit, ...rest } = limitBuy(strategyId, 150);
      const reordered = await order(retry, { Limit, ...rest });
      assert.equal(reordered.headers["idempotent-replayed"], "true", reordered.text);
    });

    test("without the header every request is a new one", async () => {
      const strategyId = await newStrategy(service, key);
      await order(undefined, limitBuy(strategyId, 150));
      await order(undefined, limitBuy(strategyId, 150));
      assert.equal((await activeOrders(service, key, strategyId)).length, 2);
    });

    test("the same key with another body, or on another operation, is refused naming the header (409, 1203)", async () => {
      const strategyId = await newStrategy(service, key);
      const retry = fresh();
      assert.equal((await order(retry, limitBuy(strategyId, 150))).status, 200);
      refusedWith(await order(retry, limitBuy(strategyId, 151)), 409, "1203", "Idempotency-Key");
      const cancel = await send("DELETE", "/Strategies/CancelStrategyOrder", retry, {
        StrategyId: String(strategyId),
        SignalId: "1",
      });
      refusedWith(cancel, 409, "1203", "Idempotency-Key");
      assert.equal((await activeOrders(service, key, strategyId)).length, 1);
    });

    test("duplicates sent at once place one order and all get its answer", async () => {
      const strategyId = await newStrategy(service, key);
      const retry = fresh();
      const answers = await Promise.all(Array.from({ length: 8 }, () => order(retry, limitBuy(strategyId, 149))));
      for (const answer of answers) assert.equal(answer.status, 200, answer.text);
      assert.equal(new Set(answers.map((a) => a.text)).size, 1, "one answer");
      assert.equal(answers.filter((a) => a.headers["idempotent-replayed"] === "true").length, 7);
      assert.equal((await activeOrders(service, key, strategyId)).length, 1);
    });

    test("a refused request is not remembered: sent again once it can succeed, it runs", async () => {
      const strategyId = await newStrategy(service, key);
      const retry = fresh();
      const close = stockOrder(strategyId, "AAPL", "sell", 5, { OpenClose: "C" });
      const refused = await order(retry, close);
      assert.ok(refused.status >= 400 && refused.status < 500, refused.text);
      assert.equal((await order(undefined, stockOrder(strategyId, "AAPL", "buy", 5))).status, 200);
      const ran = await order(retry, close);
      assert.equal(ran.status, 200, ran.text);
      assert.equal(ran.headers["idempotent-replayed"], undefined);
      assert.deepEqual(await positions(service, key, strategyId), []);
    });

    test("keys are each person's own, and are forgotten after 24 hours", async () => {
      const mine = await newStrategy(service, key);
      const theirs = await newStrategy(service, population.keys.personB);
      const retry = fresh();
      assert.equal((await order(retry, limitBuy(mine, 150))).status, 200);
      const other = await order(retry, limitBuy(theirs, 150), population.keys.personB);
      assert.equal(other.status, 200, other.text);
      assert.equal(other.headers["idempotent-replayed"], undefined);
      await advanceClock(service, 25 * 3600);
      await setQuote(service, "AAPL", 200, 200.05);
      const later = await order(retry, limitBuy(mine, 150));
      assert.equal(later.status, 200, later.text);
      assert.equal(later.headers["idempotent-replayed"], undefined);
      assert.equal((await activeOrders(service, key, mine)).length, 2);
      await setClock(service, MARKET_OPEN);
      await setQuote(service, "AAPL", 200, 200.05);
    });

    test("replace, cancel and desired positions replay too", async () => {
      const strategyId = await newStrategy(service, key);
      const placed = await order(undefined, limitBuy(strategyId, 150));
      const signalId = placed.json.Results[0].SignalId as number;
      const replaceKey = fresh();
      const replacement = { ...limitBuy(strategyId, 151), CancelReplaceSignalId: signalId };
      const replaced = await send("PUT", "/Strategies/ReplaceStrategyOrder", replaceKey, { Order: replacement });
      assert.equal(replaced.status, 200, replaced.text);
      const replacedAgain = await send("PUT", "/Strategies/ReplaceStrategyOrder", replaceKey, { Order: replacement });
      assert.equal(replacedAgain.text, replaced.text);
      assert.equal(replacedAgain.headers["idempotent-replayed"], "true");
      const cancelKey = fresh();
      const cancel = { StrategyId: String(strategyId), SignalId: String(replaced.json.Results[0].SignalId) };
      const canceled = await send("DELETE", "/Strategies/CancelStrategyOrder", cancelKey, cancel);
      assert.equal(canceled.status, 200, canceled.text);
      const canceledAgain = await send("DELETE", "/Strategies/CancelStrategyOrder", cancelKey, cancel);
      assert.equal(canceledAgain.status, 200, "not 'already canceled': the first answer again");
      assert.equal(canceledAgain.text, canceled.text);
      const desiredKey = fresh();
      const desired = { StrategyId: strategyId, Positions: [{ Quantity: 3, ServiceSymbol: { FullSymbol: "AAPL" } }] };
      const set = await send("POST", "/Strategies/SetDesiredPositions", desiredKey, desired);
      assert.equal(set.status, 200, set.text);
      const setAgain = await send("POST", "/Strategies/SetDesiredPositions", desiredKey, desired);
      assert.equal(setAgain.text, set.text);
      const held = await positions(service, key, strategyId);
      assert.deepEqual(
        held.map((p: { Quantity: number }) => p.Quantity),
        [3],
        "bought once, not twice",
      );
    });

    test("a malformed key is refused naming the header", async () => {
      const strategyId = await newStrategy(service, key);
      refusedWith(await order("x".repeat(256), limitBuy(strategyId, 150)), 400, "1101", "Idempotency-Key");
      refusedWith(await order("two words", limitBuy(strategyId, 150)), 400, "1101", "Idempotency-Key");
      assert.equal((await activeOrders(service, key, strategyId)).length, 0);
    });

    test("a claim its process left behind is taken over; one carried out without its answer is not run again", async () => {
      const strategyId = await newStrategy(service, key);
      const { owner_person_id: personId } = await service.storage.db
        .selectFrom("strategies")
        .select("owner_person_id")
        .where("id", "=", strategyId)
        .executeTakeFirstOrThrow();
      const claim = (retry: string, state: "pending" | "committed", claimedAt: number) =>
        service.storage.db
          .insertInto("idempotency_keys")
          .values({
            person_id: personId,
            key: retry,
            operation: "NewStrategyOrder",
            fingerprint: "set below",
            state,
            claimed_by: "a process that died",
            claimed_at: claimedAt,
            created_at: Date.parse(MARKET_OPEN),
            answer: null,
          })
          .execute();
      // The fingerprint of the request as the service reads it: taken from a first run under another key.
      const probe = fresh();
      assert.equal((await order(probe, limitBuy(strategyId, 140))).status, 200);
      const { fingerprint } = await service.storage.db
        .selectFrom("idempotency_keys")
        .select("fingerprint")
        .where("key", "=", probe)
        .executeTakeFirstOrThrow();
      const left = fresh();
      await claim(left, "pending", 0);
      await service.storage.db.updateTable("idempotency_keys").set({ fingerprint }).where("key", "=", left).execute();
      const taken = await order(left, limitBuy(strategyId, 140));
      assert.equal(taken.status, 200, taken.text);
      assert.equal(taken.headers["idempotent-replayed"], undefined);
      const lost = fresh();
      await claim(lost, "committed", 0);
      await service.storage.db.updateTable("idempotency_keys").set({ fingerprint }).where("key", "=", lost).execute();
      refusedWith(await order(lost, limitBuy(strategyId, 140)), 409, "1204", "Idempotency-Key");
      assert.equal((await activeOrders(service, key, strategyId)).length, 2);
    });

    test("the commit that stores a keyed request's orders marks its key carried out, in the same transaction", async () => {
      const strategyId = await newStrategy(service, key);
      const caller = await callerOf(service, key);
      const retry = fresh();
      await service.storage.db
        .insertInto("idempotency_keys")
        .values({
          person_id: caller.personId,
          key: retry,
          operation: "NewStrategyOrder",
          fingerprint: "-",
          state: "pending",
          claimed_by: service.app.runtime.frame.origin,
          claimed_at: 0,
          created_at: Date.parse(MARKET_OPEN),
          answer: null,
        })
        .execute();
      const ctx = { ...service.app.runtime, caller, idempotency: { personId: caller.personId, key: retry } };
      await placeOrder(ctx, orderInput(limitBuy(strategyId, 145)));
      const row = await service.storage.db
        .selectFrom("idempotency_keys")
        .select("state")
        .where("key", "=", retry)
        .executeTakeFirstOrThrow();
      assert.equal(row.state, "committed");
    });
  });
}
