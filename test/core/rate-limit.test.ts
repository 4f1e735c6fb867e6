import assert from "node:assert/strict";
import { test } from "node:test";
import { RateLimiter } from "../../src/http/rate-limit.js";

test("a fixed window admits max requests per bucket, then refuses until it resets", () => {
  let now = 0;
  const limiter = new RateLimiter({ max: 2, windowSeconds: 10 }, () => now);
  assert.deepEqual(limiter.consume("a"), { allowed: true, limit: 2, remaining: 1, resetSeconds: 10 });
  assert.deepEqual(limiter.consume("a"), { allowed: true, limit: 2, remaining: 0, resetSeconds: 10 });
  now = 2_500;
  assert.deepEqual(limiter.consume("a"), { allowed: false, limit: 2, remaining: 0, resetSeconds: 8 });
  assert.equal(limiter.consume("b").allowed, true, "buckets are independent");
  now = 10_000;
  assert.deepEqual(limiter.consume("a"), { allowed: true, limit: 2, remaining: 1, resetSeconds: 10 });
});

test("finished windows are swept, so idle buckets do not pile up", () => {
  let now = 0;
  const limiter = new RateLimiter({ max: 1, windowSeconds: 1 }, () => now);
  for (let i = 0; i < 1000; i++) limiter.consume(`ip:${i}`);
  now = 5_000;
  limiter.consume("fresh");
  // A swept bucket starts a new window: its first request is admitted again.
  assert.equal(limiter.consume("ip:1").allowed, true);
});

test("peek answers what a request would get now, without counting it", () => {
  let now = 0;
  const limiter = new RateLimiter({ max: 2, windowSeconds: 10 }, () => now);
  assert.deepEqual(limiter.peek("a"), { allowed: true, limit: 2, remaining: 2, resetSeconds: 10 });
  limiter.consume("a");
  limiter.consume("a");
  now = 4_000;
  assert.deepEqual(limiter.peek("a"), { allowed: false, limit: 2, remaining: 0, resetSeconds: 6 });
  assert.deepEqual(limiter.peek("a"), { allowed: false, limit: 2, remaining: 0, resetSeconds: 6 });
  now = 10_000;
  assert.equal(limiter.peek("a").allowed, true, "a finished window is as good as none");
});
