import assert from "node:assert/strict";
import { test } from "node:test";
import {
  administers,
  anyCaller,
  type Caller,
  type Member,
  mayReadPrivate,
  onlyRoles,
  permits,
  whiteLabelScope,
} from "../../src/core/access.js";
import { asPersonId, asSiteId } from "../../src/core/ids.js";

const SITE_A = asSiteId(10);
const SITE_B = asSiteId(20);
const GEO = asSiteId(30);

const caller = (role: Caller["role"], site: number | null, geo: number | null, id = 1): Caller => ({
  personId: asPersonId(id),
  role,
  whiteLabelSiteId: site === null ? null : asSiteId(site),
  geoSiteId: geo === null ? null : asSiteId(geo),
  platformId: null,
});
const member = (id: number, site: number | null, geo: number | null): Member => ({
  personId: asPersonId(id),
  whiteLabelSiteId: site === null ? null : asSiteId(site),
  geoSiteId: geo === null ? null : asSiteId(geo),
});

const admin = caller("admin", null, null, 1);
const wlAdminA = caller("whitelabel-admin", SITE_A, GEO, 2);
const wlAdminB = caller("whitelabel-admin", SITE_B, null, 3);
const geoAdmin = caller("geo-admin", null, GEO, 4);
const personA = caller("person", SITE_A, GEO, 5);

const customerOfA = member(50, SITE_A, GEO);
const customerOfB = member(60, SITE_B, null);
const directGeoMember = member(70, null, GEO);

test("permissions: any valid key, or a list of roles", () => {
  for (const c of [admin, wlAdminA, geoAdmin, personA]) assert.equal(permits(anyCaller, c), true);
  const adminsAndWl = onlyRoles("admin", "whitelabel-admin");
  assert.deepEqual(
    [admin, wlAdminA, wlAdminB, geoAdmin, personA].map((c) => permits(adminsAndWl, c)),
    [true, true, true, false, false],
  );
});

test("a white-label admin administers its own site's members only", () => {
  assert.equal(administers(wlAdminA, customerOfA), true);
  assert.equal(administers(wlAdminA, customerOfB), false);
  assert.equal(administers(wlAdminA, directGeoMember), false);
  assert.equal(administers(wlAdminB, customerOfA), false);
});

test("a geo-site admin administers its geo-site, including the white-label members inside it", () => {
  assert.equal(administers(geoAdmin, customerOfA), true);
  assert.equal(administers(geoAdmin, directGeoMember), true);
  assert.equal(administers(geoAdmin, customerOfB), false);
});

test("service admins administer everyone; ordinary people nobody", () => {
  for (const m of [customerOfA, customerOfB, directGeoMember]) {
    assert.equal(administers(admin, m), true);
    assert.equal(administers(personA, m), false);
  }
});

test("an admin without a site administers nobody by accident of nulls", () => {
  const siteless = caller("whitelabel-admin", null, null, 9);
  assert.equal(administers(siteless, member(80, null, null)), false);
  const geoless = caller("geo-admin", null, null, 9);
  assert.equal(administers(geoless, member(81, null, null)), false);
});

test("private data: the person themself or an administrator of theirs", () => {
  assert.equal(mayReadPrivate(personA, member(5, SITE_A, GEO)), true);
  assert.equal(mayReadPrivate(personA, customerOfA), false);
  assert.equal(mayReadPrivate(wlAdminA, customerOfA), true);
  assert.equal(mayReadPrivate(wlAdminB, customerOfA), false);
});

test("white-label scope: the caller's own site unless a service admin names another", () => {
  assert.deepEqual(whiteLabelScope(wlAdminA, undefined), { ok: true, siteId: SITE_A });
  assert.deepEqual(whiteLabelScope(wlAdminA, SITE_A), { ok: true, siteId: SITE_A });
  assert.deepEqual(whiteLabelScope(wlAdminA, SITE_B), { ok: false });
  assert.deepEqual(whiteLabelScope(admin, SITE_B), { ok: true, siteId: SITE_B });
  assert.deepEqual(whiteLabelScope(admin, undefined), { ok: false });
  assert.deepEqual(whiteLabelScope(geoAdmin, SITE_A), { ok: false });
});
