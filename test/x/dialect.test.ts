// X's field vocabulary detected: an in-process X that takes only one vocabulary and answers the
// other with X's 400 "Invalid Request" problem naming the parameter (test/x/fixtures). Prism cannot
// play this part: the official document knows only the post-era names, and Prism answers what it
// refuses with a 422 of its own, not X's 400.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SourceError, type SourceLog } from '../../src/sources/types.js';
import type { XFieldDialect } from '../../src/sources/x/fields.js';
import { XSource } from '../../src/sources/x/x-source.js';
import { fixture, startFixtureServer, TOKEN, type FixtureReply, type FixtureServer } from './helpers.js';

let server: FixtureServer;
before(async () => {
  server = await startFixtureServer();
});
after(async () => {
  await server.close();
});

/** Which vocabulary a request was made in. */
function vocabulary(query: URLSearchParams): XFieldDialect {
  if (query.has('post.fields') || query.get('expansions')?.includes('pinned_post_id') || query.get('expansions')?.includes('referenced_posts')) return 'posts';
  return 'tweets';
}

/** An X that takes only `accepts`: the other vocabulary gets the 400 X sends for it. */
function xThatTakes(accepts: XFieldDialect, answer: FixtureReply): (query: URLSearchParams) => FixtureReply {
  return (query) => {
    if (vocabulary(query) === accepts) return answer;
    return accepts === 'tweets' ? { status: 400, file: 'problem-400-unknown-parameter.json' } : { status: 400, file: 'problem-400-field-value.json' };
  };
}

function capture(): { log: SourceLog; warnings: Array<{ obj: Record<string, unknown>; msg: string }> } {
  const warnings: Array<{ obj: Record<string, unknown>; msg: string }> = [];
  return {
    warnings,
    log: { debug: () => {}, info: () => {}, warn: (obj, msg) => void warnings.push({ obj: obj as Record<string, unknown>, msg }) },
  };
}

const requestsTo = (path: string) => server.seen.filter((r) => r.path === path);

