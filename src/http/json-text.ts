// A response body that is already JSON (a stored tweet as it was stored, say): the metering
// wrapper sends it as is instead of serializing an object. Tests still check it against the route's
// response schema, parsed, so it cannot drift from what the schema documents.
export class JsonText {
  /**
   * `body`: the JSON as text, or as its UTF-8 bytes (sent without encoding again). `bytes`: its length
   * in UTF-8 when the maker knows it (ASCII text: its length), so that it is not counted again.
   */
  constructor(
    readonly body: string | Buffer,
    private readonly bytes?: number,
  ) {}

  get text(): string {
    return typeof this.body === 'string' ? this.body : this.body.toString('utf8');
  }

  /** Its length in UTF-8: the answer's Content-Length. */
  byteLength(): number {
    return this.bytes ?? (typeof this.body === 'string' ? Buffer.byteLength(this.body) : this.body.length);
  }
}

/** `body` as the payload type `T` it encodes, so a typed handler may return it. */
export const asPayload = <T>(body: string | Buffer, bytes?: number): T => new JsonText(body, bytes) as unknown as T;
