import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { TObject, TSchema } from "@sinclair/typebox";
import { LEGACY_COMMANDS } from "../../src/http/legacy/commands.js";
import { legacyCall } from "../helpers/legacy.js";
import { BACKENDS, type Population, populate, startTestService, type TestService } from "../helpers/service.js";
import { newStrategy } from "../helpers/trading.js";

/**
 * Hostile input for every field of every legacy command, generated from the
 * command table: each field in turn gets values of the wrong kind while the
 * others hold harmless ones. Each answers HTTP 200, ok 0, a title of input
 * refused and a message naming the field; never 500, never a write.
 */

const REFUSED_INPUT_TITLES = ["Invalid request", "Invalid value", "Invalid signal", "Unknown commission plan"];
const DEPTH = 10_000;

/** A path into a request: property names and list indexes. */
type Path = readonly (string | number)[];

const nameOf = (path: Path) =>
  path.reduce<string>(
    (name, step) => (typeof step === "number" ? `${name}[${step}]` : name ? `${name}.${step}` : step),
    "",
  );

/** Every field of a schema, nested objects' and the first list item's fields too. */
function* fieldsOf(schema: TSchema, path: Path = []): Generator<{ path: Path; schema: TSchema }> {
  if (schema.type === "object") {
    for (const [name, property] of Object.entries((schema as TObject).properties)) {
      yield { path: [...path, name], schema: property };
      yield* fieldsOf(property, [...path, name]);
    }
  } else if (schema.type === "array") {
    yield* fieldsOf(schema.items as TSchema, [...path, 0]);
  }
}

/** A value every building block of the legacy schemas takes: "1", or a real system's id for ids. */
function harmless(schema: TSchema, systemid: number): unknown {
  if (schema.type === "integer") return systemid;
  if (schema.type === "array") return [harmless(schema.items as TSchema, systemid)];
  if (schema.type === "object") {
    const object = schema as TObject;
    return Object.fromEntries(
      (object.required ?? []).map((name) => [name, harmless(object.properties[name] as TSchema, systemid)]),
    );
  }
  return "1";
}

/** The JSON text of a request: harmless fields, and `hostile` (JSON text) at `path`. */
function requestWith(schema: TObject, path: Path, hostile: string, systemid: number): string {
  const marker = "\u0001hostile\u0001";
  const request = harmless(schema, systemid) as Record<string | number, unknown>;
  let at: Record<string | number, unknown> = request;
  let within: TSchema = schema;
  for (const [i, step] of path.entries()) {
    within = typeof step === "number" ? (within.items as TSchema) : ((within as TObject).properties[step] as TSchema);
    if (i === path.length - 1) at[step] = marker;
    else {
      at[step] ??= harmless(within, systemid);
      at = at[step] as Record<string | number, unknown>;
    }
  }
  return JSON.stringify(request).replace(JSON.stringify(marker), hostile);
}

const deep = (open: string, close: string, inner: string) => open.repeat(DEPTH) + inner + close.repeat(DEPTH);

/** Values no field takes; and, for ids, numbers past 2^53 − 1 and other numbers no id is. */
const EVERY_FIELD = [
  '{"toString":1}',
  '{"valueOf":1,"toString":1}',
  '["1"]',
  '[[["x"]]]',
  '"a\\u0000b"',
  '"\\u0000"',
  '"x\\u001by"',
  '"\\u0085"',
  "true",
  deep('{"a":', "}", "1"),
  deep("[", "]", "1"),
  deep('{"conditionalUponSignal":', "}", "{}"),
];
const TEXT_ONLY = [`"${"x".repeat(10_001)}"`];
const IDS_ONLY = [
  "9007199254740992",
  "9223372036854775808",
  '"9223372036854775808"',
  '"18446744073709551616"',
  "-1",
  "0",
  "1.5",
  '"1\\u0000"',
  '""',
];
const OBJECTS_ONLY = ['"text"', "12", "[]"];
const LISTS_ONLY = ['"text"', "12", "{}", `[${Array.from({ length: 501 }, () => "{}").join(",")}]`];

function hostileFor(schema: TSchema): readonly string[] {
  switch (schema.type) {
    case "integer":
      return [...EVERY_FIELD, ...IDS_ONLY];
    case "string":
      return [...EVERY_FIELD, ...TEXT_ONLY];
    case "object":
      return [...EVERY_FIELD, ...OBJECTS_ONLY];
    case "array":
      return [...EVERY_FIELD.filter((value) => !value.startsWith("[")), ...LISTS_ONLY];
    default:
      // An amount takes a number or the characters of one.
      if (schema.anyOf !== undefined) return [...EVERY_FIELD, ...TEXT_ONLY, '"text"', "[]"];
      // The end of a nesting takes nothing but null.
      return [...EVERY_FIELD, ...OBJECTS_ONLY];
  }
}

