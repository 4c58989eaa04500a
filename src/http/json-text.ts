// A response body that is already JSON text (a stored tweet as it was stored, say): the metering
// wrapper sends it as is instead of serializing an object. Tests still check it against the route's
// response schema, parsed, so it cannot drift from what the schema documents.
export class JsonText {
  constructor(readonly text: string) {}
}

/** `text` as the payload type `T` it encodes, so a typed handler may return it. */
export const asPayload = <T>(text: string): T => new JsonText(text) as unknown as T;
