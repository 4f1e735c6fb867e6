import assert from "node:assert/strict";
import { test } from "node:test";
import { accountApproval, NO_APPROVAL_NEEDED } from "../../src/core/autotrade/account-approval.js";
import { type CopyInput, copyDecision } from "../../src/core/autotrade/copy.js";
import { settingsOfStart } from "../../src/core/autotrade/settings.js";
import { decimal, formatDecimal, ZERO } from "../../src/core/decimal.js";

test("approval is needed only for live accounts where the geo-site requires it", () => {
  assert.deepEqual(accountApproval({ required: false, isPaper: false, approval: null }), NO_APPROVAL_NEEDED);
  assert.deepEqual(accountApproval({ required: true, isPaper: true, approval: null }), NO_APPROVAL_NEEDED);
  assert.deepEqual(accountApproval({ required: true, isPaper: false, approval: null }), {
    approved: false,
    cfd: false,
  });
  assert.deepEqual(accountApproval({ required: true, isPaper: false, approval: { isCfd: false } }), {
    approved: true,
    cfd: false,
  });
  assert.deepEqual(accountApproval({ required: true, isPaper: false, approval: { isCfd: true } }), {
    approved: true,
    cfd: true,
  });
});

const input = (over: Partial<CopyInput> = {}): CopyInput => ({
  symbolType: "stock",
  side: "buy",
  openClose: "open",
  quantity: decimal("100"),
  strategyHeld: ZERO,
  followerHeld: ZERO,
  scalingPercentage: decimal("50"),
  accountValue: decimal("50000"),
  modelValue: decimal("100000"),
  price: decimal("200"),
  settings: settingsOfStart({ EnableStocks: true, EnableFutures: true }),
  ...over,
});
const outcome = (over: Partial<CopyInput>) => {
  const decision = copyDecision(input(over));
  return decision.copy ? formatDecimal(decision.quantity) : decision.reason;
};
const UNAPPROVED = { approved: false, cfd: false };

test("an unapproved account gets no opening copy, but its closes are copied: it exits with the strategy", () => {
  assert.equal(outcome({ approval: UNAPPROVED }), "not_approved");
  assert.equal(outcome({ approval: UNAPPROVED, symbolType: "future", quantity: decimal("4") }), "not_approved");
  assert.equal(
    outcome({
      approval: UNAPPROVED,
      side: "sell",
      openClose: "close",
      strategyHeld: decimal("100"),
      followerHeld: decimal("50"),
    }),
    "50",
  );
  assert.equal(outcome({}), "25", "no approval given: none needed");
});

test("stocks traded as CFDs need the approval's IsCFD; other classes do not", () => {
  const asCfd = settingsOfStart({ EnableStocks: true, EnableFutures: true, TradeStocksAsCFD: true });
  assert.equal(outcome({ settings: asCfd, approval: { approved: true, cfd: false } }), "cfd_not_approved");
  assert.equal(outcome({ settings: asCfd, approval: { approved: true, cfd: true } }), "25");
  assert.equal(
    outcome({
      settings: asCfd,
      approval: { approved: true, cfd: false },
      symbolType: "future",
      quantity: decimal("4"),
    }),
    "1",
  );
  assert.equal(outcome({ approval: { approved: true, cfd: false } }), "25", "stocks not as CFDs");
  // A class the setup does not trade says so first.
  assert.equal(outcome({ approval: UNAPPROVED, symbolType: "option" }), "class_disabled");
});
