// biome-ignore-all lint/suspicious/noExplicitAny: documents and answers are plain JSON

/**
 * Where a JSON value departs from a schema of an OpenAPI 3.0 document (its
 * $refs resolved in it): types, nullable, enums, required and undocumented
 * properties, anyOf and oneOf. Empty when it conforms. Enough to hold the
 * documents to the service's real answers; not a full validator.
 */
export function departures(document: any, schema: any, value: unknown, at = "$"): string[] {
  if (schema.$ref) return departures(document, resolve(document, schema.$ref), value, at);
  if (value === null) return schema.nullable ? [] : [`${at}: null, not nullable`];
  if (schema.anyOf || schema.oneOf) {
    const options = (schema.anyOf ?? schema.oneOf) as any[];
    const fits = options.filter((option) => departures(document, option, value, at).length === 0).length;
    const expected = schema.oneOf ? fits === 1 : fits >= 1;
    return expected ? [] : [`${at}: fits ${fits} of ${options.length} alternatives`];
  }
  if (schema.enum && !schema.enum.includes(value)) return [`${at}: ${JSON.stringify(value)} not in the enum`];
  switch (schema.type) {
    case "object":
      return typeof value === "object" && !Array.isArray(value)
        ? objectDepartures(document, schema, value as Record<string, unknown>, at)
        : [`${at}: not an object`];
    case "array":
      return Array.isArray(value)
        ? value.flatMap((item, i) => departures(document, schema.items, item, `${at}[${i}]`))
        : [`${at}: not an array`];
    case "integer":
      return Number.isInteger(value) ? [] : [`${at}: not an integer`];
    case "number":
      return typeof value === "number" ? [] : [`${at}: not a number`];
    case "string":
      return typeof value === "string" ? [] : [`${at}: not a string`];
    case "boolean":
      return typeof value === "boolean" ? [] : [`${at}: not a boolean`];
    default:
      return [];
  }
}

function objectDepartures(document: any, schema: any, value: Record<string, unknown>, at: string): string[] {
  const properties: Record<string, any> = schema.properties ?? {};
  const found: string[] = [];
  for (const name of schema.required ?? []) if (!(name in value)) found.push(`${at}.${name}: missing`);
  for (const [name, item] of Object.entries(value)) {
    const property =
      properties[name] ?? (typeof schema.additionalProperties === "object" && schema.additionalProperties);
    if (property) found.push(...departures(document, property, item, `${at}.${name}`));
    else if (schema.additionalProperties !== true) found.push(`${at}.${name}: not documented`);
  }
  return found;
}

function resolve(document: any, ref: string): any {
  return ref
    .replace(/^#\//, "")
    .split("/")
    .reduce((node, part) => node[part.replaceAll("~1", "/").replaceAll("~0", "~")], document);
}
