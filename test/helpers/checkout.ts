import assert from "node:assert/strict";
import type { Population, TestService } from "./service.js";

/** A public strategy of person A's at $49.50 a month (and $500 a year unless annual is null). */
export async function pricedStrategy(
  service: TestService,
  population: Population,
  name: string,
  annual: string | null = "500",
): Promise<number> {
  const r = await service.call("WL", "POST", "/Strategies/AddStrategy", {
    key: population.keys.wlAdminA,
    body: {
      StrategyName: name,
      StartingCapital: 10000,
      StrategyOwnerPersonId: population.people.personA,
      InitialSiteVisibility: true,
    },
  });
  assert.equal(r.status, 200, r.text);
  const strategyId = r.json.Results[0].StrategyId as number;
  await service.storage.db
    .updateTable("strategies")
    .set({ monthly_cost: "49.5", annual_cost: annual })
    .where("id", "=", strategyId)
    .execute();
  return strategyId;
}

/** The form token a checkout page's forms carry. */
export function formTokenOf(html: string): string {
  const match = /name="form_token" value="([^"]+)"/.exec(html);
  assert.ok(match, `no form token in ${html}`);
  return match[1] as string;
}

/** Posts one of the page's forms as a browser does (no API key, a urlencoded body). */
export async function submit(
  service: TestService,
  url: string,
  action: "pay" | "confirm" | "decline",
  fields: Record<string, string>,
) {
  return service.call("GEN", "POST", `${url}/${action}`, {
    key: null,
    rawBody: new URLSearchParams(fields).toString(),
    headers: { "content-type": "application/x-www-form-urlencoded" },
  });
}
