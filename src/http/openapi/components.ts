// Named schemas as components: any schema with a `title` (set where the schema is defined) is listed
// once under components.schemas by that name and replaced by a $ref wherever it appears. A union of
// constants becomes one `enum`, the form generators turn into a union type.

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Replaces named schemas in every operation by $refs; returns components.schemas with them added. */
export function hoistNamedSchemas(doc: { paths: Record<string, Record<string, unknown>>; components?: Json }): Record<string, Json> {
  const named: Record<string, Json> = { ...((doc.components?.schemas as Record<string, Json> | undefined) ?? {}) };
  const seen = new Map<string, string>();

  const visit = (schema: unknown): unknown => {
    if (!isObject(schema)) return schema;
    let s: Json = { ...schema };
    for (const key of ['properties', 'patternProperties'] as const) {
      if (isObject(s[key])) s[key] = Object.fromEntries(Object.entries(s[key]).map(([k, v]) => [k, visit(v)]));
    }
    for (const key of ['items', 'additionalProperties', 'not', 'contains'] as const) if (isObject(s[key])) s[key] = visit(s[key]);
    for (const key of ['anyOf', 'allOf', 'oneOf', 'prefixItems'] as const) if (Array.isArray(s[key])) s[key] = (s[key] as unknown[]).map(visit);
    s = constantsAsEnum(s);
    const name = typeof s.title === 'string' ? s.title : undefined;
    if (!name) return s;
    const text = JSON.stringify(s);
    const before = seen.get(name);
    if (before !== undefined && before !== text) throw new Error(`Two different schemas are titled ${name}; a title names one schema.`);
    seen.set(name, text);
    named[name] = s;
    return { $ref: `#/components/schemas/${name}` };
  };

  const visitContent = (content: unknown) => {
    if (!isObject(content)) return;
    for (const media of Object.values(content)) if (isObject(media) && media.schema) media.schema = visit(media.schema);
  };
  // Named schemas inside the components given up front (the error envelope) are hoisted too.
  for (const [name, schema] of Object.entries(named)) {
    const { title, ...rest } = schema;
    named[name] = { ...(visit(rest) as Json), ...(title !== undefined ? { title } : {}) };
  }
  for (const item of Object.values(doc.paths)) {
    for (const op of Object.values(item)) {
      if (!isObject(op)) continue;
      for (const p of (op.parameters as Json[] | undefined) ?? []) if (p.schema) p.schema = visit(p.schema);
      if (isObject(op.requestBody)) visitContent(op.requestBody.content);
      for (const r of Object.values((op.responses as Record<string, Json> | undefined) ?? {})) visitContent(r.content);
    }
  }
  return named;
}

/** `anyOf` of `{const, type}` of one type (TypeBox's union of literals) as `{type, enum}`. */
function constantsAsEnum(s: Json): Json {
  const branches = s.anyOf;
  if (!Array.isArray(branches) || branches.length === 0) return s;
  const type = (branches[0] as Json).type;
  // @fastify/swagger has already written each `const` as a one-value `enum`.
  const single = (b: unknown): b is Json =>
    isObject(b) && b.type === type && Array.isArray(b.enum) && b.enum.length === 1 && Object.keys(b).every((k) => k === 'enum' || k === 'type');
  if (!branches.every(single)) return s;
  const { anyOf: _anyOf, ...rest } = s;
  return { type, enum: branches.map((b) => (b.enum as unknown[])[0]), ...rest };
}
