import assert from "node:assert/strict";
import { test } from "node:test";
import { checkMark, type StoredMark } from "../../src/core/marks.js";

/** Tuesday 2026-03-10, 16:00 New York (EDT from March 8). */
const MARK: StoredMark = {
  day: "2026-03-10",
  marked_at: Date.parse("2026-03-10T20:00:00Z"),
  equity: "100996.5",
  cash: "79994",
  exposure: "21002.5",
  commissions_paid: "1",
  plan_commissions: '{"Default":"1","Institutional":"0.35","None":"0"}',
  benchmark: "505.01",
};

test("a mark made by the writer may be stored", () => {
  assert.doesNotThrow(() => checkMark(MARK));
  assert.doesNotThrow(() => checkMark({ ...MARK, equity: "-0.5", plan_commissions: "{}" }));
});

test("a mark that readers could not trust is refused when written", () => {
  const bad: [Partial<StoredMark>, RegExp][] = [
    [{ day: "2026-02-30" }, /day/],
    [{ day: "2026-3-10" }, /day/],
    [{ day: "2026-03-11" }, /New York date/],
    [{ marked_at: Number.NaN }, /marked_at/],
    [{ equity: "1e5" }, /equity/],
    [{ cash: "100.50" }, /cash/],
    [{ exposure: "0.123456789" }, /exposure/],
    [{ commissions_paid: " 1" }, /commissions_paid/],
    [{ benchmark: "" }, /benchmark/],
    [{ plan_commissions: '{"Default":1}' }, /plan_commissions/],
    [{ plan_commissions: "[]" }, /plan_commissions/],
    [{ plan_commissions: "{" }, /plan_commissions/],
  ];
  for (const [change, problem] of bad) {
    assert.throws(
      () => checkMark({ ...MARK, ...change }),
      (error: Error) => {
        assert.ok(error instanceof RangeError);
        assert.match(error.message, problem);
        return true;
      },
    );
  }
});
