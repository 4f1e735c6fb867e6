import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { after, before, describe, test } from "node:test";
import { nextAttemptAt, RETRY_WINDOW_MS } from "../../src/engine/webhooks/schedule.js";
import { sendAttempt } from "../../src/engine/webhooks/send.js";
import { serviceLogger } from "../../src/log.js";
import { enqueueSiteEvent } from "../../src/services/webhook-events.js";
import {
  advanceClock,
  BACKENDS,
  freshStorage,
  type Population,
  populate,
  setClock,
  startTestService,
  type TestService,
} from "../helpers/service.js";
import { type Receiver, startReceiver, verifiedTimestamp } from "../helpers/webhook-receiver.js";

/**
 * The completion webhook's delivery against a real receiver on 127.0.0.1:
 * signed, retried on the schedule of docs/webhooks.md on the service clock
 * until 24 hours have passed, deduplicated by event id, dropped when the
 * endpoint is removed, kept across a restart, sent once by several processes,
 * and its secret never logged. Events are made as the approvals do it, by
 * enqueueSiteEvent on storage.
 */

const MINUTE = 60;
const HOUR = 3600;

test("the retry schedule: 1 min, 5 min, 30 min, 2 h, then every 6 h, the last attempt at 24 h", () => {
  const owed = 1_000_000;
  const times: number[] = [];
  let at = owed;
  for (let attempts = 1; ; attempts++) {
    const next = nextAttemptAt(owed, attempts, at);
    if (next === null) break;
    times.push((next - owed) / 1000);
    at = next;
  }
  assert.deepEqual(times, [
    MINUTE,
    6 * MINUTE,
    36 * MINUTE,
    2 * HOUR + 36 * MINUTE,
    8 * HOUR + 36 * MINUTE,
    14 * HOUR + 36 * MINUTE,
    20 * HOUR + 36 * MINUTE,
    24 * HOUR,
  ]);
  assert.equal(nextAttemptAt(owed, 1, owed + RETRY_WINDOW_MS + 5), null, "one attempt, even when first made late");
});

test("an attempt without an answer in time ends, named so", async () => {
  const receiver = await startReceiver();
  receiver.hang = true;
  try {
    const attempt = { url: receiver.url, secret: "s", eventId: "evt_1", payload: "{}", unixSeconds: 1 };
    const outcome = await sendAttempt(attempt, 200, new AbortController().signal);
    assert.deepEqual(outcome, { delivered: false, reason: "no answer within 200 ms", stopped: false });
  } finally {
    await receiver.close();
  }
});

