// Tweets of the demo network, regenerated from their slot (author, time, sequence).
//
// Each slot has an intended kind drawn from its hash. Replies, quotes and retweets point at an
// earlier tweet of an active account (active accounts post in every hour bucket, so a target is
// found in O(1)): a bucket an hour or more before the tweet is picked and a tweet of a suitable
// kind is looked for there. Replies point at a thread root (original or quote) or, for "reply2",
// at a reply, whose own root then becomes the conversation id. Retweets only point at originals, so
// their "RT @user: ..." text is the original's text. A tweet whose target search fails is an
// original. No search recurses more than one level.
import type { Tweet } from '../../domain/models.js';
import { encodeTweetId, tweetLow } from './ids.js';
import { HOUR, iso, MEDIA_BASE, type Net, SHORT_LINK_BASE, TWEET_URL_BASE } from './network.js';
import { below, hash4, rehash, Rng, Salt, unit } from './prng.js';
import { engagementOf, tweetMetrics } from './retweets.js';
import { bucketCount, type Slot, slotTime } from './schedule.js';
import { LANGS, type Lang, LINK_SITES, PACKS, sentence, shortCode, TextBuilder } from './text.js';
import { createdMsOf, isActive, poolSize, type UserCore, userCore, usernameOf } from './users.js';

export type IntendedKind = 'original' | 'reply' | 'reply2' | 'quote' | 'retweet';
export type TweetKind = 'original' | 'reply' | 'quote' | 'retweet';
type MediaItem = Tweet['media'][number];

export function tweetHash(net: Net, s: Slot): number {
  return hash4(net.seed, Salt.tweet, tweetLow(s.user, s.seq), s.ts);
}

export function slotId(s: Slot): string {
  return encodeTweetId(s.ts, tweetLow(s.user, s.seq));
}

export function intendedKind(th: number): IntendedKind {
  const u = unit(rehash(th, 1));
  return u < 0.55 ? 'original' : u < 0.71 ? 'reply' : u < 0.78 ? 'reply2' : u < 0.87 ? 'quote' : 'retweet';
}

const ROOT_KINDS = (k: IntendedKind): boolean => k === 'original' || k === 'quote';
const REPLY_KINDS = (k: IntendedKind): boolean => k === 'reply';
const QUOTABLE_KINDS = (k: IntendedKind): boolean => k !== 'retweet';
const ORIGINAL_KINDS = (k: IntendedKind): boolean => k === 'original';

/** An earlier tweet of an active account whose intended kind passes `accept`, or undefined. */
function findTarget(net: Net, s: Slot, th: number, accept: (k: IntendedKind) => boolean): Slot | undefined {
  const r = rehash(th, 2);
  const delay = 2 * 60_000 + Math.floor(Math.pow(unit(rehash(r, 1)), 2) * 36 * HOUR);
  const hb = Math.floor((s.ts - delay) / HOUR) - 1;
  if (hb < 0) return undefined;
  const bucketStartMs = net.epochMs + hb * HOUR;
  let j = -1;
  if (unit(rehash(r, 2)) < 0.2 && isActive(net, s.user) && createdMsOf(net, s.user) <= bucketStartMs) {
    j = s.user; // a self-thread
  } else {
    const pool = poolSize(net, bucketStartMs);
    if (pool === 0) return undefined;
    const start = below(rehash(r, 3), pool);
    for (let t = 0; t < 64 && t < pool; t++) {
      const c = (start + t) % pool;
      if (c !== s.user && isActive(net, c)) {
        j = c;
        break;
      }
    }
    if (j < 0) return undefined;
  }
  const target = userCore(net, j);
  for (let b = 0; b < 3; b++) {
    const h = hb - b;
    if (net.epochMs + h * HOUR < target.createdMs) return undefined;
    const count = bucketCount(net, target, h);
    const s0 = below(rehash(r, 4 + b), count);
    for (let i = 0; i < count; i++) {
      const seq = (s0 + i) % count;
      const slot = { user: j, ts: slotTime(net, j, h, seq, count), seq };
      if (accept(intendedKind(tweetHash(net, slot)))) return slot;
    }
  }
  return undefined;
}

export interface Refs {
  kind: TweetKind;
  /** replied-to, quoted or retweeted tweet */
  target?: Slot;
  /** thread root, for replies */
  root?: Slot;
}

export function resolveRefs(net: Net, s: Slot, th: number): Refs {
  const kind = intendedKind(th);
  switch (kind) {
    case 'original':
      return { kind };
    case 'reply': {
      const target = findTarget(net, s, th, ROOT_KINDS);
      return target ? { kind: 'reply', target, root: target } : { kind: 'original' };
    }
    case 'reply2': {
      const parent = findTarget(net, s, th, REPLY_KINDS);
      if (!parent) return { kind: 'original' };
      // The parent's intended kind is 'reply': its own target (if found) is the thread root.
      const parentTarget = findTarget(net, parent, tweetHash(net, parent), ROOT_KINDS);
      return { kind: 'reply', target: parent, root: parentTarget ?? parent };
    }
    case 'quote': {
      const target = findTarget(net, s, th, QUOTABLE_KINDS);
      return target ? { kind: 'quote', target } : { kind: 'original' };
    }
    case 'retweet': {
      const target = findTarget(net, s, th, ORIGINAL_KINDS);
      return target ? { kind: 'retweet', target } : { kind: 'original' };
    }
  }
}

