import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { accessLog, serviceLogger } from "../../src/log.js";
import { isSecretName, REDACTED, redacted, redactText } from "../../src/redaction.js";

/** What the service's logger keeps out of its lines, as pure functions and through the logger itself. */

const KEY = "k3y-Secret.Value_0123456789+/=";

test("names like a key, token or password are secret, in any case and spelling; others are not", () => {
  for (const name of [
    "apikey",
    "APIKEY",
    "api_key",
    "X-Api-Key",
    "AccessKey",
    "authorization",
    "UserToken",
    "user_token",
    "password",
    "NewPassword",
    "BOOTSTRAP_ADMIN_KEY",
    "cookie",
    "clientSecret",
    "CSRF_TOKEN",
  ]) {
    assert.ok(isSecretName(name), name);
  }
  for (const name of ["keyId", "personId", "url", "msg", "status", "reqId", "method", "StrategyId", "err"]) {
    assert.ok(!isSecretName(name), name);
  }
});

test("text keeps everything but secret query parameters, JSON members and bearer credentials", () => {
  const cases: [string, string][] = [
    [`/world/apiv3/x?apikey=${KEY}&systemid=7`, "/world/apiv3/x?apikey=[redacted]&systemid=7"],
    [`/x?systemid=7&APIKEY=${KEY}`, "/x?systemid=7&APIKEY=[redacted]"],
    [`/x?api%6Bey=${KEY}`, "/x?api%6Bey=[redacted]"],
    [`/General/GetKYCScore?UserToken=${KEY}&PersonId=3`, "/General/GetKYCScore?UserToken=[redacted]&PersonId=3"],
    [`apikey=${KEY}`, "apikey=[redacted]"],
    [`body {"apikey":"${KEY}","systemid":1}`, `body {"apikey":"[redacted]","systemid":1}`],
    [`cut short: {"Password" : "${KEY}`, `cut short: {"Password" : "[redacted]"`],
    [`header Bearer ${KEY} was sent`, "header Bearer [redacted] was sent"],
    ["/Checkout/Zx9_-Qw3Ertyuiopasdfghjklzxcvbnm0123456789/pay", "/Checkout/[redacted]/pay"],
    ["/checkout/Zx9_-Qw3Ertyuiopasdfghjklzxcvbnm0123456789?x=1", "/checkout/[redacted]?x=1"],
    ["/Approvals/Zx9_-Qw3Ertyuiopasdfghjklzxcvbnm0123456789/approve", "/Approvals/[redacted]/approve"],
    [
      "/Confirmations/Zx9_-Qw3Ertyuiopasdfghjklzxcvbnm0123456789?done=confirmed",
      "/Confirmations/[redacted]?done=confirmed",
    ],
    ["/x?systemid=7&filter=a", "/x?systemid=7&filter=a"],
    ['{"name":"a=b"}', '{"name":"a=b"}'],
  ];
  for (const [text, expected] of cases) assert.equal(redactText(text), expected, text);
});

test("objects: secret fields censored at any depth, errors as records with their causes, nothing changed in place", () => {
  const cause = Object.assign(new Error(`upstream said {"apikey":"${KEY}"}`), { password: KEY });
  const error = Object.assign(new Error("request failed", { cause }), {
    code: "E_FAIL",
    body: { apikey: KEY, systemid: 1 },
    rawPacket: Buffer.from(`GET /?apikey=${KEY}`),
  });
  const logged = {
    url: `/x?apikey=${KEY}`,
    headers: { Authorization: `Bearer ${KEY}` },
    list: [{ UserToken: KEY }],
    err: error,
  };
  const out = redacted(logged) as Record<string, unknown>;
  assert.ok(!JSON.stringify(out).includes(KEY), JSON.stringify(out));
  assert.equal(out.url, "/x?apikey=[redacted]");
  assert.deepEqual(out.headers, { Authorization: REDACTED });
  const err = out.err as Record<string, unknown>;
  assert.equal(err.type, "Error");
  assert.equal(err.message, "request failed");
  assert.equal(err.code, "E_FAIL");
  assert.deepEqual(err.body, { apikey: REDACTED, systemid: 1 });
  assert.match(String(err.rawPacket), /^\[\d+ bytes\]$/);
  assert.match(String((err.cause as Record<string, unknown>).message), /\{"apikey":"\[redacted\]"\}/);
  assert.equal(logged.headers.Authorization, `Bearer ${KEY}`, "the logged object is not changed");
});

