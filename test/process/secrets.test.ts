import assert from "node:assert/strict";
import net from "node:net";
import { after, test } from "node:test";
import { assertSucceeded, childEnv, onlyJson, spawnCli } from "../helpers/cli.js";
import {
  cleanUpProcesses,
  HOST,
  openRequest,
  type Response,
  send,
  startServer,
  tempDataDir,
} from "../helpers/process.js";

/**
 * The real service at its most talkative (LOG_LEVEL=trace), sent keys in
 * headers, bodies and query strings, a UserToken and a password, on requests
 * that succeed and that fail (bad JSON, bodies too large, unknown keys, a
 * throttled key, a request HTTP cannot parse): none of those secrets appears
 * anywhere in what the process prints. The administrator's key is chosen
 * (BOOTSTRAP_ADMIN_KEY), so no banner prints it either.
 */

after(cleanUpProcesses);

const ADMIN = "bootstrap-admin-key-for-the-log-test-0001";
const UNKNOWN = "unknown-but-well-formed-key-0000000001";
const MALFORMED = "not a key but a secret 9f8e7d6c";
const PASSWORD = "correct horse battery staple 42";
const LEGACY_LIMIT = 20;

const BIG = "x".repeat(1024 * 1024);

/** Sends a body exactly as given (bad JSON included). */
function sendRaw(port: number, method: string, path: string, body: string, headers: Record<string, string> = {}) {
  const { request, response } = openRequest(port, method, path, { length: Buffer.byteLength(body), headers });
  request.end(body);
  return response;
}

/** A request Node's HTTP parser refuses (a space in a header name); Fastify logs it at trace. */
function unparsable(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: HOST, port });
    let answer = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => {
      answer += chunk;
    });
    socket.on("error", reject);
    socket.on("close", () => resolve(answer));
    socket.on("connect", () => socket.write(text));
  });
}

