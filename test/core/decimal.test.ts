import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import {
  add,
  compare,
  type Decimal,
  decimal,
  div,
  formatDecimal,
  fromInteger,
  isMultipleOf,
  mul,
  ONE,
  parseDecimal,
  round,
  storedDecimal,
  sub,
  toNumber,
  ZERO,
} from "../../src/core/decimal.js";

const arbitraryDecimal = fc.bigInt({ min: -(10n ** 17n), max: 10n ** 17n }).map((units) => units as Decimal);

test("reads text and JSON numbers exactly, up to eight places", () => {
  assert.equal(formatDecimal(decimal("150.25")), "150.25");
  assert.equal(formatDecimal(decimal(150.25)), "150.25");
  assert.equal(formatDecimal(decimal("0.0000005")), "0.0000005");
  assert.equal(formatDecimal(decimal("-3")), "-3");
  assert.equal(formatDecimal(decimal("+007.10")), "7.1");
  assert.equal(formatDecimal(decimal(1e-7)), "0.0000001");
  assert.equal(formatDecimal(decimal("2.5e3")), "2500");
  assert.equal(formatDecimal(decimal("1.000000000000")), "1", "zeros past eight places are fine");
  for (const bad of ["", "abc", "1.2.3", "1,5", "0.000000001", "1e-9", Number.NaN, Number.POSITIVE_INFINITY, "--1"]) {
    assert.equal(parseDecimal(bad as string), null, String(bad));
  }
});

test("the classic float drift does not happen", () => {
  assert.equal(formatDecimal(add(decimal("0.1"), decimal("0.2"))), "0.3");
  let total = ZERO;
  for (let i = 0; i < 1000; i++) total = add(total, decimal("0.01"));
  assert.equal(formatDecimal(total), "10");
});

test("text round trip", () => {
  fc.assert(fc.property(arbitraryDecimal, (d) => decimal(formatDecimal(d)) === d));
});

test("the text is the shortest plain decimal, on either side of 2^53 units", () => {
  const canonical = /^-?(0|[1-9]\d*)(\.\d*[1-9])?$/;
  const edge = BigInt(Number.MAX_SAFE_INTEGER);
  const nearEdge = fc.bigInt({ min: edge - 10n ** 9n, max: edge + 10n ** 9n });
  const units = fc
    .oneof(
      arbitraryDecimal,
      nearEdge,
      nearEdge.map((u) => -u),
    )
    .map((u) => u as Decimal);
  fc.assert(
    fc.property(units, (d) => {
      const text = formatDecimal(d);
      assert.match(text, canonical);
      assert.equal(decimal(text), d);
    }),
  );
  for (const d of [edge, edge + 1n, -edge, -edge - 1n, 10n ** 8n, -1n, 0n]) {
    assert.equal(decimal(formatDecimal(d as Decimal)), d);
  }
  assert.equal(formatDecimal(-1n as Decimal), "-0.00000001");
  assert.equal(formatDecimal(edge as Decimal), "90071992.54740991");
});

test("stored text reads back as the value it was formatted from", () => {
  fc.assert(fc.property(arbitraryDecimal, (d) => storedDecimal(formatDecimal(d)) === d));
  assert.deepEqual(
    ["0", "-0.5", "3", "150.25", "-12.00000001"].map((text) => formatDecimal(storedDecimal(text))),
    ["0", "-0.5", "3", "150.25", "-12.00000001"],
  );
});

test("addition and subtraction are exact inverses", () => {
  fc.assert(fc.property(arbitraryDecimal, arbitraryDecimal, (a, b) => sub(add(a, b), b) === a));
});

test("products and quotients round half to even", () => {
  assert.equal(formatDecimal(mul(decimal("1.5"), decimal("2"))), "3");
  assert.equal(formatDecimal(div(decimal("1"), decimal("3"))), "0.33333333");
  assert.equal(formatDecimal(div(decimal("2"), decimal("3"))), "0.66666667");
  assert.equal(formatDecimal(round(decimal("2.345"), 2)), "2.34");
  assert.equal(formatDecimal(round(decimal("2.355"), 2)), "2.36");
  assert.equal(formatDecimal(round(decimal("-2.345"), 2)), "-2.34");
  assert.equal(formatDecimal(round(decimal("0.125"), 2)), "0.12");
  assert.throws(() => div(decimal("1"), ZERO), RangeError);
  assert.equal(formatDecimal(round(decimal("2.5"), 0)), "2");
  assert.equal(formatDecimal(round(decimal("0.12345678"), 8)), "0.12345678");
  for (const places of [-1, 9, 1.5, Number.NaN]) assert.throws(() => round(decimal("1"), places), RangeError);
});

test("a product with one is the other factor, either way round, as the rounding makes it", () => {
  fc.assert(
    fc.property(arbitraryDecimal, arbitraryDecimal, (a, b) => {
      assert.equal(mul(a, ONE), a);
      assert.equal(mul(ONE, a), a);
      assert.equal(mul(a, b), mul(b, a));
      // One built another way is the same value, and takes the same path.
      assert.equal(mul(a, decimal("1.00")), a);
    }),
  );
});

test("multiplying then dividing by a whole number returns the value", () => {
  fc.assert(
    fc.property(arbitraryDecimal, fc.integer({ min: 1, max: 1_000_000 }), (a, n) => {
      const times = mul(a, fromInteger(n));
      return div(times, fromInteger(n)) === a;
    }),
  );
});

test("tick grid membership", () => {
  const tick = decimal("0.25");
  assert.equal(isMultipleOf(decimal("4321.75"), tick), true);
  assert.equal(isMultipleOf(decimal("4321.80"), tick), false);
  assert.equal(isMultipleOf(decimal("0.0000015"), decimal("0.0000005")), true);
});

test("comparison agrees with the numbers, and JSON output prints the same decimal", () => {
  fc.assert(
    fc.property(arbitraryDecimal, arbitraryDecimal, (a, b) => {
      const expected = a < b ? -1 : a > b ? 1 : 0;
      return compare(a, b) === expected;
    }),
  );
  assert.equal(JSON.stringify({ price: toNumber(decimal("150.25")) }), '{"price":150.25}');
});