for (const backend of BACKENDS) {
  describe(`webhook delivery (${backend})`, () => {
    let service: TestService;
    let p: Population;
    let receiver: Receiver;
    let secret: string;
    let events = 0;
    before(async () => {
      service = await startTestService(backend);
      p = await populate(service);
      await setClock(service, "2026-06-01T12:00:00Z");
    });
    after(() => service.close());

    /** A receiver of its own for each test, registered on site A by its admin. */
    const registered = async () => {
      receiver = await startReceiver();
      const r = await service.call("WL", "POST", "/Webhooks/Register", {
        key: p.keys.wlAdminA,
        body: { Url: receiver.url },
      });
      assert.equal(r.status, 200, r.text);
      secret = r.json.Results[0].Secret;
    };
    /** Removes the test's endpoint (if it is still there) and stops its receiver. */
    const done = async () => {
      await service.call("WL", "DELETE", "/Webhooks/Register", { key: p.keys.wlAdminA, query: { Url: receiver.url } });
      await receiver.close();
    };
    const approvalEvent = (id = `evt_approval_${++events}`) => ({
      id,
      type: "autotrade.approval.Completed",
      data: {
        ApprovalRequestId: events,
        Status: "Completed",
        PersonId: p.people.personA,
        StrategyId: 7,
        Account: "SIM-1001",
        BrokerId: 1,
        SetupId: 3,
      },
    });
    const enqueue = (event = approvalEvent(), target = service) =>
      enqueueSiteEvent(target.storage.db, p.siteA, event, target.app.runtime.clock.nowMs()).then(() => event);
    const deliveriesOf = (eventId: string) =>
      service.storage.db
        .selectFrom("webhook_deliveries")
        .select(["status", "attempts", "last_error"])
        .where("event_id", "=", eventId)
        .execute();

    test("an event is posted as stored, with its id and a signature the receiver verifies", async () => {
      await registered();
      try {
        const event = await enqueue();
        await advanceClock(service, 0);
        assert.equal(receiver.received.length, 1);
        const [got] = receiver.received as [Receiver["received"][number]];
        assert.equal(got.method, "POST");
        assert.equal(got.headers["content-type"], "application/json");
        assert.equal(got.headers["webhook-id"], event.id);
        const stored = await service.storage.db
          .selectFrom("webhook_deliveries")
          .select("payload")
          .where("event_id", "=", event.id)
          .executeTakeFirstOrThrow();
        assert.equal(got.body, stored.payload, "the body is the stored payload, byte for byte");
        assert.deepEqual(JSON.parse(got.body), {
          id: event.id,
          type: "autotrade.approval.Completed",
          created: "2026-06-01T12:00:00.000Z",
          data: event.data,
        });
        assert.equal(verifiedTimestamp(got, secret), Date.parse("2026-06-01T12:00:00Z") / 1000, "t: the service clock");
        assert.throws(() => verifiedTimestamp(got, `${secret}x`), /does not verify/);
        assert.throws(() => verifiedTimestamp({ ...got, body: `${got.body} ` }, secret), /does not verify/);
        assert.deepEqual(await deliveriesOf(event.id), [{ status: "delivered", attempts: 1, last_error: null }]);
        await advanceClock(service, HOUR);
        assert.equal(receiver.received.length, 1, "delivered once");
      } finally {
        await done();
      }
    });

    test("a failed attempt is retried when due, with the same event id, until the receiver answers 2xx", async () => {
      await registered();
      try {
        receiver.status = 500;
        const event = await enqueue();
        await advanceClock(service, 0);
        assert.equal(receiver.received.length, 1);
        assert.deepEqual(await deliveriesOf(event.id), [{ status: "pending", attempts: 1, last_error: "HTTP 500" }]);
        await advanceClock(service, 59);
        assert.equal(receiver.received.length, 1, "not due before a minute");
        await advanceClock(service, 1);
        assert.equal(receiver.received.length, 2);
        receiver.status = 204;
        await advanceClock(service, 5 * MINUTE);
        assert.equal(receiver.received.length, 3);
        assert.deepEqual(
          receiver.received.map((r) => r.headers["webhook-id"]),
          [event.id, event.id, event.id],
        );
        const times = receiver.received.map((r) => verifiedTimestamp(r, secret));
        assert.deepEqual(
          times.map((t) => t - (times[0] as number)),
          [0, MINUTE, 6 * MINUTE],
          "each attempt signed at its own time",
        );
        assert.deepEqual(await deliveriesOf(event.id), [{ status: "delivered", attempts: 3, last_error: null }]);
      } finally {
        await done();
      }
    });

    test("a receiver that keeps failing is given up on after 24 hours", async () => {
      await registered();
      try {
        receiver.status = 503;
        const event = await enqueue();
        await advanceClock(service, 0);
        const waits = [MINUTE, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 6 * HOUR, 6 * HOUR, 6 * HOUR, 3 * HOUR + 24 * MINUTE];
        for (const [i, seconds] of waits.entries()) {
          await advanceClock(service, seconds - 1);
          assert.equal(receiver.received.length, i + 1, `attempt ${i + 2} not before it is due`);
          await advanceClock(service, 1);
          assert.equal(receiver.received.length, i + 2, `attempt ${i + 2}`);
        }
        assert.deepEqual(await deliveriesOf(event.id), [{ status: "failed", attempts: 9, last_error: "HTTP 503" }]);
        receiver.status = 200;
        await advanceClock(service, 7 * 24 * HOUR);
        assert.equal(receiver.received.length, 9, "never again");
      } finally {
        await done();
      }
    });

    test("an event owed twice is delivered once", async () => {
      await registered();
      try {
        const event = approvalEvent();
        await enqueue(event);
        await enqueue(event);
        await advanceClock(service, 0);
        await enqueue(event);
        await advanceClock(service, HOUR);
        assert.equal(receiver.received.length, 1);
        assert.equal((await deliveriesOf(event.id)).length, 1);
      } finally {
        await done();
      }
    });

    test("an endpoint removed is owed nothing more: what was pending is dropped", async () => {
      await registered();
      try {
        receiver.status = 500;
        const pending = await enqueue();
        await advanceClock(service, 0);
        const removed = await service.call("WL", "DELETE", "/Webhooks/Register", {
          key: p.keys.wlAdminA,
          query: { Url: receiver.url },
        });
        assert.equal(removed.status, 200, removed.text);
        assert.equal(removed.json.Results[0].CanceledDeliveries, 1);
        receiver.status = 200;
        const later = await enqueue();
        await advanceClock(service, HOUR);
        assert.equal(receiver.received.length, 1, "only the attempt before the removal");
        assert.deepEqual(await deliveriesOf(pending.id), [
          { status: "failed", attempts: 1, last_error: "endpoint unregistered" },
        ]);
        assert.deepEqual(await deliveriesOf(later.id), []);
      } finally {
        await done();
      }
    });

    test("a rotated secret signs the deliveries still owed", async () => {
      await registered();
      try {
        receiver.status = 500;
        await enqueue();
        await advanceClock(service, 0);
        const rotated = await service.call("WL", "POST", "/Webhooks/Register", {
          key: p.keys.wlAdminA,
          body: { Url: receiver.url },
        });
        receiver.status = 200;
        await advanceClock(service, MINUTE);
        assert.equal(receiver.received.length, 2);
        assert.throws(() => verifiedTimestamp(receiver.received[1] as Receiver["received"][number], secret));
        verifiedTimestamp(receiver.received[1] as Receiver["received"][number], rotated.json.Results[0].Secret);
      } finally {
        await done();
      }
    });

    test("a delivery owed is not lost across a restart, nor held by a claim that ran out", async () => {
      await registered();
      try {
        receiver.status = 500;
        const event = await enqueue();
        await advanceClock(service, 0);
        service = await service.restart();
        receiver.status = 200;
        // A live claim of another process holds the delivery; one that ran out (the process died) does not.
        const claim = (until: number) =>
          service.storage.db
            .updateTable("webhook_deliveries")
            .set({ claimed_until: until })
            .where("event_id", "=", event.id)
            .execute();
        await claim(Date.now() + 60_000);
        await advanceClock(service, MINUTE);
        assert.equal(receiver.received.length, 1, "claimed elsewhere: not sent");
        await claim(Date.now() - 1);
        await advanceClock(service, 0);
        assert.equal(receiver.received.length, 2);
        assert.deepEqual(await deliveriesOf(event.id), [{ status: "delivered", attempts: 2, last_error: null }]);
      } finally {
        await done();
      }
    });

    // Two SQLite connections in one Node process would block each other's event loop; on SQLite the claim
    // is made under BEGIN IMMEDIATE, so processes take turns, and the claim test above holds for both.
    test("two processes passing at once send each delivery once", { skip: backend === "sqlite" }, async () => {
      await registered();
      const sibling = await service.sibling();
      try {
        const sent = [];
        for (let i = 0; i < 30; i++) sent.push((await enqueue()).id);
        await Promise.all([
          service.app.webhooks.run(),
          sibling.app.webhooks.run(),
          service.app.webhooks.run(),
          sibling.app.webhooks.run(),
        ]);
        const got = receiver.received.map((r) => String(r.headers["webhook-id"]));
        assert.equal(got.length, 30, "no attempt sent twice");
        assert.deepEqual([...got].sort(), [...sent].sort());
      } finally {
        await sibling.close();
        await done();
      }
    });
  });
}

