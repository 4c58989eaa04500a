// AppView views → the normalized models. Mapping is two steps: collect every post URI and DID a batch
// of views needs an id for (Refs), assign them in one go (IdMap), then map each view synchronously.
//
// What maps (and what does not) is described in README terms in the module comment of bluesky-source.ts.
import type { AppBskyActorDefs, AppBskyFeedDefs } from '@atproto/api';
import type { SocialProfile, Tweet } from '../../domain/models.js';
import { entitiesOf, mentionedDids } from './facets.js';
import type { IdMap } from './id-map.js';
import { isPostUri, parseAtUri, tidMs } from './ids.js';
import { asArray, asObject, asString, badResponse, count, instantMs, nonEmpty, optionalCount, type JsonObject } from './json.js';

export type ProfileLike = AppBskyActorDefs.ProfileViewDetailed | AppBskyActorDefs.ProfileView | AppBskyActorDefs.ProfileViewBasic;
type PostView = AppBskyFeedDefs.PostView;
type MediaItem = Tweet['media'][number];

/** The label an account puts on itself to be hidden from logged-out readers: mapped to `protected`. */
export const NO_UNAUTHENTICATED = '!no-unauthenticated';

export function isNoUnauthenticated(labels: ReadonlyArray<{ val: string }> | undefined): boolean {
  return labels?.some((l) => l.val === NO_UNAUTHENTICATED) ?? false;
}

/**
 * When a post sorts: the earlier of its record's createdAt (set by the author's client, may be
 * back- or future-dated) and when the AppView indexed it. The AppView orders feeds by this instant,
 * so it is also the Tweet's createdAt: the timeline's "newest first by createdAt" is then the AppView's order.
 */
export function postSortMs(record: unknown, indexedAt: unknown): number | undefined {
  const created = instantMs(asObject(record)?.createdAt);
  const indexed = instantMs(indexedAt);
  if (created === undefined) return indexed;
  return indexed === undefined ? created : Math.min(created, indexed);
}

/** Ids of the URIs and DIDs collected by Refs.resolve. */
export interface Ids {
  post(uri: string): string;
  user(did: string): string;
}

interface PendingPost {
  cid?: string | undefined;
  atMs?: number | undefined;
  fallbackMs?: number | undefined;
}

/** The post URIs and DIDs a batch of views needs ids for, with what is known of each post's time. */
export class Refs {
  private readonly posts = new Map<string, PendingPost>();
  private readonly users = new Set<string>();

  user(did: string): this {
    this.users.add(did);
    return this;
  }

  /** A post by URI; `atMs` is its own sort time when known, `fallbackMs` the time of a post that refers to it. */
  post(uri: string, cid?: string, atMs?: number, fallbackMs?: number): this {
    if (!isPostUri(uri)) return this;
    const p = this.posts.get(uri) ?? {};
    p.cid ??= cid;
    p.atMs ??= atMs;
    p.fallbackMs = fallbackMs === undefined ? p.fallbackMs : Math.min(fallbackMs, p.fallbackMs ?? fallbackMs);
    this.posts.set(uri, p);
    this.users.add(parseAtUri(uri)!.did);
    return this;
  }

  profile(view: ProfileLike): this {
    this.user(view.did);
    const pinned = 'pinnedPost' in view ? view.pinnedPost : undefined;
    if (pinned) this.post(pinned.uri, pinned.cid);
    return this;
  }

  /** A post view: the post itself, its author, and every post and account it refers to. */
  postView(view: PostView): this {
    const own = postSortMs(view.record, view.indexedAt);
    this.post(view.uri, view.cid, own).user(view.author.did);
    const record = asObject(view.record);
    const reply = asObject(record?.reply);
    for (const ref of [asObject(reply?.parent), asObject(reply?.root)]) {
      const uri = asString(ref?.uri);
      if (uri) this.post(uri, asString(ref?.cid), undefined, own);
    }
    const quoted = quotedRef(record?.embed, view.embed);
    if (quoted) this.post(quoted.uri, quoted.cid, undefined, own);
    const quotedView = viewRecordOf(view.embed);
    if (quotedView) this.post(quotedView.uri, quotedView.cid, postSortMs(quotedView.value, quotedView.indexedAt));
    for (const did of mentionedDids(record?.facets)) this.user(did);
    return this;
  }

  /** A feed item: its post, and the views of the post's parent and root when the AppView sent them. */
  feedItem(item: AppBskyFeedDefs.FeedViewPost): this {
    this.postView(item.post);
    for (const ref of [asObject(item.reply?.parent), asObject(item.reply?.root)]) {
      const uri = asString(ref?.uri);
      const cid = asString(ref?.cid);
      if (uri && cid && ref?.record !== undefined) this.post(uri, cid, postSortMs(ref.record, ref.indexedAt));
    }
    return this;
  }

