// A response body that is already JSON (a stored tweet as it was stored, say): the metering
// wrapper sends it as is instead of serializing an object. Tests still check it against the route's
// response schema, parsed, so it cannot drift from what the schema documents.
export class JsonText {
  /** `body`: the JSON as text, or as its UTF-8 bytes (sent without encoding again). */
  constructor(readonly body: string | Buffer) {}

  get text(): string {
    return typeof this.body === 'string' ? this.body : this.body.toString('utf8');
  }
}

/** `body` as the payload type `T` it encodes, so a typed handler may return it. */
export const asPayload = <T>(body: string | Buffer): T => new JsonText(body) as unknown as T;
