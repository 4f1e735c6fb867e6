import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { TObject, TSchema } from "@sinclair/typebox";
import { ERRORS } from "../../src/core/errors.js";
import { MULTILINE } from "../../src/http/input.js";
import { inputSource, type Operation, pathOf, type V4Server } from "../../src/http/v4/operation.js";
import { paginationInput } from "../../src/http/v4/pagination.js";
import { OPERATIONS } from "../../src/http/v4/table.js";
import { BACKENDS, type CallResult, startTestService, type TestService } from "../helpers/service.js";

/**
 * The bad-input battery, generated from the v4 operation table: on every
 * server of every operation, each input field (nested ones by their path) is
 * sent hostile values beside plausible values for the fields it needs, with a
 * key that may call every operation. No answer is a 5xx; each is the error
 * envelope; a 400 names a field; what the input layer must refuse is refused
 * naming the field; and a write that is refused changes nothing stored.
 */

type Segment = string | 0;

interface Field {
  readonly path: readonly Segment[];
  readonly schema: TSchema;
}

interface Hostile {
  readonly label: string;
  readonly value: unknown;
  /** The input layer must answer 400 naming the field (or a field inside it). */
  readonly refused: boolean;
}

const CONTROL_CHARACTERS = ["a\u0000b", "\u0001", "x\u001fy", "\u007f", "\u0085"];
const DEEP = JSON.parse(`${"[".repeat(2_000)}${"]".repeat(2_000)}`);

const isObjectSchema = (schema: TSchema): schema is TObject =>
  schema.type === "object" && typeof schema.properties === "object";
const options = (schema: TSchema) => (schema.anyOf as TSchema[] | undefined)?.filter((s) => s.type !== "null");

/** A value the schema takes: required properties only, the bounds respected, codes by their first value. */
function plausible(schema: TSchema): unknown {
  const choices = options(schema);
  if (choices) return choices[0]?.const ?? plausible(choices[0] as TSchema);
  if (isObjectSchema(schema)) {
    const required = new Set(schema.required ?? []);
    return Object.fromEntries(
      Object.entries(schema.properties)
        .filter(([name]) => required.has(name))
        .map(([name, property]) => [name, plausible(property)]),
    );
  }
  switch (schema.type) {
    case "array":
      return Array.from({ length: (schema.minItems as number | undefined) ?? 0 }, () =>
        plausible(schema.items as TSchema),
      );
    case "integer":
      return Math.max((schema.minimum as number | undefined) ?? 1, 1);
    case "number":
      return (schema.exclusiveMinimum as number | undefined) !== undefined
        ? (schema.exclusiveMinimum as number) + 1
        : Math.max((schema.minimum as number | undefined) ?? 1, 1);
    case "boolean":
      return true;
    case "string":
      if (schema.format === "date-time") return "2026-03-02T15:00:00Z";
      return "x".repeat(Math.min(Math.max(schema.minLength ?? 1, 3), schema.maxLength ?? 3));
  }
  return undefined;
}

/** Every field of the schema, depth first, list items as their first. */
function fieldsOf(schema: TSchema, path: readonly Segment[] = []): Field[] {
  if (isObjectSchema(schema)) {
    return Object.entries(schema.properties).flatMap(([name, property]) => {
      const at = [...path, name];
      return [{ path: at, schema: property }, ...fieldsOf(property, at)];
    });
  }
  if (schema.type === "array") {
    const at = [...path, 0 as const];
    return [{ path: at, schema: schema.items as TSchema }, ...fieldsOf(schema.items as TSchema, at)];
  }
  return [];
}

/** The field's name as errors give it: `Order.StrategyId`, `Positions[0].Quantity`. */
const nameOf = (path: readonly Segment[]) =>
  path.reduce<string>((name, s) => (s === 0 ? `${name}[0]` : name ? `${name}.${s}` : s), "");

/** The plausible input with `value` at `path`, and every object and list on the way made. */
function withValue(schema: TSchema, base: unknown, path: readonly Segment[], value: unknown): unknown {
  const [head, ...rest] = path;
  if (head === undefined) return value;
  if (head === 0) {
    const items = schema.items as TSchema;
    const first = Array.isArray(base) && base.length > 0 ? base[0] : plausible(items);
    return [withValue(items, first, rest, value)];
  }
  const property = (schema as TObject).properties[head] as TSchema;
  const current = (base as Record<string, unknown>)[head] ?? plausible(property);
  return { ...(base as Record<string, unknown>), [head]: withValue(property, current, rest, value) };
}

const kindOf = (schema: TSchema): string => {
  const choices = options(schema);
  if (choices) return choices.every((s) => s.const !== undefined) ? "code" : kindOf(choices[0] as TSchema);
  return String(schema.type);
};