for (const backend of BACKENDS) {
  describe(`legacy v3 input (${backend})`, () => {
    let service: TestService;
    let population: Population;
    let key: string;
    let systemid: number;
    before(async () => {
      service = await startTestService(backend, { marketFeed: { kind: "manual" } });
      population = await populate(service);
      key = population.keys.personA;
      systemid = await newStrategy(service, key);
    });
    after(() => service.close());

    const raw = (command: string, rawBody: string) =>
      service.call("LEGACY", "POST", `/world/apiv3/${command}`, { key: null, rawBody });

    test("the issue's cases: an object where text is expected, ids past 2^53 − 1, NUL in a signal id", async () => {
      const roster = await legacyCall(service, "getSystemRoster", { filter: { toString: 1 } }, key);
      assert.equal(roster.ok, 0);
      assert.equal(roster.error.title, "Invalid value");
      assert.match(roster.error.message, /^filter must be text/);
      const huge = await raw("getSystemDetails", `{"apikey":"${key}","systemid":9223372036854775808}`);
      assert.deepEqual([huge.status, huge.json.ok, huge.json.error.title], [200, 0, "Invalid request"]);
      assert.match(huge.json.error.message, /^systemid must be a whole number from 1 to 9007199254740991/);
      const nul = await legacyCall(service, "cancelSignal", { systemid, signalid: "a\u0000" }, key);
      assert.deepEqual([nul.ok, nul.error.title], [0, "Invalid request"]);
      assert.match(nul.error.message, /^signalid must be text .* without control characters/);
    });

    test("a conditionalUponSignal nested thousands deep is refused, naming where the nesting must end", async () => {
      const signal = '{"action":"BTO","quant":1,"symbol":"AAPL","conditionalUponSignal":';
      const body = `{"apikey":"${key}","systemid":${systemid},"signal":${deep(signal, "}", "{}")}}`;
      const r = await raw("submitSignal", body);
      assert.deepEqual([r.status, r.json.ok, r.json.error.title], [200, 0, "Invalid signal"]);
      assert.match(r.json.error.message, /^signal\.conditionalUponSignal\.conditionalUponSignal cannot hold/);
    });

    test("free text keeps its line breaks and tabs; other text refuses them", async () => {
      const made = await legacyCall(
        service,
        "createNewSystem",
        { name: "Lines", startingcapital: 10_000, longDescription: "One line.\n\tAnother." },
        key,
      );
      assert.equal(made.ok, 1, JSON.stringify(made));
      const refused = await legacyCall(
        service,
        "createNewSystem",
        { name: "Two\nLines", startingcapital: 10_000 },
        key,
      );
      assert.deepEqual([refused.ok, refused.error.title], [0, "Invalid value"]);
      assert.match(refused.error.message, /^name must be text/);
    });

    test("every field of every command refuses hostile values with ok 0, naming the field", async () => {
      const systemsBefore = (await legacyCall(service, "listAllSystems", {}, key)).response;
      let sent = 0;
      for (const command of LEGACY_COMMANDS) {
        for (const field of fieldsOf(command.input)) {
          const name = nameOf(field.path);
          for (const hostile of hostileFor(field.schema)) {
            const body = requestWith(command.input, field.path, hostile, systemid).replace("{", `{"apikey":"${key}",`);
            const r = await raw(command.name, body);
            const what = `${command.name} ${name} = ${hostile.slice(0, 40)}`;
            assert.equal(r.status, 200, `${what}: ${r.text.slice(0, 300)}`);
            assert.equal(r.json.ok, 0, `${what}: ${r.text.slice(0, 300)}`);
            assert.ok(REFUSED_INPUT_TITLES.includes(r.json.error.title), `${what}: ${r.json.error.title}`);
            assert.ok(r.json.error.message.includes(name), `${what}: ${r.json.error.message}`);
            sent += 1;
          }
        }
      }
      assert.ok(sent > 1000, `${sent} requests`);
      assert.deepEqual(
        (await legacyCall(service, "listAllSystems", {}, key)).response,
        systemsBefore,
        "nothing written",
      );
      assert.deepEqual((await legacyCall(service, "retrieveSignalsAll", { systemid }, key)).response, []);
    });
  });
}