const PHOTO_SIZES: ReadonlyArray<readonly [number, number]> = [
  [1200, 800],
  [1080, 1080],
  [800, 1200],
  [1600, 900],
];

function mediaOf(rng: Rng, tweetId: string): MediaItem[] {
  if (!rng.chance(0.18)) return [];
  const r = rng.float();
  if (r < 0.7) {
    const n = 1 + rng.int(rng.chance(0.7) ? 1 : 4);
    const out: MediaItem[] = [];
    for (let k = 1; k <= n; k++) {
      const [width, height] = rng.pick(PHOTO_SIZES);
      out.push({
        id: `${tweetId}-${k}`,
        type: 'photo',
        url: `${MEDIA_BASE}/${tweetId}-${k}.jpg`,
        previewImageUrl: null,
        width,
        height,
        altText: rng.chance(0.4) ? 'A generated placeholder image (simulated).' : null,
      });
    }
    return out;
  }
  const type = r < 0.9 ? 'video' : 'animated_gif';
  const [width, height] = rng.chance(0.7) ? [1280, 720] : [720, 1280];
  return [
    {
      id: `${tweetId}-1`,
      type,
      url: `${MEDIA_BASE}/${tweetId}-1.mp4`,
      previewImageUrl: `${MEDIA_BASE}/${tweetId}-1-preview.jpg`,
      width,
      height,
      altText: null,
    },
  ];
}

interface Body {
  tb: TextBuilder;
  lang: Lang;
  media: MediaItem[];
}

/** The own content of a tweet (no reply or RT prefix): text with entities, language, media. */
function bodyOf(net: Net, s: Slot, th: number, author: UserCore, tweetId: string): Body {
  const rng = new Rng(rehash(th, 100));
  const lang = rng.chance(0.85) ? author.lang : rng.pick(LANGS);
  const pack = PACKS[lang];
  const pool = poolSize(net, net.epochMs + s.ts);
  const someone = (): number => (pool > 0 ? rng.int(pool) : author.index);
  const tb = new TextBuilder();
  if (rng.chance(0.05)) {
    const m = someone();
    tb.mention(usernameOf(net, m), net.userIds.encode(m)).plain(' ');
  }
  tb.plain(sentence(rng, lang));
  if (rng.chance(0.3)) tb.plain(' ').plain(sentence(rng, lang));
  if (rng.chance(0.15)) {
    const site = rng.pick(LINK_SITES);
    tb.plain(` ${rng.pick(pack.linkIntros)} `).url(`${SHORT_LINK_BASE}/${shortCode(rng, 10)}`, `https://${site}/${shortCode(rng, 8).toLowerCase()}`);
  }
  if (rng.chance(0.35)) {
    const n = rng.chance(0.7) ? 1 : 2;
    for (let i = 0; i < n; i++) tb.plain(' ').hashtag(rng.pick(pack.tags));
  }
  if (rng.chance(0.08)) {
    const m = someone();
    tb.plain(' cc ').mention(usernameOf(net, m), net.userIds.encode(m));
  }
  return { tb, lang, media: mediaOf(rng, tweetId) };
}

/** The tweet at slot s as seen at nowRel. The caller has checked that it exists and may be shown. */
export function buildTweet(net: Net, s: Slot, author: UserCore, nowRel: number): Tweet {
  const th = tweetHash(net, s);
  const id = slotId(s);
  const refs = resolveRefs(net, s, th);
  let tb: TextBuilder;
  let lang: Lang;
  let media: MediaItem[];
  const target = refs.target;
  if (refs.kind === 'retweet' && target) {
    const original = userCore(net, target.user);
    const body = bodyOf(net, target, tweetHash(net, target), original, slotId(target));
    tb = new TextBuilder().plain('RT ').mention(usernameOf(net, target.user), original.id).plain(': ').append(body.tb);
    lang = body.lang;
    media = [];
  } else {
    const body = bodyOf(net, s, th, author, id);
    lang = body.lang;
    media = body.media;
    tb = body.tb;
    if (refs.kind === 'reply' && target) {
      tb = new TextBuilder().mention(usernameOf(net, target.user), net.userIds.encode(target.user)).plain(' ').append(body.tb);
    }
  }
  const targetId = target ? slotId(target) : null;
  return {
    id,
    text: tb.text,
    authorId: author.id,
    createdAt: iso(net.epochMs + s.ts),
    url: `${TWEET_URL_BASE}/${usernameOf(net, author.index)}/status/${id}`,
    language: lang,
    conversationId: refs.kind === 'reply' && refs.root ? slotId(refs.root) : id,
    inReplyTo: refs.kind === 'reply' && target && targetId ? { tweetId: targetId, userId: net.userIds.encode(target.user) } : null,
    metrics: tweetMetrics(engagementOf(net, s, author, th), nowRel),
    entities: { hashtags: tb.hashtags, urls: tb.urls, mentions: tb.mentions },
    media,
    quotedTweetId: refs.kind === 'quote' ? targetId : null,
    retweetedTweetId: refs.kind === 'retweet' ? targetId : null,
  };
}
