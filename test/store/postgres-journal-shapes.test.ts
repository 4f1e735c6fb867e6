import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { StoredOrder } from "../../src/store/journal/batch.js";
import { fullWriteOf, writeOf } from "../../src/store/journal/postgres-journal-statements.js";
import { accountCommit, journalBatch, type ModelAccount, restingOrder } from "../helpers/store-rows.js";

const NOW_MS = Date.parse("2026-03-10T14:00:00Z");
const ACCOUNT: ModelAccount = { id: 7, strategyId: 3 };

const order = (id: number): StoredOrder => ({ id, ...restingOrder(ACCOUNT, NOW_MS) });
const event = (seq: number, orderId: number) => ({
  account_id: ACCOUNT.id,
  seq,
  kind: "accepted",
  order_id: orderId,
  payload: "{}",
  actor_person_id: null,
  on_behalf_of_person_id: null,
  origin: "shape-test",
  at: NOW_MS,
});
/** Two resting orders' batch: new orders, their events, the account moved. */
const resting = (firstId: number) =>
  journalBatch({
    accounts: [accountCommit(ACCOUNT, 4, 6)],
    newOrders: [order(firstId), order(firstId + 1)],
    events: [event(5, firstId), event(6, firstId + 1)],
  });

/** The tables a statement's text writes (each update names its table's alias before `set`). */
const written = (text: string) =>
  [...text.matchAll(/(?:insert into (\w+)|delete from (\w+)|update (\w+) \w+ set)/g)]
    .map((match) => match[1] ?? match[2] ?? match[3])
    .sort();

/** The highest $n the text names. */
const lastParameter = (text: string) => Math.max(...[...text.matchAll(/\$(\d+)/g)].map((match) => Number(match[1])));

describe("the PostgreSQL journal writes a batch with a statement of its shape", () => {
  test("a batch of resting orders writes the orders, their events and the account, and no other table", () => {
    const write = writeOf(resting(100), "shape-test");
    assert.deepEqual(written(write.text), ["accounts", "order_events", "orders"]);
    assert.equal(lastParameter(write.text), write.values.length);
  });

  test("batches of one shape share one statement, whatever they hold; another shape has its own", () => {
    const first = writeOf(resting(100), "shape-test");
    const second = writeOf({ ...resting(200), newOrders: [order(200)], events: [event(5, 200)] }, "shape-test");
    assert.equal(second.name, first.name);
    assert.equal(second.text, first.text);
    assert.notDeepEqual(second.values, first.values);
    const canceled = writeOf(
      { ...resting(300), changedOrders: [{ ...order(50), status: "Canceled", closed_at: NOW_MS }] },
      "shape-test",
    );
    assert.notEqual(canceled.name, first.name);
    assert.deepEqual(written(canceled.text), ["accounts", "order_events", "orders", "orders"]);
  });

  test("a batch of only consumer positions moves no account and writes only the positions", () => {
    const write = writeOf(
      journalBatch({ consumers: [{ consumer: "records", accountId: ACCOUNT.id, expected: 3, seq: 9 }] }),
      "shape-test",
    );
    assert.deepEqual(written(write.text), ["outbox_positions"]);
    assert.equal(lastParameter(write.text), write.values.length);
  });

  test("the full statement writes every table, its parameters in the same order as each shape's", () => {
    const full = fullWriteOf(resting(100), "shape-test");
    assert.equal(lastParameter(full.text), full.values.length);
    assert.deepEqual(
      [...new Set(written(full.text))],
      [
        "account_orders",
        "accounts",
        "copy_skips",
        "fills",
        "idempotency_keys",
        "oca_groups",
        "order_events",
        "orders",
        "outbox_positions",
        "positions",
        "strategies",
        "strategy_records",
        "trades",
      ],
    );
    const shaped = writeOf(resting(100), "shape-test");
    // The guard's five, then each table's arrays, then the channel and the notifications.
    assert.deepEqual(shaped.values.slice(0, 5), full.values.slice(0, 5));
    assert.deepEqual(shaped.values.slice(-2), full.values.slice(-2));
  });
});
