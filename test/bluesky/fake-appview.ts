// An in-process stand-in for a Bluesky AppView, reached through a fake `fetch`: the few XRPC queries
// the Bluesky source uses, answering lexicon-valid JSON (the client validates every answer), with the
// AppView's own rules where they matter: feeds by (sortAt, cid) descending with keyset cursors, posts
// of taken-down accounts left out, taken-down and deactivated accounts refused. Like the real one,
// it serves the posts of "!no-unauthenticated" accounts (only threads hide them), with the label on
// the author.
import { createHash } from 'node:crypto';

type Json = { [key: string]: unknown };

const B32 = 'abcdefghijklmnopqrstuvwxyz234567';
function base32(bytes: Uint8Array): string {
  let out = '';
  let bits = 0;
  let value = 0;
  for (const b of bytes) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += B32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += B32[(value << (5 - bits)) & 31];
  return out;
}

/** A valid CIDv1 (dag-cbor, sha-256) named by `seed`; `codec` 0x55 gives a raw (blob) CID. */
export function cidFor(seed: string, codec = 0x71): string {
  const digest = createHash('sha256').update(seed).digest();
  return `b${base32(Uint8Array.from([0x01, codec, 0x12, 0x20, ...digest]))}`;
}

/** A facet over the first occurrence of `part` in `text`, with UTF-8 byte offsets as Bluesky writes them. */
export function facetOver(text: string, part: string, feature: Json): Json {
  const at = text.indexOf(part);
  if (at < 0) throw new Error(`${part} is not in the text`);
  const byteStart = Buffer.byteLength(text.slice(0, at));
  return { index: { byteStart, byteEnd: byteStart + Buffer.byteLength(part) }, features: [feature] };
}

export const link = (uri: string): Json => ({ $type: 'app.bsky.richtext.facet#link', uri });
export const mention = (did: string): Json => ({ $type: 'app.bsky.richtext.facet#mention', did });
export const tag = (t: string): Json => ({ $type: 'app.bsky.richtext.facet#tag', tag: t });

const S32 = '234567abcdefghijklmnopqrstuvwxyz';
/** A TID record key for the instant `ms`. */
export function tidFor(ms: number, clock = 0): string {
  let v = (BigInt(ms) * 1000n << 10n) | BigInt(clock & 1023);
  let out = '';
  for (let i = 0; i < 13; i++) {
    out = S32[Number(v & 31n)] + out;
    v >>= 5n;
  }
  return out;
}

export interface FakeActor {
  did: string;
  handle: string;
  displayName?: string;
  description?: string;
  website?: string;
  avatar?: string;
  banner?: string;
  createdAt: string;
  followers: number;
  follows: number;
  postsCount: number;
  labels: string[];
  status?: 'takendown' | 'deactivated';
  verification?: 'verified' | 'verifier';
  pinned?: { uri: string; cid: string };
}

export interface FakePost {
  uri: string;
  cid: string;
  author: FakeActor;
  record: Json;
  indexedAt: string;
  embedView?: Json;
  likes: number;
  replies: number;
  quotes: number;
  bookmarks: number;
}

interface Repost {
  post: FakePost;
  by: FakeActor;
  at: string;
  cid: string;
}

type Failure = { status: number; body?: Json; headers?: Record<string, string> } | 'network' | 'hang';

const iso = (ms: number) => new Date(ms).toISOString();

export class FakeAppView {
  readonly actors = new Map<string, FakeActor>();
  readonly posts = new Map<string, FakePost>();
  readonly reposts: Repost[] = [];
  /** The XRPC methods called, in order. */
  readonly calls: string[] = [];
  /** Failures to answer the next calls with, in order. */
  readonly failures: Failure[] = [];
  /** Hanging calls whose request signal was aborted (the caller gave up and said so). */
  aborted = 0;
  private n = 0;

  addActor(handle: string, opts: Partial<Omit<FakeActor, 'did' | 'handle'>> = {}): FakeActor {
    const did = `did:plc:${createHash('sha256').update(handle).digest('hex').slice(0, 24)}`;
    const actor: FakeActor = { did, handle, createdAt: '2023-04-01T10:00:00.000Z', followers: 10, follows: 5, postsCount: 0, labels: [], ...opts };
    this.actors.set(did, actor);
    return actor;
  }

