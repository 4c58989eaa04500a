// Bluesky rich-text facets → the Tweet's entities.
//
// A facet marks a span of the post's text by UTF-8 BYTE offsets (byteStart inclusive, byteEnd
// exclusive) and carries features: #link {uri}, #mention {did}, #tag {tag}. Entities mark spans by
// CHARACTER offsets, counted in Unicode code points as X API v2 does (an emoji is one character,
// although it is two UTF-16 units and four UTF-8 bytes). A facet whose bytes do not fall on the text
// (out of range, empty, reversed) is dropped; an offset inside a character widens to the whole character.
import type { Tweet } from '../../domain/models.js';
import { asArray, asObject, asString } from './json.js';

type Entities = Tweet['entities'];

/** Byte offset → code point offset, for one text. */
export class ByteOffsets {
  /** starts[i] = the UTF-8 byte offset where code point i begins; the last entry is the total length. */
  private readonly starts: number[] = [];
  readonly chars: string[] = [];

  constructor(text: string) {
    let byte = 0;
    for (const ch of text) {
      this.starts.push(byte);
      this.chars.push(ch);
      const cp = ch.codePointAt(0)!;
      byte += cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    }
    this.starts.push(byte);
  }

  get byteLength(): number {
    return this.starts[this.starts.length - 1]!;
  }

  /** The code point index of the first character that starts at or after `byte`. */
  private ceil(byte: number): number {
    let lo = 0;
    let hi = this.starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.starts[mid]! < byte) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** The character span [start, end) covering bytes [byteStart, byteEnd); undefined if they do not fall on the text. */
  span(byteStart: unknown, byteEnd: unknown): { start: number; end: number } | undefined {
    if (!Number.isInteger(byteStart) || !Number.isInteger(byteEnd)) return undefined;
    const [b0, b1] = [byteStart as number, byteEnd as number];
    if (b0 < 0 || b1 <= b0 || b1 > this.byteLength) return undefined;
    // A start inside a character backs up to that character; an end inside one moves past it.
    const start = this.starts[this.ceil(b0)] === b0 ? this.ceil(b0) : this.ceil(b0) - 1;
    const end = this.ceil(b1);
    return end > start ? { start, end } : undefined;
  }

  slice(start: number, end: number): string {
    return this.chars.slice(start, end).join('');
  }
}

const LINK = 'app.bsky.richtext.facet#link';
const MENTION = 'app.bsky.richtext.facet#mention';
const TAG = 'app.bsky.richtext.facet#tag';

/**
 * The entities of a post's text. `userId` gives the numeric id of a mentioned DID (null when it has
 * none). Entities come out in text order, like X's.
 */
export function entitiesOf(text: string, facets: unknown, userId: (did: string) => string | null): Entities {
  const hashtags: Entities['hashtags'] = [];
  const urls: Entities['urls'] = [];
  const mentions: Entities['mentions'] = [];
  const list = asArray(facets);
  if (list.length === 0) return { hashtags, urls, mentions };
  const offsets = new ByteOffsets(text);
  for (const raw of list) {
    const facet = asObject(raw);
    const index = asObject(facet?.index);
    const span = offsets.span(index?.byteStart, index?.byteEnd);
    if (!facet || !span) continue;
    const shown = offsets.slice(span.start, span.end);
    for (const rawFeature of asArray(facet.features)) {
      const feature = asObject(rawFeature);
      const type = asString(feature?.$type);
      if (type === LINK) {
        const uri = asString(feature?.uri);
        if (uri) urls.push({ url: uri, expandedUrl: uri, displayUrl: shown, ...span });
      } else if (type === MENTION) {
        const did = asString(feature?.did);
        if (did) mentions.push({ username: shown.replace(/^@/, ''), id: userId(did), ...span });
      } else if (type === TAG) {
        const tag = asString(feature?.tag);
        if (tag) hashtags.push({ tag: tag.replace(/^#/, ''), ...span });
      }
    }
  }
  const byStart = (a: { start: number }, b: { start: number }) => a.start - b.start;
  return { hashtags: hashtags.sort(byStart), urls: urls.sort(byStart), mentions: mentions.sort(byStart) };
}

/** DIDs mentioned in the facets (they need user ids before mapping). */
export function mentionedDids(facets: unknown): string[] {
  const out: string[] = [];
  for (const raw of asArray(facets)) {
    for (const rawFeature of asArray(asObject(raw)?.features)) {
      const feature = asObject(rawFeature);
      const did = asString(feature?.did);
      if (asString(feature?.$type) === MENTION && did) out.push(did);
    }
  }
  return out;
}