test("the signing secret is never logged", async () => {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  const storage = await freshStorage("sqlite");
  const service = await startTestService("sqlite", { storage, logger: serviceLogger("trace", sink) });
  const receiver = await startReceiver();
  try {
    const p = await populate(service);
    const register = () =>
      service.call("WL", "POST", "/Webhooks/Register", { key: p.keys.wlAdminA, body: { Url: receiver.url } });
    const secrets = [(await register()).json.Results[0].Secret as string];
    receiver.status = 500;
    const event = { id: "evt_logged", type: "autotrade.approval.Failed", data: { Status: "Failed" } };
    await enqueueSiteEvent(service.storage.db, p.siteA, event, service.app.runtime.clock.nowMs());
    await advanceClock(service, 0);
    secrets.push((await register()).json.Results[0].Secret as string);
    receiver.status = 200;
    await advanceClock(service, HOUR);
    assert.equal(receiver.received.length, 2);
    const printed = lines.join("");
    assert.match(printed, /webhook delivery failed; retried later/);
    assert.match(printed, /webhook delivered/);
    for (const secret of secrets) assert.ok(!printed.includes(secret), "the log holds a signing secret");
    for (const received of receiver.received) {
      assert.ok(!printed.includes(String(received.headers["webhook-signature"])), "nor a signature");
    }
  } finally {
    await receiver.close();
    await service.close();
  }
});
