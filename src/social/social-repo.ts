// The store's copy of what the data source returned. Bulk exports and the crawl read and write it too.
import type { Kysely } from 'kysely';
import type { Community, SocialProfile, Tweet } from '../domain/models.js';
import type { Database } from '../db/schema.js';

export interface Stored<T> {
  value: T;
  fetchedAt: string;
}

export const tweetSeq = (id: string): string => id.padStart(20, '0');

// Parameter limits differ (SQLite 32766, Postgres 65535); 500 rows × 7 columns stays well inside both.
const CHUNK = 500;

export async function upsertProfiles(db: Kysely<Database>, profiles: SocialProfile[], fetchedAt: string): Promise<void> {
  for (let i = 0; i < profiles.length; i += CHUNK) {
    const rows = profiles.slice(i, i + CHUNK).map((p) => ({ id: p.id, username: p.username, data: JSON.stringify(p), fetched_at: fetchedAt }));
    if (rows.length === 0) continue;
    await db
      .insertInto('profiles')
      .values(rows)
      .onConflict((oc) =>
        oc.column('id').doUpdateSet((eb) => ({ username: eb.ref('excluded.username'), data: eb.ref('excluded.data'), fetched_at: eb.ref('excluded.fetched_at') })),
      )
      .execute();
  }
}

export async function findProfileById(db: Kysely<Database>, id: string): Promise<Stored<SocialProfile> | undefined> {
  const r = await db.selectFrom('profiles').select(['data', 'fetched_at']).where('id', '=', id).executeTakeFirst();
  return r && { value: JSON.parse(r.data) as SocialProfile, fetchedAt: r.fetched_at };
}

export async function findProfileByUsername(db: Kysely<Database>, username: string): Promise<Stored<SocialProfile> | undefined> {
  const r = await db.selectFrom('profiles').select(['data', 'fetched_at']).where('username', '=', username).orderBy('fetched_at', 'desc').executeTakeFirst();
  return r && { value: JSON.parse(r.data) as SocialProfile, fetchedAt: r.fetched_at };
}

export async function findProfiles(db: Kysely<Database>, ids: string[]): Promise<Map<string, SocialProfile>> {
  const out = new Map<string, SocialProfile>();
  for (let i = 0; i < ids.length; i += CHUNK) {
    const part = ids.slice(i, i + CHUNK);
    if (part.length === 0) continue;
    const rows = await db.selectFrom('profiles').select(['id', 'data']).where('id', 'in', part).execute();
    for (const r of rows) out.set(r.id, JSON.parse(r.data) as SocialProfile);
  }
  return out;
}

/** A stored tweet as the JSON text it was stored as: served without parsing and serializing again. */
export interface StoredTweetJson {
  json: string;
  /** When it was fetched, in ms: parsed once per read, which readers of the same turn share. */
  fetchedAtMs: number;
  /**
   * The JSON's UTF-8 bytes when it holds a character beyond ASCII, made once per copy read (its
   * readers of a turn, or of the Postgres cache's entry, share it). Node would otherwise encode the
   * answer to UTF-8 again for every reader, and measure it first for Content-Length: the tweet
   * beyond Latin-1 cost about 1.85 µs of CPU a request more (bench/where-the-time-goes.md,
   * 2026-11-29). An ASCII text is sent as a string, whose copy into the socket is cheaper than
   * joining bytes.
   */
  utf8: Buffer | undefined;
}

// `utf8` is undefined exactly when the JSON is ASCII (a lone surrogate takes 3 bytes too): the tweet's
// answer then takes the text's length as its Content-Length (routes/social/tweet.ts).
export const tweetJson = (json: string, fetchedAtMs: number): StoredTweetJson => ({
  json,
  fetchedAtMs,
  utf8: Buffer.byteLength(json) === json.length ? undefined : Buffer.from(json),
});

export const storedTweetJson = (r: { data: string; fetched_at: string }): StoredTweetJson => tweetJson(r.data, Date.parse(r.fetched_at));

export async function findTweetJson(db: Kysely<Database>, id: string): Promise<StoredTweetJson | undefined> {
  const r = await db.selectFrom('tweets').select(['data', 'fetched_at']).where('id', '=', id).executeTakeFirst();
  return r && storedTweetJson(r);
}

export async function findTweets(db: Kysely<Database>, ids: string[]): Promise<Map<string, Tweet>> {
  const out = new Map<string, Tweet>();
  for (let i = 0; i < ids.length; i += CHUNK) {
    const part = ids.slice(i, i + CHUNK);
    if (part.length === 0) continue;
    const rows = await db.selectFrom('tweets').select(['id', 'data']).where('id', 'in', part).execute();
    for (const r of rows) out.set(r.id, JSON.parse(r.data) as Tweet);
  }
  return out;
}

export async function upsertRetweets(db: Kysely<Database>, tweetId: string, edges: Array<{ userId: string; retweetedAt: string | null }>): Promise<void> {
  if (edges.length === 0) return;
  await db
    .insertInto('retweets')
    .values(edges.map((e) => ({ tweet_id: tweetId, user_id: e.userId, retweeted_at: e.retweetedAt })))
    .onConflict((oc) => oc.columns(['tweet_id', 'user_id']).doNothing())
    .execute();
}

export async function upsertCommunity(db: Kysely<Database>, c: Community, fetchedAt: string): Promise<void> {
  await db
    .insertInto('communities')
    .values({ id: c.id, data: JSON.stringify(c), fetched_at: fetchedAt })
    .onConflict((oc) => oc.column('id').doUpdateSet((eb) => ({ data: eb.ref('excluded.data'), fetched_at: eb.ref('excluded.fetched_at') })))
    .execute();
}

export async function findCommunity(db: Kysely<Database>, id: string): Promise<Stored<Community> | undefined> {
  const r = await db.selectFrom('communities').select(['data', 'fetched_at']).where('id', '=', id).executeTakeFirst();
  return r && { value: JSON.parse(r.data) as Community, fetchedAt: r.fetched_at };
}

export async function getListCache<T>(db: Kysely<Database>, key: string): Promise<Stored<T> | undefined> {
  const r = await db.selectFrom('list_cache').select(['payload', 'fetched_at']).where('key', '=', key).executeTakeFirst();
  return r && { value: JSON.parse(r.payload) as T, fetchedAt: r.fetched_at };
}

export async function putListCache(db: Kysely<Database>, key: string, value: unknown, fetchedAt: string): Promise<void> {
  await db
    .insertInto('list_cache')
    .values({ key, payload: JSON.stringify(value), fetched_at: fetchedAt })
    .onConflict((oc) => oc.column('key').doUpdateSet((eb) => ({ payload: eb.ref('excluded.payload'), fetched_at: eb.ref('excluded.fetched_at') })))
    .execute();
}