test("no key, token or password a client sends is ever written to the log", async () => {
  const dataDir = tempDataDir();
  const cli = async (...args: string[]) => {
    const run = await spawnCli(childEnv({ DATA_DIR: dataDir }), [...args, "--json"]);
    assertSucceeded(run);
    return onlyJson(run);
  };
  const site = await cli("site", "create", "--kind", "whitelabel", "--name", "Logged Site");
  const server = await startServer({
    dataDir,
    env: { BOOTSTRAP_ADMIN_KEY: ADMIN, LOG_LEVEL: "trace", LEGACY_RATE_LIMIT_MAX: String(LEGACY_LIMIT) },
  });
  const { WL, GEN, GEO, LEGACY } = server.ports;
  const statuses: number[] = [];
  const seen = (response: Response) => {
    statuses.push(response.status);
    return response;
  };

  // v4: keys in the Authorization header, a password and a UserToken in bodies and a query string.
  const newcomer = {
    FirstName: "Grace",
    LastName: "Hopper",
    ScreenName: "Grace",
    Email: "grace@example.org",
    Password: PASSWORD,
    Language: "eng",
    CountryCode: "US",
    DivisionCode: "CA",
    WhiteLabelSiteId: site.Id,
    IPAddress: "203.0.113.9",
  };
  const added = seen(await send(WL, "POST", "/General/AddProfile", { key: ADMIN, body: newcomer }));
  assert.equal(added.status, 200, added.text);
  const { PersonId, UserToken } = added.json.Results[0];
  const { AccessKey: personKey } = await cli("key", "create", "--person", String(PersonId));
  const secrets = [ADMIN, UNKNOWN, MALFORMED, PASSWORD, UserToken as string, personKey as string];

  assert.equal(seen(await send(WL, "POST", "/General/AddProfile", { key: ADMIN, body: newcomer })).status, 409);
  const token = encodeURIComponent(UserToken);
  assert.equal(seen(await send(GEO, "GET", `/General/GetKYCScore?UserToken=${token}`, { key: ADMIN })).status, 200);
  seen(await send(WL, "PUT", "/General/UpdateKYCScore", { key: ADMIN, body: { UserToken, IsFinished: true } }));
  assert.equal(seen(await send(GEN, "GET", "/General/GetAccessKey", { key: personKey })).status, 200);
  assert.equal(seen(await send(WL, "POST", "/General/Hello", { key: UNKNOWN, body: {} })).status, 401);
  assert.equal(seen(await send(WL, "POST", "/General/Hello", { key: MALFORMED, body: {} })).status, 401);
  const otherScheme = { headers: { authorization: `ApiKey ${UNKNOWN}` }, body: {} };
  assert.equal(seen(await send(GEN, "POST", "/General/Hello", otherScheme)).status, 401);
  const v4BadJson = await sendRaw(WL, "POST", "/General/Hello", `{"Name":"x","apikey":"${ADMIN}"`, {
    authorization: `Bearer ${ADMIN}`,
  });
  assert.equal(seen(v4BadJson).status, 400);
  const v4TooLarge = await send(WL, "POST", "/General/Hello", { key: ADMIN, body: { Name: BIG, apikey: ADMIN } });
  assert.equal(seen(v4TooLarge).status, 413);
  seen(await send(GEO, "GET", `/General/GetAccessKey?apikey=${ADMIN}&AccessKey=${ADMIN}`, { key: ADMIN }));

  // Legacy: the key in the body, the query string (any case, encoded), a GET body; failures of every kind.
  const legacy = (path: string, body?: unknown) => send(LEGACY, body === undefined ? "GET" : "POST", path, { body });
  assert.equal(seen(await legacy("/world/apiv3/listAllSystems", { apikey: personKey })).json.ok, 1);
  assert.equal(seen(await legacy(`/world/apiv3/listAllSystems?apikey=${personKey}`)).json.ok, 1);
  assert.equal(seen(await legacy(`/world/apiv3/listAllSystems?APIKEY=${ADMIN}`)).status, 200);
  assert.equal(seen(await legacy(`/world/apiv3/listAllSystems?api%6Bey=${ADMIN}`)).status, 200);
  const getBody = await sendRaw(LEGACY, "GET", "/world/apiv3/listAllSystems", JSON.stringify({ apikey: personKey }));
  assert.equal(seen(getBody).json.ok, 1);
  const legacyBadJson = await sendRaw(LEGACY, "POST", "/world/apiv3/listAllSystems", `{"apikey":"${ADMIN}", nope`);
  assert.equal(seen(legacyBadJson).json.error.title, "Malformed request");
  const tooLarge = await legacy(`/world/apiv3/listAllSystems?apikey=${ADMIN}`, { apikey: ADMIN, pad: BIG });
  assert.equal(seen(tooLarge).status, 413);
  const getTooLarge = await sendRaw(LEGACY, "GET", "/world/apiv3/x", JSON.stringify({ apikey: ADMIN, pad: BIG }));
  assert.equal(seen(getTooLarge).status, 413);
  const hostile = await legacy("/world/apiv3/getSystemRoster", { apikey: ADMIN, filter: { toString: 1 } });
  assert.equal(seen(hostile).json.error.title, "Invalid value");
  assert.equal(seen(await legacy("/world/apiv3/listAllSystems", { apikey: MALFORMED })).json.ok, 0);
  for (let i = 0; i <= LEGACY_LIMIT; i++) seen(await legacy("/world/apiv3/listAllSystems", { apikey: UNKNOWN }));
  assert.equal(statuses.at(-1), 429, "the unknown key is throttled");
  assert.equal(seen(await legacy(`/nowhere?apikey=${ADMIN}`, { apikey: ADMIN })).status, 404);
  const refused = await unparsable(
    LEGACY,
    `GET /world/apiv3/x?apikey=${ADMIN} HTTP/1.1\r\nHost: x\r\nBad Header: ${ADMIN}\r\nAuthorization: Bearer ${ADMIN}\r\n\r\n`,
  );
  assert.match(refused, /^HTTP\/1.1 400/);

  assert.deepEqual(await server.stop("SIGTERM"), { code: 0, signal: null });
  const printed = `${server.stdout()}\n${server.stderr()}`;
  assert.ok(!statuses.includes(500), `no request failed inside: ${statuses}`);
  const accessLines = printed.split("\n").filter((line) => line.includes('"msg":"request"'));
  assert.ok(accessLines.length >= statuses.length, "every request was logged");
  assert.match(printed, /\[redacted\]/);
  assert.match(printed, /"msg":"client error"/, "the unparsable request was logged");
  for (const secret of secrets) {
    for (const form of new Set([secret, encodeURIComponent(secret), JSON.stringify(secret).slice(1, -1)])) {
      assert.ok(!printed.includes(form), `the log holds a secret: ${form.slice(0, 6)}…`);
    }
  }
});
