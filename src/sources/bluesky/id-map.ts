// The mapping between Bluesky's names (post URIs, account DIDs) and the gateway's numeric ids: an
// interface, a store-backed implementation (tables of migration 004-bluesky) and an in-memory one.
//
// Assignment is idempotent and safe under concurrency, on SQLite and Postgres alike: look the names
// up; insert the missing ones with their candidate ids, `on conflict do nothing`; read them back. A
// name that still has no id lost its candidate to another name (the id is the primary key): it tries
// the next candidate. A name inserted concurrently by another process is simply read back.
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { postIdCandidate, tieFromCid, tieFromUri, userIdCandidate } from './ids.js';

export interface PostRef {
  uri: string;
  /** The post's CID when known: its tie bits keep the AppView's order among posts of the same millisecond. */
  cid?: string | undefined;
  /** The time the id is built from (ms since 1970); only used when the post has no id yet. */
  atMs: number;
}

export interface IdMap {
  /** The id of each post, assigning the missing ones. Keyed by URI. */
  postIds(posts: readonly PostRef[]): Promise<Map<string, string>>;
  /** The id of each account, assigning the missing ones. Keyed by DID. */
  userIds(dids: readonly string[]): Promise<Map<string, string>>;
  /** The URI a post id was assigned to; undefined if it never was. */
  postUri(id: string): Promise<string | undefined>;
  /** The DID a user id was assigned to; undefined if it never was. */
  userDid(id: string): Promise<string | undefined>;
}

/** One table of names and ids, unique on both. */
interface IdTable {
  /** Ids of the names that have one. */
  find(names: readonly string[]): Promise<Map<string, string>>;
  /** Inserts each row unless its name or its id is taken. */
  insert(rows: ReadonlyArray<{ name: string; id: string }>): Promise<void>;
  nameOf(id: string): Promise<string | undefined>;
}

/** Candidates per name before giving up; a collision needs two names on one id, so two tries are already rare. */
const MAX_ATTEMPTS = 64;

async function assign(table: IdTable, candidates: Map<string, (attempt: number) => string>): Promise<Map<string, string>> {
  const names = [...candidates.keys()];
  const ids = names.length > 0 ? await table.find(names) : new Map<string, string>();
  let missing = names.filter((n) => !ids.has(n));
  for (let attempt = 0; missing.length > 0; attempt++) {
    if (attempt >= MAX_ATTEMPTS) throw new Error(`Could not assign an id to ${missing[0]} after ${MAX_ATTEMPTS} attempts.`);
    await table.insert(missing.map((name) => ({ name, id: candidates.get(name)!(attempt) })));
    for (const [name, id] of await table.find(missing)) ids.set(name, id);
    missing = missing.filter((n) => !ids.has(n));
  }
  return ids;
}

function postCandidates(posts: readonly PostRef[]): Map<string, (attempt: number) => string> {
  const out = new Map<string, (attempt: number) => string>();
  for (const p of posts) {
    if (out.has(p.uri)) continue;
    const tie = (p.cid ? tieFromCid(p.cid) : undefined) ?? tieFromUri(p.uri);
    out.set(p.uri, (attempt) => postIdCandidate(p.atMs, tie, attempt));
  }
  return out;
}

function userCandidates(dids: readonly string[]): Map<string, (attempt: number) => string> {
  return new Map(dids.map((did) => [did, (attempt: number) => userIdCandidate(did, attempt)] as const));
}

abstract class TableIdMap implements IdMap {
  protected abstract readonly posts: IdTable;
  protected abstract readonly users: IdTable;

  postIds(posts: readonly PostRef[]): Promise<Map<string, string>> {
    return assign(this.posts, postCandidates(posts));
  }

  userIds(dids: readonly string[]): Promise<Map<string, string>> {
    return assign(this.users, userCandidates(dids));
  }

  postUri(id: string): Promise<string | undefined> {
    return this.posts.nameOf(id);
  }

