import assert from "node:assert/strict";
import { createKey } from "../../src/services/keys.js";
import { createPlatform } from "../../src/services/sites.js";
import type { CallResult, Population, TestService } from "./service.js";

/** Legacy v3 helpers: a command call, and a Private Platform of site A with its key. */

/** POSTs a command with the apikey in the body (World context unless a path is given); answers the JSON. */
export async function legacyCall(
  service: TestService,
  command: string,
  body: Record<string, unknown>,
  apikey: string,
  path = `/world/apiv3/${command}`,
): Promise<CallResult["json"]> {
  const r = await service.call("LEGACY", "POST", path, { key: null, body: { apikey, ...body } });
  assert.equal(r.status, 200, r.text);
  return r.json;
}

/** A platform of white-label site A and a platform key of site A's administrator. */
export async function sitePlatform(
  service: TestService,
  population: Population,
): Promise<{ platformId: number; platformKey: string }> {
  const { id: platformId } = await createPlatform(service.app.runtime, {
    name: "Site A platform",
    whiteLabelSiteId: population.siteA,
  });
  const { accessKey } = await createKey(service.app.runtime, { personId: population.people.wlAdminA, platformId });
  return { platformId, platformKey: accessKey };
}
