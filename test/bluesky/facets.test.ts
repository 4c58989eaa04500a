import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ByteOffsets, entitiesOf, mentionedDids } from '../../src/sources/bluesky/facets.js';
import { facetOver, link, mention, tag } from './fake-appview.js';

const noUsers = () => null;

/** The characters (code points) of `text` from start to end. */
const chars = (text: string, start: number, end: number) => [...text].slice(start, end).join('');

describe('Bluesky facets → entities', () => {
  test('an emoji before a link: byte offsets become code point offsets', () => {
    const text = '🎉 party at example.com/x';
    const e = entitiesOf(text, [facetOver(text, 'example.com/x', link('https://example.com/x'))], noUsers);
    assert.deepEqual(e.urls, [{ url: 'https://example.com/x', expandedUrl: 'https://example.com/x', displayUrl: 'example.com/x', start: 11, end: 24 }]);
    // The emoji is 4 bytes, 2 UTF-16 units, 1 character.
    assert.equal(chars(text, 11, 24), 'example.com/x');
    assert.equal(Buffer.byteLength('🎉'), 4);
  });

  test('accents, CJK, a ZWJ emoji sequence, and a mention, a tag and a link after them', () => {
    const text = 'Café 東京 👩‍💻 @alice.test #日本 https://ex.org/ü';
    const facets = [
      facetOver(text, '@alice.test', mention('did:plc:alice')),
      facetOver(text, '#日本', tag('日本')),
      facetOver(text, 'https://ex.org/ü', link('https://ex.org/%C3%BC')),
    ];
    const e = entitiesOf(text, facets, (did) => (did === 'did:plc:alice' ? '42' : null));
    const [m] = e.mentions;
    assert.deepEqual(m, { username: 'alice.test', id: '42', start: 12, end: 23 });
    assert.equal(chars(text, m!.start, m!.end), '@alice.test');
    const [h] = e.hashtags;
    assert.equal(h!.tag, '日本');
    assert.equal(chars(text, h!.start, h!.end), '#日本');
    const [u] = e.urls;
    assert.equal(chars(text, u!.start, u!.end), 'https://ex.org/ü');
    assert.equal(u!.url, 'https://ex.org/%C3%BC');
    assert.equal(u!.displayUrl, 'https://ex.org/ü');
  });

  test('entities are sorted by position; a facet with several features gives several entities', () => {
    const text = '#b then #a';
    const e = entitiesOf(text, [facetOver(text, '#a', tag('a')), facetOver(text, '#b', tag('b'))], noUsers);
    assert.deepEqual(e.hashtags.map((h) => h.tag), ['b', 'a']);
    const both = { index: { byteStart: 0, byteEnd: 2 }, features: [tag('b'), link('https://b.example')] };
    const e2 = entitiesOf(text, [both], noUsers);
    assert.equal(e2.hashtags.length, 1);
    assert.equal(e2.urls.length, 1);
  });

  test('facets that do not fall on the text are dropped; an offset inside a character widens to it', () => {
    const text = 'a🎉b';
    const bad = [
      { index: { byteStart: 0, byteEnd: 99 }, features: [tag('x')] },
      { index: { byteStart: 3, byteEnd: 3 }, features: [tag('x')] },
      { index: { byteStart: 4, byteEnd: 2 }, features: [tag('x')] },
      { index: { byteStart: -1, byteEnd: 2 }, features: [tag('x')] },
      { index: { byteStart: '0', byteEnd: 2 }, features: [tag('x')] },
      { features: [tag('x')] },
      'junk',
    ];
    assert.deepEqual(entitiesOf(text, bad, noUsers), { hashtags: [], urls: [], mentions: [] });
    // Bytes 2..3 are inside the emoji (bytes 1..4): the span is the whole emoji.
    const inside = entitiesOf(text, [{ index: { byteStart: 2, byteEnd: 3 }, features: [tag('x')] }], noUsers);
    assert.deepEqual(inside.hashtags, [{ tag: 'x', start: 1, end: 2 }]);
    assert.deepEqual(entitiesOf(text, undefined, noUsers), { hashtags: [], urls: [], mentions: [] });
  });

  test('unknown features are ignored; mentioned DIDs are listed', () => {
    const text = 'hi @bob.test';
    const facets = [facetOver(text, '@bob.test', mention('did:plc:bob')), facetOver(text, 'hi', { $type: 'app.bsky.richtext.facet#future' })];
    assert.deepEqual(mentionedDids(facets), ['did:plc:bob']);
    const e = entitiesOf(text, facets, noUsers);
    assert.deepEqual(e.mentions, [{ username: 'bob.test', id: null, start: 3, end: 12 }]);
    assert.deepEqual(e.hashtags, []);
  });

  test('ByteOffsets counts UTF-8 bytes per code point', () => {
    const o = new ByteOffsets('aé東🎉');
    assert.equal(o.byteLength, 1 + 2 + 3 + 4);
    assert.deepEqual(o.span(0, 10), { start: 0, end: 4 });
    assert.deepEqual(o.span(6, 10), { start: 3, end: 4 });
    assert.equal(o.slice(1, 3), 'é東');
  });
});