  userDid(id: string): Promise<string | undefined> {
    return this.users.nameOf(id);
  }
}

class MemoryTable implements IdTable {
  private readonly byName = new Map<string, string>();
  private readonly byId = new Map<string, string>();

  async find(names: readonly string[]): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    for (const n of names) {
      const id = this.byName.get(n);
      if (id !== undefined) out.set(n, id);
    }
    return out;
  }

  async insert(rows: ReadonlyArray<{ name: string; id: string }>): Promise<void> {
    for (const { name, id } of rows) {
      if (this.byName.has(name) || this.byId.has(id)) continue;
      this.byName.set(name, id);
      this.byId.set(id, name);
    }
  }

  async nameOf(id: string): Promise<string | undefined> {
    return this.byId.get(id);
  }

  /** For tests: take an id for a name, as another process would have. */
  put(name: string, id: string): void {
    this.byName.set(name, id);
    this.byId.set(id, name);
  }
}

/** The mapping in memory: for unit tests and throw-away runs (ids are not kept across restarts). */
export class MemoryIdMap extends TableIdMap {
  protected readonly posts = new MemoryTable();
  protected readonly users = new MemoryTable();

  /** For tests: pretend `uri` already holds `id` (to provoke collisions). */
  reservePost(uri: string, id: string): void {
    this.posts.put(uri, id);
  }

  reserveUser(did: string, id: string): void {
    this.users.put(did, id);
  }
}

/** SQLite allows 32 766 bound values, Postgres 65 535; these chunks stay far below both. */
const FIND_CHUNK = 500;
const INSERT_CHUNK = 250;

function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

class PostTable implements IdTable {
  constructor(private readonly db: Kysely<Database>) {}

  async find(names: readonly string[]): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    for (const part of chunks(names, FIND_CHUNK)) {
      const rows = await this.db.selectFrom('bluesky_post_ids').select(['id', 'uri']).where('uri', 'in', part).execute();
      for (const r of rows) out.set(r.uri, r.id);
    }
    return out;
  }

  async insert(rows: ReadonlyArray<{ name: string; id: string }>): Promise<void> {
    for (const part of chunks(rows, INSERT_CHUNK)) {
      await this.db
        .insertInto('bluesky_post_ids')
        .values(part.map((r) => ({ id: r.id, uri: r.name })))
        .onConflict((oc) => oc.doNothing())
        .execute();
    }
  }

  async nameOf(id: string): Promise<string | undefined> {
    return (await this.db.selectFrom('bluesky_post_ids').select('uri').where('id', '=', id).executeTakeFirst())?.uri;
  }
}

class UserTable implements IdTable {
  constructor(private readonly db: Kysely<Database>) {}

  async find(names: readonly string[]): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    for (const part of chunks(names, FIND_CHUNK)) {
      const rows = await this.db.selectFrom('bluesky_user_ids').select(['id', 'did']).where('did', 'in', part).execute();
      for (const r of rows) out.set(r.did, r.id);
    }
    return out;
  }

  async insert(rows: ReadonlyArray<{ name: string; id: string }>): Promise<void> {
    for (const part of chunks(rows, INSERT_CHUNK)) {
      await this.db
        .insertInto('bluesky_user_ids')
        .values(part.map((r) => ({ id: r.id, did: r.name })))
        .onConflict((oc) => oc.doNothing())
        .execute();
    }
  }

  async nameOf(id: string): Promise<string | undefined> {
    return (await this.db.selectFrom('bluesky_user_ids').select('did').where('id', '=', id).executeTakeFirst())?.did;
  }
}

/** The mapping in the gateway's store (tables bluesky_post_ids and bluesky_user_ids). */
export class StoreIdMap extends TableIdMap {
  protected readonly posts: IdTable;
  protected readonly users: IdTable;

  constructor(db: Kysely<Database>) {
    super();
    this.posts = new PostTable(db);
    this.users = new UserTable(db);
  }
}
