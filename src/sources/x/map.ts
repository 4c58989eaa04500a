// X API v2 objects → the normalized models. Accepts both the post-era names of the OpenAPI document
// (repost_count, post_count, pinned_post_id, note_post, referenced_posts, includes.posts) and the
// tweet-era names the live API has used (retweet_count, tweet_count, pinned_tweet_id, note_tweet,
// referenced_tweets, includes.tweets). Output validates against the TypeBox schemas by construction:
// ids are checked, timestamps normalized, counters clamped at 0, unknown enum values mapped.
import type { Community, SocialProfile, Tweet } from '../../domain/models.js';
import type { RetweetEdge } from '../types.js';
import {
  asArray,
  asBoolean,
  asObject,
  asString,
  badResponse,
  countOf,
  firstArray,
  isoInstant,
  nonEmpty,
  numericId,
  optionalCount,
  type JsonObject,
} from './json.js';

type VerifiedType = SocialProfile['verifiedType'];
type MediaItem = Tweet['media'][number];
type Entities = Tweet['entities'];

/** `includes` of a response, indexed for the lookups the mapping needs. */
export interface Includes {
  usersById: Map<string, JsonObject>;
  mediaByKey: Map<string, JsonObject>;
}

export function indexIncludes(body: JsonObject): Includes {
  const includes = asObject(body.includes);
  const usersById = new Map<string, JsonObject>();
  const mediaByKey = new Map<string, JsonObject>();
  for (const raw of asArray(includes?.users)) {
    const user = asObject(raw);
    const id = asString(user?.id);
    if (user && id !== undefined && !usersById.has(id)) usersById.set(id, user);
  }
  for (const raw of asArray(includes?.media)) {
    const media = asObject(raw);
    const key = asString(media?.media_key);
    if (media && key !== undefined && !mediaByKey.has(key)) mediaByKey.set(key, media);
  }
  return { usersById, mediaByKey };
}

const VERIFIED_TYPES: ReadonlySet<string> = new Set(['blue', 'business', 'government', 'none']);

function verifiedType(raw: unknown, verified: boolean): VerifiedType {
  const value = asString(raw)?.toLowerCase();
  if (value !== undefined && VERIFIED_TYPES.has(value)) return value as VerifiedType;
  return verified ? 'blue' : 'none';
}

/** The profile's website: the expanded form of its t.co link when X gives one. */
function profileUrl(user: JsonObject): string | null {
  const urls = asArray(asObject(asObject(user.entities)?.url)?.urls);
  const first = asObject(urls[0]);
  return nonEmpty(first?.expanded_url) ?? nonEmpty(user.url);
}

export function mapUser(raw: unknown): SocialProfile {
  const user = asObject(raw) ?? badResponse('a user is not an object');
  const id = numericId(user.id, 'user.id');
  const handle = asString(user.username);
  if (handle === undefined || handle === '') return badResponse(`user ${id} has no username`);
  const metrics = asObject(user.public_metrics);
  const verified = asBoolean(user.verified) ?? false;
  const pinned = nonEmpty(user.pinned_tweet_id) ?? nonEmpty(user.pinned_post_id);
  return {
    id,
    username: handle.toLowerCase(),
    displayUsername: handle,
    name: asString(user.name) ?? handle,
    description: asString(user.description) ?? '',
    location: asString(user.location) ?? '',
    url: profileUrl(user),
    profileImageUrl: nonEmpty(user.profile_image_url),
    bannerUrl: nonEmpty(user.profile_banner_url),
    createdAt: isoInstant(user.created_at, `user ${id} created_at`),
    verified,
    verifiedType: verifiedType(user.verified_type, verified),
    protected: asBoolean(user.protected) ?? false,
    metrics: {
      followers: countOf(metrics, 'followers_count'),
      following: countOf(metrics, 'following_count'),
      tweets: countOf(metrics, 'tweet_count', 'post_count', 'statuses_count'),
      listed: countOf(metrics, 'listed_count'),
      likes: countOf(metrics, 'like_count', 'favourites_count'),
      media: countOf(metrics, 'media_count'),
    },
    pinnedTweetIds: pinned === null ? [] : [pinned],
  };
}

export function mapRetweetEdge(raw: unknown): RetweetEdge {
  // X does not say when a retweet happened.
  return { user: mapUser(raw), retweetedAt: null };
}

function mapEntities(raw: unknown): Entities {
  const entities = asObject(raw);
  const hashtags: Entities['hashtags'] = [];
  for (const item of asArray(entities?.hashtags)) {
    const e = asObject(item);
    const tag = asString(e?.tag);
    if (e && tag !== undefined) hashtags.push({ tag, start: countOf(e, 'start'), end: countOf(e, 'end') });
  }
  const urls: Entities['urls'] = [];
  for (const item of asArray(entities?.urls)) {
    const e = asObject(item);
    if (!e) continue;
    const url = asString(e.url) ?? asString(e.expanded_url);
    if (url === undefined) continue;
    const expandedUrl = asString(e.expanded_url) ?? url;
    const displayUrl = asString(e.display_url) ?? expandedUrl;
    urls.push({ url, expandedUrl, displayUrl, start: countOf(e, 'start'), end: countOf(e, 'end') });
  }
  const mentions: Entities['mentions'] = [];
  for (const item of asArray(entities?.mentions)) {
    const e = asObject(item);
    const username = asString(e?.username);
    if (e && username !== undefined) {
      mentions.push({ username, id: asString(e.id) ?? null, start: countOf(e, 'start'), end: countOf(e, 'end') });
    }
  }
  return { hashtags, urls, mentions };
}