describe("X's field vocabulary", () => {
  it('a 400 naming a post-era field parameter switches to the tweet-era names once, for good, and says so', async () => {
    server.on('/2/tweets/1850000000000000001', xThatTakes('tweets', { file: 'tweet-long-note.json' }));
    server.on('/2/users/2244994945', xThatTakes('tweets', { file: 'user-tweet-era.json' }));
    const { log, warnings } = capture();
    const x = new XSource({ bearerToken: TOKEN, baseUrl: server.baseUrl, log });
    assert.equal(x.dialect, 'posts');

    const tweet = await x.getTweet('1850000000000000001');
    assert.equal(tweet.id, '1850000000000000001');
    assert.deepEqual(requestsTo('/2/tweets/1850000000000000001').map((r) => vocabulary(r.query)), ['posts', 'tweets']);
    assert.equal(x.dialect, 'tweets');
    assert.equal(warnings.length, 1);
    assert.match(warnings[0]!.msg, /X refused the posts-era field parameter post\.fields: X_API_DIALECT is now tweets for this process \(set X_API_DIALECT=tweets/);
    assert.deepEqual(warnings[0]!.obj.rejected, ['post.fields']);

    // Remembered: later calls, to any endpoint, ask in the tweet-era names straight away.
    await x.getUserById('2244994945');
    await x.getTweet('1850000000000000001');
    assert.deepEqual(requestsTo('/2/users/2244994945').map((r) => vocabulary(r.query)), ['tweets']);
    assert.equal(requestsTo('/2/tweets/1850000000000000001').length, 3);
    assert.equal(warnings.length, 1);
  });

  it('X_API_DIALECT=tweets against an X that wants the post-era names: a 400 on user.fields switches to posts', async () => {
    server.on('/2/users/783214', xThatTakes('posts', { file: 'user-post-era.json' }));
    const { log, warnings } = capture();
    const x = new XSource({ bearerToken: TOKEN, baseUrl: server.baseUrl, dialect: 'tweets', log });
    const user = await x.getUserById('783214');
    assert.equal(user.id, '783214');
    assert.equal(x.dialect, 'posts');
    assert.deepEqual(warnings[0]?.obj.rejected, ['user.fields']);
  });

  it('tries once: an X that refuses both vocabularies keeps the configured one and gets a clear rejected error, not a loop', async () => {
    let asked = 0;
    server.on('/2/users/42', (query) => {
      asked += 1;
      return vocabulary(query) === 'posts' ? { status: 400, file: 'problem-400-unknown-parameter.json' } : { status: 400, file: 'problem-400-field-value.json' };
    });
    const { log, warnings } = capture();
    const x = new XSource({ bearerToken: TOKEN, baseUrl: server.baseUrl, log });
    await assert.rejects(x.getUserById('42'), (err: unknown) => {
      assert.ok(err instanceof SourceError && err.kind === 'rejected', String(err));
      assert.match(err.message, /X refused the request for user 42 with HTTP 400 \(rejected parameter: post\.fields\)/);
      return true;
    });
    assert.equal(asked, 2);
    assert.equal(x.dialect, 'posts');
    assert.match(warnings[0]?.msg ?? '', /X refused both field vocabularies; keeping X_API_DIALECT=posts/);
    await assert.rejects(x.getUserById('42'), /rejected parameter: post\.fields/);
    assert.equal(asked, 3, 'not tried again');
  });

  it('concurrent calls refused while the other vocabulary is tried wait for the verdict, then use it', async () => {
    server.on('/2/tweets/1850000000000000002', xThatTakes('tweets', { file: 'tweet-long-note.json' }));
    const x = new XSource({ bearerToken: TOKEN, baseUrl: server.baseUrl });
    const before = requestsTo('/2/tweets/1850000000000000002').length;
    const tweets = await Promise.all([1, 2, 3, 4].map(() => x.getTweet('1850000000000000002')));
    assert.equal(tweets.length, 4);
    assert.equal(x.dialect, 'tweets');
    const seen = requestsTo('/2/tweets/1850000000000000002').slice(before).map((r) => vocabulary(r.query));
    assert.equal(seen.filter((v) => v === 'posts').length, 4, 'each first asked in the configured vocabulary');
    assert.equal(seen.filter((v) => v === 'tweets').length, 4, 'then once each in the one X takes');
  });

  it('the other vocabulary answered with not found still settles it: X took the parameters', async () => {
    server.on('/2/users/44', (query) => (vocabulary(query) === 'tweets' ? { status: 404, json: { title: 'Not Found Error', status: 404 } } : { status: 400, file: 'problem-400-unknown-parameter.json' }));
    const x = new XSource({ bearerToken: TOKEN, baseUrl: server.baseUrl });
    await assert.rejects(x.getUserById('44'), (err: unknown) => err instanceof SourceError && err.kind === 'not_found');
    assert.equal(x.dialect, 'tweets');
  });

  it('a 400 about another parameter does not switch', async () => {
    server.on('/2/users/43', { status: 400, json: { errors: [{ parameters: { id: ['43'] }, message: 'The `id` query parameter value [43] is not valid' }], title: 'Invalid Request' } });
    const x = new XSource({ bearerToken: TOKEN, baseUrl: server.baseUrl });
    await assert.rejects(x.getUserById('43'), /rejected parameter: id/);
    assert.equal(x.dialect, 'posts');
    assert.equal(requestsTo('/2/users/43').length, 1);
  });

  it('the fixtures are what X answers: a problem of type invalid-request naming the parameter', () => {
    for (const name of ['problem-400-unknown-parameter.json', 'problem-400-field-value.json']) {
      const body = fixture(name) as { type: string; errors: Array<{ parameters: Record<string, unknown> }> };
      assert.match(body.type, /\/2\/problems\/invalid-request$/);
      assert.equal(Object.keys(body.errors[0]!.parameters).length, 1);
    }
  });
});
