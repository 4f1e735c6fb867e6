import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { startTestService, type TestService } from "../helpers/service.js";

/** The catalogue is static: one backend is enough to show the operation. */
describe("GetSupportedSymbols", () => {
  let service: TestService;
  before(async () => {
    service = await startTestService("sqlite");
  });
  after(() => service.close());

  const get = (query: Record<string, string> = {}) =>
    service.call("WL", "GET", "/Strategies/GetSupportedSymbols", { query });

  test("lists futures roots with their contract specifications, forex pairs and special stock symbols", async () => {
    const r = await get();
    assert.equal(r.status, 200);
    const bySymbol = new Map(r.json.Results.map((s: { Symbol: string }) => [s.Symbol, s]));
    assert.deepEqual(bySymbol.get("@ES"), {
      SymbolType: "future",
      Symbol: "@ES",
      Description: "E-mini S&P 500",
      SecurityType: "FUT",
      SecurityExchange: "XCME",
      Currency: "USD",
      PriceMultiplier: 50,
      TickSize: 0.25,
      ContractMonths: "HMUZ",
    });
    assert.equal((bySymbol.get("@6J") as { TickSize: number }).TickSize, 0.0000005);
    assert.equal((bySymbol.get("@FDAX") as { Currency: string }).Currency, "EUR");
    assert.equal((bySymbol.get("USDJPY") as { Currency: string }).Currency, "JPY");
    assert.equal((bySymbol.get("BRK.B") as { SecurityType: string }).SecurityType, "CS");
    assert.equal(bySymbol.has("AAPL"), false, "ordinary US stocks are supported without being listed");
    assert.equal(r.json.Pagination.next_cursor, null);
  });

  test("SymbolType narrows the list; an unknown one is a 400", async () => {
    const forex = await get({ SymbolType: "forex" });
    assert.ok(forex.json.Results.length > 20);
    assert.ok(forex.json.Results.every((s: { SymbolType: string }) => s.SymbolType === "forex"));
    const bad = await get({ SymbolType: "option" });
    assert.equal(bad.status, 400);
    assert.equal(bad.json.ResponseStatus.Errors[0].FieldName, "SymbolType");
  });

  test("pages walk forward and back over the same list, in symbol order", async () => {
    const all = (await get()).json.Results.map((s: { Symbol: string }) => s.Symbol);
    assert.deepEqual(all, [...all].sort());
    const pages: string[][] = [];
    let r = await get({ Limit: "7" });
    pages.push(r.json.Results.map((s: { Symbol: string }) => s.Symbol));
    while (r.json.Pagination.next_cursor) {
      r = await get({ Limit: "7", Cursor: r.json.Pagination.next_cursor });
      pages.push(r.json.Results.map((s: { Symbol: string }) => s.Symbol));
    }
    assert.deepEqual(pages.flat(), all);
    const back: string[][] = [pages.at(-1) as string[]];
    while (r.json.Pagination.prev_cursor) {
      r = await get({ Limit: "7", Cursor: r.json.Pagination.prev_cursor });
      back.unshift(r.json.Results.map((s: { Symbol: string }) => s.Symbol));
    }
    assert.deepEqual(back, pages);
    const newestFirst = await get({ AscendingOrder: "false", Limit: "3" });
    assert.deepEqual(
      newestFirst.json.Results.map((s: { Symbol: string }) => s.Symbol),
      all.slice(-3).reverse(),
    );
  });

  test("answers may be cached privately for an hour; the operation is on WL only", async () => {
    const r = await get({ Limit: "1" });
    assert.equal(r.headers["cache-control"], "private, max-age=3600");
    for (const server of ["GEN", "GEO"] as const) {
      const other = await service.call(server, "GET", "/Strategies/GetSupportedSymbols");
      assert.equal(other.status, 404);
    }
  });
});