/** Hostile values for a field of a JSON body. */
function bodyValues(schema: TSchema): Hostile[] {
  const kind = kindOf(schema);
  const scalar = kind !== "object" && kind !== "array";
  const values: Hostile[] = [
    { label: "an object", value: { nested: { deeper: 1 } }, refused: kind !== "object" },
    { label: "a list", value: [{}], refused: kind !== "array" || kindOf(schema.items as TSchema) !== "object" },
    { label: "deep nesting", value: DEEP, refused: true },
    { label: "null", value: null, refused: false },
  ];
  if (kind === "integer") {
    values.push(
      { label: "2^53", value: 2 ** 53, refused: true },
      { label: "2^63", value: 2 ** 63, refused: true },
      { label: "1e308", value: 1e308, refused: true },
      { label: "-1", value: -1, refused: ((schema.minimum as number | undefined) ?? -1) >= 0 },
      { label: "0.5", value: 0.5, refused: true },
      { label: "2^53 - 1", value: 2 ** 53 - 1, refused: false },
    );
  }
  if (kind === "number") {
    for (const value of [1e308, -1e308, 2 ** 63, -1, 5e-324])
      values.push({ label: String(value), value, refused: false });
  }
  if (kind === "boolean") values.push({ label: "maybe", value: "maybe", refused: true });
  if (scalar) values.push(...textValues(schema, "x".repeat(300_000)));
  return values;
}

/** Hostile values for a field of a query string (text, or repeated). */
function queryValues(schema: TSchema): Hostile[] {
  const kind = kindOf(schema);
  const values: Hostile[] = [{ label: "repeated", value: ["1", "2"], refused: kind !== "array" }];
  if (kind === "integer") {
    values.push(
      { label: "2^53", value: "9007199254740992", refused: true },
      { label: "2^63 - 1", value: "9223372036854775807", refused: true },
      { label: "1e308", value: "1e308", refused: true },
      { label: "-1", value: "-1", refused: ((schema.minimum as number | undefined) ?? -1) >= 0 },
      { label: "2^53 - 1", value: "9007199254740991", refused: false },
    );
  }
  if (kind === "number") {
    values.push(
      { label: "1e308", value: "1e308", refused: false },
      { label: "-1", value: "-1", refused: false },
      { label: "Infinity", value: "Infinity", refused: true },
    );
  }
  if (kind === "boolean") values.push({ label: "maybe", value: "maybe", refused: true });
  values.push(...textValues(schema, "x".repeat(6_000)));
  return values;
}

/** Text any field may be sent: control characters, line breaks, a huge string, and harmless oddities. */
function textValues(schema: TSchema, huge: string): Hostile[] {
  const multiline = schema[MULTILINE] === true;
  return [
    ...CONTROL_CHARACTERS.map((value) => ({ label: JSON.stringify(value), value, refused: true })),
    { label: "a line break", value: "a\nb", refused: !multiline },
    { label: "a huge string", value: huge, refused: false },
    { label: "quotes and unicode", value: "O'Brien \"; drop table x; -- Zürich 😀", refused: false },
  ];
}

const TABLES_COUNTED = ["orders", "fills", "trades", "order_events", "oca_groups", "equity_marks"] as const;

/** What a refused write must leave as it is: the small tables whole, the others' row counts. */
async function stored(service: TestService): Promise<string> {
  const db = service.storage.db;
  const counts = await db
    .selectNoFrom((eb) =>
      TABLES_COUNTED.map((table) => eb.selectFrom(table).select(eb.fn.countAll().as("n")).as(table)),
    )
    .executeTakeFirstOrThrow();
  const [persons, strategies, sites, keys, kycScores, kycInfos, accounts, leaderboard, platforms] = await Promise.all([
    // A key's first use of a session writes LastLoggedIn and LastIP: not the operation's doing.
    db.selectFrom("persons").selectAll().orderBy("id").execute(),
    db.selectFrom("strategies").selectAll().orderBy("id").execute(),
    db.selectFrom("sites").selectAll().orderBy("id").execute(),
    db.selectFrom("access_keys").select(["id", "revoked_at", "expires_at"]).orderBy("id").execute(),
    db.selectFrom("kyc_scores").selectAll().orderBy("id").execute(),
    db.selectFrom("kyc_infos").selectAll().orderBy("person_id").execute(),
    db.selectFrom("accounts").select(["id", "version", "cash"]).orderBy("id").execute(),
    db.selectFrom("leaderboard").selectAll().orderBy("rank").execute(),
    db.selectFrom("platforms").selectAll().orderBy("id").execute(),
  ]);
  const people = persons.map(({ last_logged_in: _, last_ip: __, ...person }) => person);
  return JSON.stringify([
    TABLES_COUNTED.map((table) => Number(counts[table])),
    people,
    strategies,
    sites,
    keys,
    kycScores,
    kycInfos,
    accounts,
    leaderboard,
    platforms,
  ]);
}

const within = (field: string, name: string) =>
  field === name || field.startsWith(`${name}.`) || field.startsWith(`${name}[`);