  addPost(author: FakeActor, text: string, opts: { at: number; indexedAt?: number; record?: Json; embedView?: Json; rkey?: string } ): FakePost {
    const rkey = opts.rkey ?? tidFor(opts.at, this.n++);
    const uri = `at://${author.did}/app.bsky.feed.post/${rkey}`;
    const record: Json = { $type: 'app.bsky.feed.post', text, createdAt: iso(opts.at), ...opts.record };
    const post: FakePost = {
      uri,
      cid: cidFor(uri),
      author,
      record,
      indexedAt: iso(opts.indexedAt ?? opts.at + 50),
      ...(opts.embedView ? { embedView: opts.embedView } : {}),
      likes: 3,
      replies: 1,
      quotes: 0,
      bookmarks: 2,
    };
    this.posts.set(uri, post);
    author.postsCount++;
    return post;
  }

  repost(post: FakePost, by: FakeActor, at: number): void {
    this.reposts.push({ post, by, at: iso(at), cid: cidFor(`${post.uri}#${by.did}`) });
  }

  readonly fetch: typeof fetch = async (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const method = url.pathname.replace(/^\/xrpc\//, '');
    this.calls.push(method);
    const failure = this.failures.shift();
    if (failure === 'network') throw new TypeError('fetch failed', { cause: new Error('connect ECONNREFUSED 127.0.0.1:1') });
    if (failure === 'hang') {
      return new Promise<Response>((_, reject) => {
        const signal = init?.signal;
        signal?.addEventListener('abort', () => {
          this.aborted++;
          reject(signal.reason);
        });
      });
    }
    if (failure) return json(failure.status, failure.body ?? { error: 'InternalServerError', message: 'boom' }, failure.headers);
    try {
      return json(200, this.answer(method, url.searchParams));
    } catch (err) {
      if (err instanceof XrpcFailure) return json(err.status, { error: err.error, message: err.message });
      throw err;
    }
  };

  private answer(method: string, q: URLSearchParams): Json {
    switch (method) {
      case '_health':
        return { version: 'fake' };
      case 'app.bsky.actor.getProfile':
        return this.profileDetailed(this.actorOrFail(q.get('actor')!));
      case 'app.bsky.actor.getProfiles':
        return { profiles: q.getAll('actors').flatMap((a) => { const actor = this.actorOf(a); return actor && !actor.status ? [this.profileDetailed(actor)] : []; }) };
      case 'app.bsky.feed.getPosts':
        return { posts: q.getAll('uris').flatMap((u) => { const p = this.posts.get(u); return p && this.visible(p) ? [this.postView(p)] : []; }) };
      case 'app.bsky.feed.getRepostedBy': {
        const uri = q.get('uri')!;
        const items = this.reposts.filter((r) => r.post.uri === uri && !r.by.status).map((r) => ({ sortAt: r.at, cid: r.cid, value: this.profileView(r.by) }));
        const page = keysetPage(items, q);
        return { uri, repostedBy: page.items, ...(page.cursor ? { cursor: page.cursor } : {}) };
      }
      case 'app.bsky.feed.getAuthorFeed': {
        const actor = this.actorOf(q.get('actor')!);
        if (!actor || actor.status) throw new XrpcFailure(400, 'InvalidRequest', 'Profile not found');
        const own = [...this.posts.values()].filter((p) => p.author === actor).map((p) => ({ sortAt: sortAt(p), cid: p.cid, value: { post: p } as { post: FakePost; by?: Repost } }));
        const reposts = this.reposts.filter((r) => r.by === actor).map((r) => ({ sortAt: r.at, cid: r.cid, value: { post: r.post, by: r } }));
        const page = keysetPage([...own, ...reposts], q);
        // Like the AppView: items whose post cannot be shown are dropped after paging.
        const feed = page.items.filter((i) => this.visible(i.post)).map((i) => this.feedItem(i.post, i.by));
        return { feed, ...(page.cursor ? { cursor: page.cursor } : {}) };
      }
      default:
        throw new XrpcFailure(501, 'MethodNotImplemented', `Method Not Implemented: ${method}`);
    }
  }

  private actorOf(actor: string): FakeActor | undefined {
    return actor.startsWith('did:') ? this.actors.get(actor) : [...this.actors.values()].find((a) => a.handle === actor);
  }

  private actorOrFail(actor: string): FakeActor {
    const found = this.actorOf(actor);
    if (!found) throw new XrpcFailure(400, 'InvalidRequest', 'Profile not found');
    if (found.status === 'takendown') throw new XrpcFailure(400, 'AccountTakedown', 'Account has been suspended');
    if (found.status === 'deactivated') throw new XrpcFailure(400, 'AccountDeactivated', 'Account is deactivated');
    return found;
  }

  private visible(p: FakePost): boolean {
    return !p.author.status;
  }

  private labels(a: FakeActor): Json[] {
    return a.labels.map((val) => ({ src: a.did, uri: `at://${a.did}/app.bsky.actor.profile/self`, val, cts: a.createdAt }));
  }

  profileBasic(a: FakeActor): Json {
    return { did: a.did, handle: a.handle, ...(a.displayName ? { displayName: a.displayName } : {}), ...(a.avatar ? { avatar: a.avatar } : {}), labels: this.labels(a), createdAt: a.createdAt };
  }

  private profileView(a: FakeActor): Json {
    return { ...this.profileBasic(a), ...(a.description ? { description: a.description } : {}), indexedAt: a.createdAt };
  }

  private profileDetailed(a: FakeActor): Json {
    const verification = a.verification
      ? { verifications: [], verifiedStatus: a.verification === 'verified' ? 'valid' : 'none', trustedVerifierStatus: a.verification === 'verifier' ? 'valid' : 'none' }
      : undefined;
    return {
      ...this.profileView(a),
      ...(a.website ? { website: a.website } : {}),
      ...(a.banner ? { banner: a.banner } : {}),
      followersCount: a.followers,
      followsCount: a.follows,
      postsCount: a.postsCount,
      ...(a.pinned ? { pinnedPost: a.pinned } : {}),
      ...(verification ? { verification } : {}),
    };
  }

  postView(p: FakePost): Json {
    return {
      $type: 'app.bsky.feed.defs#postView',
      uri: p.uri,
      cid: p.cid,
      author: this.profileBasic(p.author),
      record: p.record,
      ...(p.embedView ? { embed: p.embedView } : {}),
      replyCount: p.replies,
      repostCount: this.reposts.filter((r) => r.post === p).length,
      likeCount: p.likes,
      quoteCount: p.quotes,
      bookmarkCount: p.bookmarks,
      indexedAt: p.indexedAt,
      labels: [],
    };
  }

  /** The embed view of a quote of `p` (app.bsky.embed.record#view). */
  quoteView(p: FakePost): Json {
    return {
      $type: 'app.bsky.embed.record#view',
      record: { $type: 'app.bsky.embed.record#viewRecord', uri: p.uri, cid: p.cid, author: this.profileBasic(p.author), value: p.record, indexedAt: p.indexedAt },
    };
  }

  private feedItem(p: FakePost, by?: Repost): Json {
    const item: Json = { post: this.postView(p) };
    const reply = p.record.reply as { parent?: { uri: string }; root?: { uri: string } } | undefined;
    if (reply?.parent && reply.root) {
      const ref = (uri: string) => {
        const target = this.posts.get(uri);
        return target ? this.postView(target) : { $type: 'app.bsky.feed.defs#notFoundPost', uri, notFound: true };
      };
      item.reply = { parent: ref(reply.parent.uri), root: ref(reply.root.uri) };
    }
    if (by) item.reason = { $type: 'app.bsky.feed.defs#reasonRepost', by: this.profileBasic(by.by), indexedAt: by.at };
    return item;
  }
}

class XrpcFailure extends Error {
  constructor(
    readonly status: number,
    readonly error: string,
    message: string,
  ) {
    super(message);
  }
}

function sortAt(p: FakePost): string {
  const created = String(p.record.createdAt);
  return Date.parse(created) < Date.parse(p.indexedAt) ? iso(Date.parse(created)) : p.indexedAt;
}

/** (sortAt, cid) descending, cursor "<ms>::<cid>" of the last item, like the AppView's TimeCidKeyset. */
function keysetPage<T>(all: Array<{ sortAt: string; cid: string; value: T }>, q: URLSearchParams): { items: T[]; cursor?: string } {
  const sorted = [...all].sort((a, b) => (a.sortAt !== b.sortAt ? (a.sortAt < b.sortAt ? 1 : -1) : a.cid < b.cid ? 1 : a.cid > b.cid ? -1 : 0));
  const limit = Number(q.get('limit') ?? 50);
  const cursor = q.get('cursor');
  let rest = sorted;
  if (cursor) {
    const [ms, cid] = cursor.split('::');
    const at = iso(Number(ms));
    rest = sorted.filter((i) => i.sortAt < at || (i.sortAt === at && i.cid < cid!));
  }
  const page = rest.slice(0, limit);
  const last = page[page.length - 1];
  return { items: page.map((i) => i.value), ...(last ? { cursor: `${Date.parse(last.sortAt)}::${last.cid}` } : {}) };
}

function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });
}
