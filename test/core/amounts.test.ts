import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { amountProblemMessage, MAX_AMOUNT, readAmount } from "../../src/core/amounts.js";
import { type Decimal, decimalParts, formatDecimal, toNumber } from "../../src/core/decimal.js";

const readBack = (value: string | number) => {
  const reading = readAmount(value);
  return reading.ok ? formatDecimal(reading.value) : reading.problem;
};

/** Units of 10^-8 within the maximum. */
const withinMaximum = fc.bigInt({ min: -MAX_AMOUNT, max: MAX_AMOUNT }).map((units) => units as Decimal);

test("a JSON number's binary noise is rounded away at eight places", () => {
  assert.equal((100 + 100.02) / 2, 100.00999999999999);
  assert.equal(readBack((100 + 100.02) / 2), "100.01");
  assert.equal(readBack(0.1 + 0.2), "0.3");
  assert.equal(readBack(1.0000000049999), "1");
  assert.equal(readBack(2.000000000000001), "2");
  assert.equal(readBack(-4.4999999999999), "-4.5");
  // Ties go to the even unit.
  assert.equal(readBack(1.000000005), "1");
  assert.equal(readBack(1.000000015), "1.00000002");
  assert.equal(readBack(1.5e-8), "0.00000002");
});

test("text is read exactly: more than eight places is refused, never rounded", () => {
  assert.equal(readBack("100.00999999999999"), "tooManyPlaces");
  assert.equal(readBack("1.000000001"), "tooManyPlaces");
  assert.equal(readBack(" 150.25 "), "150.25");
  assert.equal(readBack("1.2500000000"), "1.25", "zeros past eight places are no places");
  assert.equal(readBack(".5"), "0.5");
  assert.equal(readBack("abc"), "notANumber");
  assert.equal(readBack(""), "notANumber");
  assert.equal(readBack("1e400000000000000000"), "notANumber");
});

test("the largest and the smallest amounts: too large, or below the smallest unit, never 'more than 8 places'", () => {
  for (const huge of [1e308, "1e308", 1e10, "1000000000.00000001", -2e9, "1e99999999"]) {
    assert.equal(readBack(huge), "tooLarge", String(huge));
  }
  assert.equal(readBack(1e9), "1000000000");
  assert.equal(readBack("-1000000000"), "-1000000000");
  for (const tiny of [1e-300, "1e-300", 5e-9, "0.000000005", "0.000000009", -1e-12, "1e-99999999"]) {
    assert.equal(readBack(tiny), "belowSmallestUnit", String(tiny));
  }
  assert.equal(readBack(6e-9), "0.00000001", "a number rounds up to the smallest unit");
  assert.equal(readBack(0), "0");
  assert.equal(readBack("-0"), "0");
  assert.equal(amountProblemMessage("Order.Limit", "tooLarge"), "Order.Limit is too large: at most 1000000000");
  assert.equal(
    amountProblemMessage("Order.Limit", "belowSmallestUnit"),
    "Order.Limit is smaller than the smallest unit, 0.00000001",
  );
});

test("rounding never moves a number by more than half a unit, and a tie goes to the even unit", () => {
  fc.assert(
    fc.property(fc.double({ min: -1e9, max: 1e9, noNaN: true }), (x) => {
      const reading = readAmount(x);
      const parts = decimalParts(x);
      assert.ok(parts);
      // The number's shortest decimal form and the amount, both in units of 10^-scale.
      const scale = Math.max(8, -parts.exponent);
      const exact = BigInt(parts.digits || "0") * 10n ** BigInt(parts.exponent + scale) * (parts.negative ? -1n : 1n);
      if (!reading.ok) {
        assert.equal(reading.problem, "belowSmallestUnit");
        assert.ok(2n * (exact < 0n ? -exact : exact) <= 10n ** BigInt(scale - 8));
        return;
      }
      const amount = reading.value * 10n ** BigInt(scale - 8);
      const twice = 2n * (amount > exact ? amount - exact : exact - amount);
      const unit = 10n ** BigInt(scale - 8);
      assert.ok(twice <= unit, `${x} read as ${formatDecimal(reading.value)}`);
      if (twice === unit) assert.equal(reading.value % 2n, 0n, `${x}: a tie goes to the even unit`);
    }),
  );
});

test("an amount of eight places or fewer reads back unchanged, as text and as a JSON number of up to 15 digits", () => {
  fc.assert(
    fc.property(withinMaximum, (d) => {
      const text = formatDecimal(d);
      assert.equal(readBack(text), text);
    }),
  );
  const fifteenDigits = fc.bigInt({ min: -(10n ** 15n) + 1n, max: 10n ** 15n - 1n }).map((u) => u as Decimal);
  fc.assert(fc.property(fifteenDigits, (d) => readBack(toNumber(d)) === formatDecimal(d)));
});

test("text with a ninth place that is not zero is refused", () => {
  const ninth = fc.tuple(withinMaximum, fc.integer({ min: 1, max: 9 }));
  fc.assert(
    fc.property(ninth, ([d, digit]) => {
      const text = formatDecimal(d);
      const fraction = text.includes(".") ? text.split(".")[1] : "";
      const written = `${text}${text.includes(".") ? "" : "."}${(fraction ?? "").padEnd(8, "0").slice(fraction?.length ?? 0)}${digit}`;
      const problem = readBack(written);
      assert.ok(problem === "tooManyPlaces" || (d === 0n && problem === "belowSmallestUnit"), `${written}: ${problem}`);
    }),
  );
});