function checkAnswer(r: CallResult, label: string, name: string, hostile: Hostile): void {
  assert.ok(r.status < 500, `${label}: ${r.status} ${r.text.slice(0, 500)}`);
  if (r.status === 200) {
    assert.ok(!hostile.refused, `${label}: accepted: ${r.text.slice(0, 500)}`);
    return;
  }
  const status = r.json?.ResponseStatus;
  assert.equal(r.json?.Results, null, `${label}: not the envelope: ${r.text.slice(0, 500)}`);
  assert.equal(status?.ErrorCode, String(r.status), label);
  const errors = status.Errors as { ErrorCode: string; FieldName: string }[];
  assert.ok(errors.length > 0, `${label}: no error entry`);
  const codes = new Set<string>(Object.values(ERRORS).map((e) => e.code));
  for (const error of errors) assert.ok(codes.has(error.ErrorCode), `${label}: unknown code ${error.ErrorCode}`);
  if (r.status === 400)
    assert.ok(
      errors.some((e) => e.FieldName !== ""),
      `${label}: 400 naming no field: ${r.text}`,
    );
  if (hostile.refused) {
    assert.equal(r.status, 400, `${label}: ${r.text.slice(0, 500)}`);
    assert.ok(
      errors.some((e) => within(e.FieldName, name)),
      `${label}: 400 not naming ${name}: ${r.text.slice(0, 500)}`,
    );
  }
}

for (const backend of BACKENDS) {
  describe(`the bad-input battery (${backend})`, () => {
    let service: TestService;
    before(async () => {
      service = await startTestService(backend);
      // Id 1 names something of each kind where it can: the administrator, a site, a strategy.
      const made = await service.call("GEN", "POST", "/Strategies/AddStrategy", {
        body: { StrategyName: "Battery", StartingCapital: 10000 },
      });
      assert.equal(made.status, 200, made.text);
    });
    after(() => service.close());

    for (const operation of OPERATIONS) {
      test(operation.id, async () => {
        for (const server of operation.servers) await battery(service, operation, server);
      });
    }

    test("the issue's cases: a 2^63 - 1 id and a NUL in a name or a description", async () => {
      const details = await service.call("WL", "GET", "/Strategies/GetStrategyDetails", {
        query: { StrategyId: "9223372036854775807" },
      });
      assert.equal(details.status, 400);
      assert.equal(details.json.ResponseStatus.Errors[0].FieldName, "StrategyId");
      const search = await service.call("GEN", "GET", "/Strategies/SearchStrategies?StrategyName=a%00b");
      assert.equal(search.status, 400);
      assert.equal(search.json.ResponseStatus.Errors[0].FieldName, "StrategyName");
      const before = await stored(service);
      const update = await service.call("GEN", "PUT", "/Strategies/UpdateStrategy", {
        body: { StrategyId: 1, LongDescription: "first\u0000second" },
      });
      assert.equal(update.status, 400);
      assert.equal(update.json.ResponseStatus.Errors[0].FieldName, "LongDescription");
      assert.equal(await stored(service), before);
    });
  });
}

async function battery(service: TestService, operation: Operation, server: V4Server): Promise<void> {
  const given = operation.inputOn?.[server] ?? operation.input;
  const schema = operation.paginated ? paginationInput(given) : given;
  const source = inputSource(operation);
  const base = plausible(schema);
  const writes = operation.method !== "GET";
  let before = writes ? await stored(service) : "";
  for (const field of fieldsOf(schema)) {
    // A query takes no nested fields.
    if (source === "query" && field.path.length > 1 && field.path[1] !== 0) continue;
    const name = nameOf(field.path);
    // A list in a query is one value, comma-separated: its items are sent after a first one.
    const listed = source === "query" && field.path[1] === 0;
    const values = source === "query" ? queryValues(field.schema) : bodyValues(field.schema);
    for (const hostile of listed ? values.filter((v) => !Array.isArray(v.value)) : values) {
      const label = `${operation.id} on ${server}, ${name} = ${hostile.label}`;
      const input = listed
        ? { ...(base as object), [field.path[0] as string]: `1,${hostile.value}` }
        : withValue(schema, base, field.path, hostile.value);
      const r = await service.call(server, operation.method, pathOf(operation, server), {
        ...(source === "query" ? { query: asQuery(input as Record<string, unknown>) } : { body: input }),
      });
      if (operation.notAvailableOn?.includes(server)) {
        assert.equal(r.status, 501, label);
        continue;
      }
      checkAnswer(r, label, listed ? `${name.slice(0, -3)}[1]` : name, hostile);
      if (!writes) continue;
      const after = await stored(service);
      if (r.status >= 400) assert.equal(after, before, `${label}: a refused write changed storage`);
      before = after;
    }
  }
}

function asQuery(input: Record<string, unknown>): Record<string, string | string[]> {
  return Object.fromEntries(
    Object.entries(input).map(([name, value]) => [
      name,
      Array.isArray(value) ? value.map(String) : String(value as string | number | boolean),
    ]),
  );
}
