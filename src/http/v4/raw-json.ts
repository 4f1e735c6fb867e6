/**
 * JSON serialized ahead of an answer. The parts of a record that change only
 * with its version are serialized once and spliced into every answer as they
 * are (what JSON.rawJSON does from Node 21 on). A RawJson may stand as a
 * Results entry of an operation marked `preSerialized`, or as the value of a
 * field of one; the answer's bytes are the ones JSON.stringify gives for the
 * same values.
 */
const RAW = Symbol("raw JSON");

export interface RawJson {
  readonly [RAW]: string | Buffer;
}

/** From this length the text is kept as bytes: an answer then copies it without encoding it again. */
const BYTES_FROM = 1024;

export function rawJson(value: unknown): RawJson {
  const text = JSON.stringify(value) ?? "null";
  return { [RAW]: text.length >= BYTES_FROM ? Buffer.from(text) : text };
}

const rawOf = (value: unknown): string | Buffer | undefined =>
  typeof value === "object" && value !== null && RAW in value ? (value as RawJson)[RAW] : undefined;

/**
 * `derive` computed once per basis (a record kept at its version by the
 * services) and kept as long as the basis lives, so it goes when the services
 * let the record go.
 */
export function oncePer<Basis extends object, Derived>(derive: (basis: Basis) => Derived): (basis: Basis) => Derived {
  const kept = new WeakMap<Basis, Derived>();
  return (basis) => {
    if (kept.has(basis)) return kept.get(basis) as Derived;
    const derived = derive(basis);
    kept.set(basis, derived);
    return derived;
  };
}

/** An entry written field by field: a plain object that does not serialize itself. */
const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" &&
  value !== null &&
  Object.getPrototypeOf(value) === Object.prototype &&
  typeof (value as { toJSON?: unknown }).toJSON !== "function";

/** `"name":` for each field name seen, so each is escaped once (names are the records' fields: few). */
const fieldTexts = new Map<string, string>();
const FIELD_TEXTS_KEPT = 10_000;

function fieldText(name: string): string {
  let text = fieldTexts.get(name);
  if (text === undefined) {
    text = `${JSON.stringify(name)}:`;
    if (fieldTexts.size < FIELD_TEXTS_KEPT) fieldTexts.set(name, text);
  }
  return text;
}

/** A field's JSON as JSON.stringify writes it (undefined: left out), the common kinds without calling it. */
function valueJson(value: unknown): string | Buffer | undefined {
  switch (typeof value) {
    case "number":
      return Number.isFinite(value) ? String(value) : "null";
    case "boolean":
      return value ? "true" : "false";
    case "object":
      return value === null ? "null" : (rawOf(value) ?? JSON.stringify(value));
    default:
      return JSON.stringify(value);
  }
}

/**
 * The JSON of an array of entries between two texts, as texts and bytes to
 * send one after the other: the texts hold everything but the RawJson bytes,
 * which stand between them as they are (so a single RawJson Buffer gives
 * [text, bytes, text]).
 */
export function jsonChunks(before: string, entries: readonly unknown[], after: string): (string | Buffer)[] {
  const chunks: (string | Buffer)[] = [];
  let text = `${before}[`;
  entries.forEach((entry, i) => {
    if (i > 0) text += ",";
    const raw = rawOf(entry);
    if (raw !== undefined) {
      // An entry serialized whole.
      if (typeof raw === "string") text += raw;
      else {
        chunks.push(text, raw);
        text = "";
      }
      return;
    }
    if (!isPlainObject(entry)) {
      text += JSON.stringify(entry) ?? "null";
      return;
    }
    text += "{";
    let first = true;
    for (const name in entry) {
      if (!Object.hasOwn(entry, name)) continue;
      const json = valueJson(entry[name]);
      if (json === undefined) continue;
      text += first ? fieldText(name) : `,${fieldText(name)}`;
      first = false;
      if (typeof json === "string") {
        text += json;
        continue;
      }
      chunks.push(text, json);
      text = "";
    }
    text += "}";
  });
  chunks.push(`${text}]${after}`);
  return chunks;
}