  async resolve(idMap: IdMap, now: number = Date.now()): Promise<Ids> {
    const posts = [...this.posts].map(([uri, p]) => ({
      uri,
      cid: p.cid,
      atMs: p.atMs ?? tidMs(parseAtUri(uri)!.rkey) ?? p.fallbackMs ?? now,
    }));
    const [postIds, userIds] = await Promise.all([
      posts.length > 0 ? idMap.postIds(posts) : new Map<string, string>(),
      this.users.size > 0 ? idMap.userIds([...this.users]) : new Map<string, string>(),
    ]);
    const get = (map: Map<string, string>, key: string, what: string): string => {
      const id = map.get(key);
      if (id === undefined) throw new Error(`No id was collected for ${what} ${key}.`);
      return id;
    };
    return { post: (uri) => get(postIds, uri, 'post'), user: (did) => get(userIds, did, 'account') };
  }
}

/** The quoted post of a record's embed (app.bsky.embed.record, or recordWithMedia), else of its view. */
function quotedRef(recordEmbed: unknown, viewEmbed: unknown): { uri: string; cid?: string } | undefined {
  const embed = asObject(recordEmbed);
  const type = asString(embed?.$type);
  const ref =
    type === 'app.bsky.embed.record' ? asObject(embed?.record) : type === 'app.bsky.embed.recordWithMedia' ? asObject(asObject(embed?.record)?.record) : undefined;
  const uri = asString(ref?.uri) ?? asString(viewRecordOf(viewEmbed)?.uri);
  if (!uri || !isPostUri(uri)) return undefined;
  const cid = asString(ref?.cid);
  return cid ? { uri, cid } : { uri };
}

interface ViewRecordLike {
  uri: string;
  cid?: string;
  value?: unknown;
  indexedAt?: unknown;
}

/** The embedded record of an embed view (record#view, or recordWithMedia#view) when it is a post. */
function viewRecordOf(viewEmbed: unknown): ViewRecordLike | undefined {
  const embed = asObject(viewEmbed);
  const type = asString(embed?.$type);
  const recordView =
    type === 'app.bsky.embed.record#view' ? asObject(embed?.record) : type === 'app.bsky.embed.recordWithMedia#view' ? asObject(asObject(embed?.record)?.record) : undefined;
  const uri = asString(recordView?.uri);
  if (!recordView || !uri || !isPostUri(uri)) return undefined;
  const cid = asString(recordView.cid);
  return { uri, ...(cid ? { cid } : {}), value: recordView.value, indexedAt: recordView.indexedAt };
}

/** The CID of a blob, in its JSON form ({ ref: { $link } }) or as parsed by the client (ref is a CID object). */
function blobCid(blob: unknown): string | undefined {
  const ref = asObject(blob)?.ref;
  const link = asString(asObject(ref)?.$link);
  if (link) return link;
  const text = ref === undefined || ref === null ? '' : String(ref);
  return /^b[a-z2-7]{20,}$/.test(text) ? text : undefined;
}

function mediaOf(viewEmbed: unknown, recordEmbed: unknown, postId: string): MediaItem[] {
  let embed = asObject(viewEmbed);
  let recordMedia = asObject(recordEmbed);
  if (asString(embed?.$type) === 'app.bsky.embed.recordWithMedia#view') {
    embed = asObject(embed?.media);
    recordMedia = asObject(recordMedia?.media);
  }
  const type = asString(embed?.$type);
  if (type === 'app.bsky.embed.images#view') {
    const recordImages = asArray(recordMedia?.images);
    return asArray(embed?.images).map((raw, i): MediaItem => {
      const image = asObject(raw) ?? {};
      const ratio = asObject(image.aspectRatio) ?? asObject(asObject(recordImages[i])?.aspectRatio);
      const fullsize = nonEmpty(image.fullsize);
      return {
        id: blobCid(asObject(recordImages[i])?.image) ?? lastSegment(fullsize) ?? `${postId}_${i + 1}`,
        type: 'photo',
        url: fullsize,
        previewImageUrl: nonEmpty(image.thumb),
        width: optionalCount(ratio?.width),
        height: optionalCount(ratio?.height),
        altText: nonEmpty(image.alt),
      };
    });
  }
  if (type === 'app.bsky.embed.video#view' && embed) {
    const ratio = asObject(embed.aspectRatio);
    return [
      {
        id: nonEmpty(embed.cid) ?? `${postId}_1`,
        type: 'video',
        url: nonEmpty(embed.playlist),
        previewImageUrl: nonEmpty(embed.thumbnail),
        width: optionalCount(ratio?.width),
        height: optionalCount(ratio?.height),
        altText: nonEmpty(embed.alt),
      },
    ];
  }
  return []; // external link cards and embedded records are not media
}