test("nesting is cut off, so no logged value is walked without end", () => {
  let deep: Record<string, unknown> = { apikey: KEY };
  for (let i = 0; i < 10_000; i++) deep = { deeper: deep };
  assert.ok(!JSON.stringify(redacted(deep)).includes(KEY));
});

test("property: a secret under a secret name, in an object or a query string, never survives", () => {
  const secret = fc.stringMatching(/^[A-Za-z0-9._~+/=-]{16,64}$/);
  const name = fc.constantFrom("apikey", "ApiKey", "accessKey", "UserToken", "password", "authorization");
  const path = fc.array(fc.stringMatching(/^[a-z]{1,8}$/), { maxLength: 5 });
  fc.assert(
    fc.property(secret, name, path, fc.string(), (value, field, steps, other) => {
      const object = steps.reduceRight<unknown>((inner, step) => ({ [step]: inner, other }), { [field]: value });
      const url = `/p?${encodeURIComponent(other)}=1&${field}=${encodeURIComponent(value)}`;
      return !JSON.stringify(redacted(object)).includes(value) && !redactText(url).includes(encodeURIComponent(value));
    }),
  );
});

test("the service's logger redacts fields, errors, requests and messages, whoever logs them", () => {
  const lines: string[] = [];
  const logger = serviceLogger("trace", { write: (line: string) => lines.push(line) }).child({ server: "LEGACY" });
  logger.info({ url: `/world/apiv3/x?apikey=${KEY}`, status: 200 }, "request");
  logger.error(new Error(`could not read {"apikey":"${KEY}"}`));
  logger.warn({ err: Object.assign(new Error("failed"), { UserToken: KEY }) }, `while serving /x?apikey=${KEY}`);
  logger.info({ req: { method: "GET", url: `/x?APIKEY=${KEY}`, id: "r1", headers: { authorization: KEY } } }, "seen");
  assert.equal(lines.length, 4);
  for (const line of lines) assert.ok(!line.includes(KEY), line);
  const [access, alone, withMessage, request] = lines.map((line) => JSON.parse(line));
  assert.equal(access.url, "/world/apiv3/x?apikey=[redacted]");
  assert.equal(access.server, "LEGACY");
  assert.equal(alone.err.type, "Error");
  assert.equal(alone.msg, 'could not read {"apikey":"[redacted]"}');
  assert.equal(withMessage.err.UserToken, REDACTED);
  assert.equal(withMessage.msg, "while serving /x?apikey=[redacted]");
  assert.deepEqual(request.req, { method: "GET", url: "/x?APIKEY=[redacted]", id: "r1" });
});

test("the access log writes each request's line as the logger would, its URL redacted, and nothing above info", () => {
  const lines: string[] = [];
  const logger = serviceLogger("info", { write: (line: string) => lines.push(line) }).child({ server: "GEN" });
  const entry = {
    reqId: "r-1.a:b",
    method: "GET",
    url: `/world/apiv3/x?apikey=${KEY}&q="é\\\n"`,
    status: 200,
    ms: 1.25,
  };
  accessLog(logger)(entry);
  const { reqId, ...fields } = entry;
  logger.child({ reqId }).info(fields, "request");
  assert.equal(lines.length, 2);
  const [direct, pinos] = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
  assert.ok(direct && pinos);
  assert.deepEqual(Object.keys(direct), Object.keys(pinos));
  assert.deepEqual({ ...direct, time: 0 }, { ...pinos, time: 0 });
  assert.equal(direct.url, `/world/apiv3/x?apikey=[redacted]&q="é\\\n"`);
  assert.ok(Math.abs((direct.time as number) - (pinos.time as number)) < 1_000);
  assert.ok(lines[0]?.endsWith("}\n"));

  const quiet: string[] = [];
  accessLog(serviceLogger("warn", { write: (line: string) => quiet.push(line) }))(entry);
  assert.deepEqual(quiet, []);
});