/** What an X handle can look like; anything else does not go into a permalink. */
const HANDLE = /^[A-Za-z0-9_]{1,15}$/;

const MEDIA_TYPES: ReadonlySet<string> = new Set(['photo', 'video', 'animated_gif']);

function mapMedia(key: string, media: JsonObject): MediaItem | undefined {
  const type = asString(media.type);
  if (type === undefined || !MEDIA_TYPES.has(type)) return undefined; // a kind the model does not know
  return {
    id: key,
    type: type as MediaItem['type'],
    url: nonEmpty(media.url),
    previewImageUrl: nonEmpty(media.preview_image_url),
    width: optionalCount(media.width),
    height: optionalCount(media.height),
    altText: asString(media.alt_text) ?? null,
  };
}

interface References {
  repliedTo: string | null;
  quoted: string | null;
  retweeted: string | null;
}

function references(post: JsonObject): References {
  const refs: References = { repliedTo: null, quoted: null, retweeted: null };
  for (const item of firstArray(post.referenced_tweets, post.referenced_posts)) {
    const ref = asObject(item);
    const id = asString(ref?.id);
    if (id === undefined) continue;
    const type = asString(ref?.type);
    if (type === 'replied_to') refs.repliedTo ??= id;
    else if (type === 'quoted') refs.quoted ??= id;
    else if (type === 'retweeted') refs.retweeted ??= id;
  }
  return refs;
}

export function mapTweet(raw: unknown, includes: Includes): Tweet {
  const post = asObject(raw) ?? badResponse('a tweet is not an object');
  const id = numericId(post.id, 'tweet.id');
  const authorId = asString(post.author_id);
  if (authorId === undefined || authorId === '') return badResponse(`tweet ${id} has no author_id`);

  // A long post: `text` is truncated, the note carries the full text and the entities that match it.
  const note = asObject(post.note_tweet) ?? asObject(post.note_post);
  const noteText = asString(note?.text);
  const text = noteText ?? asString(post.text) ?? '';
  const entities = mapEntities(noteText !== undefined && asObject(note?.entities) ? note?.entities : post.entities);

  const author = includes.usersById.get(authorId);
  const username = nonEmpty(author?.username) ?? nonEmpty(post.username);
  const url = username !== null && HANDLE.test(username) ? `https://x.com/${username}/status/${id}` : `https://x.com/i/status/${id}`;

  const media: MediaItem[] = [];
  for (const key of asArray(asObject(post.attachments)?.media_keys)) {
    if (typeof key !== 'string') continue;
    const found = includes.mediaByKey.get(key);
    const item = found ? mapMedia(key, found) : undefined;
    if (item) media.push(item);
  }

  const refs = references(post);
  const metrics = asObject(post.public_metrics);
  return {
    id,
    text,
    authorId,
    createdAt: isoInstant(post.created_at, `tweet ${id} created_at`),
    url,
    language: nonEmpty(post.lang),
    conversationId: nonEmpty(post.conversation_id),
    inReplyTo: refs.repliedTo === null ? null : { tweetId: refs.repliedTo, userId: asString(post.in_reply_to_user_id) ?? '' },
    metrics: {
      retweets: countOf(metrics, 'retweet_count', 'repost_count'),
      replies: countOf(metrics, 'reply_count'),
      likes: countOf(metrics, 'like_count'),
      quotes: countOf(metrics, 'quote_count'),
      views: countOf(metrics, 'impression_count'),
      bookmarks: countOf(metrics, 'bookmark_count'),
    },
    entities,
    media,
    quotedTweetId: refs.quoted,
    retweetedTweetId: refs.retweeted,
  };
}

/** X: "Public" | "Closed". */
function communityAccess(raw: unknown): Community['access'] {
  const value = asString(raw)?.toLowerCase() ?? '';
  return value.includes('closed') || value.includes('private') ? 'closed' : 'public';
}

/** X: "Open", or one of several "Restricted…" policies; anything unknown is treated as restricted. */
function communityJoinPolicy(raw: unknown): Community['joinPolicy'] {
  return asString(raw)?.toLowerCase() === 'open' ? 'open' : 'restricted';
}

export function mapCommunity(raw: unknown): Community {
  const community = asObject(raw) ?? badResponse('a community is not an object');
  const id = numericId(community.id, 'community.id');
  return {
    id,
    name: asString(community.name) ?? '',
    description: asString(community.description) ?? '',
    memberCount: countOf(community, 'member_count'),
    moderatorCount: countOf(community, 'moderator_count'), // not in X's Community schema: 0
    createdAt: isoInstant(community.created_at, `community ${id} created_at`),
    access: communityAccess(community.access),
    joinPolicy: communityJoinPolicy(community.join_policy),
    rules: [], // X API v2 does not expose community rules
    bannerUrl: nonEmpty(community.banner_url),
    creatorId: nonEmpty(community.creator_id),
  };
}

/** Compares decimal ids of any length numerically. */
export function compareIds(a: string, b: string): number {
  return a.length !== b.length ? a.length - b.length : a < b ? -1 : a > b ? 1 : 0;
}

/** Newest first: createdAt, then id, descending. */
export function newestFirst(a: Tweet, b: Tweet): number {
  if (a.createdAt !== b.createdAt) return a.createdAt < b.createdAt ? 1 : -1;
  return compareIds(b.id, a.id);
}