/** The blob CID in a CDN URL like …/plain/did:plc:…/bafkrei…@jpeg. */
function lastSegment(url: string | null): string | null {
  const last = url?.split('/').pop()?.split('@')[0];
  return last && /^b[a-z2-7]{20,}$/.test(last) ? last : null;
}

const HANDLE = /^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]([a-z0-9-]{0,61}[a-z0-9])?$/i;

/** Whether `handle` is a syntactically valid Bluesky handle (a domain name). */
export function isHandle(handle: string): boolean {
  return handle.length <= 253 && HANDLE.test(handle);
}

/** The post's web address; by DID when the author's handle is not valid (e.g. "handle.invalid"). */
export function postUrl(view: PostView): string {
  const rkey = parseAtUri(view.uri)?.rkey ?? '';
  const who = view.author.handle && view.author.handle !== 'handle.invalid' && isHandle(view.author.handle) ? view.author.handle : view.author.did;
  return `https://bsky.app/profile/${who}/post/${rkey}`;
}

export function mapPost(view: PostView, ids: Ids): Tweet {
  const record: JsonObject = asObject(view.record) ?? badResponse(`post ${view.uri} has no record`);
  const id = ids.post(view.uri);
  const sortMs = postSortMs(record, view.indexedAt) ?? badResponse(`post ${view.uri} has no timestamp`);
  const text = asString(record.text) ?? '';
  const reply = asObject(record.reply);
  const parentUri = asString(asObject(reply?.parent)?.uri);
  const rootUri = asString(asObject(reply?.root)?.uri);
  const parent = parentUri ? parseAtUri(parentUri) : undefined;
  const quoted = quotedRef(record.embed, view.embed);
  return {
    id,
    text,
    authorId: ids.user(view.author.did),
    createdAt: new Date(sortMs).toISOString(),
    url: postUrl(view),
    language: nonEmpty(asArray(record.langs)[0]),
    conversationId: rootUri && isPostUri(rootUri) ? ids.post(rootUri) : id,
    inReplyTo: parentUri && parent && isPostUri(parentUri) ? { tweetId: ids.post(parentUri), userId: ids.user(parent.did) } : null,
    metrics: {
      retweets: count(view.repostCount),
      replies: count(view.replyCount),
      likes: count(view.likeCount),
      quotes: count(view.quoteCount),
      views: 0, // Bluesky does not count views
      bookmarks: count(view.bookmarkCount),
    },
    entities: entitiesOf(text, record.facets, (did) => ids.user(did)),
    media: mediaOf(view.embed, record.embed, id),
    quotedTweetId: quoted ? ids.post(quoted.uri) : null,
    retweetedTweetId: null, // reposts are not in timelines (see bluesky-source.ts)
  };
}

/**
 * Bluesky's verification: an account verified by a trusted verifier is 'blue' (the blue check); a
 * trusted verifier itself (an organisation that verifies others) is 'business'; everyone else 'none'.
 */
function verification(view: ProfileLike): { verified: boolean; verifiedType: SocialProfile['verifiedType'] } {
  const v = view.verification;
  if (v?.trustedVerifierStatus === 'valid') return { verified: true, verifiedType: 'business' };
  if (v?.verifiedStatus === 'valid') return { verified: true, verifiedType: 'blue' };
  return { verified: false, verifiedType: 'none' };
}

export function mapProfile(view: ProfileLike, ids: Ids): SocialProfile {
  const handle = view.handle;
  if (!handle) return badResponse(`account ${view.did} has no handle`);
  const detailed = view as Partial<AppBskyActorDefs.ProfileViewDetailed>;
  const created = instantMs(view.createdAt) ?? instantMs(detailed.indexedAt) ?? 0;
  const pinned = detailed.pinnedPost?.uri;
  return {
    id: ids.user(view.did),
    username: handle.toLowerCase(),
    displayUsername: handle,
    name: nonEmpty(view.displayName) ?? handle,
    description: asString(detailed.description) ?? '',
    location: '', // Bluesky profiles have no location
    url: nonEmpty(detailed.website),
    profileImageUrl: nonEmpty(view.avatar),
    bannerUrl: nonEmpty(detailed.banner),
    createdAt: new Date(created).toISOString(),
    ...verification(view),
    protected: isNoUnauthenticated(view.labels),
    metrics: {
      followers: count(detailed.followersCount),
      following: count(detailed.followsCount),
      tweets: count(detailed.postsCount),
      listed: 0, // Bluesky does not count the lists an account is on
      likes: 0, // nor, publicly, the likes it gave
      media: 0,
    },
    pinnedTweetIds: pinned && isPostUri(pinned) ? [ids.post(pinned)] : [],
  };
}
