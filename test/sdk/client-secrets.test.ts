// The client keeps its secrets out of what it prints: console.log, util.inspect and JSON.stringify of
// a client show its key redacted, and a base URL with a password in it is refused without echoing it.
import assert from 'node:assert/strict';
import { inspect } from 'node:util';
import { describe, test } from 'node:test';
import { SdgClient, SdgError } from '../../sdk/src/index.js';

const KEY = 'sdg_live_Ab3dE9xQ2mZ8aT1bC4dE6fG0hH5iL7nPqRsTuVwXyZ0';

describe('the client and its secrets', () => {
  test('inspect, console.log and JSON.stringify show no key; options still hold it for who asks', () => {
    const client = new SdgClient({ apiKey: KEY, baseUrl: 'http://127.0.0.1:8080' });
    const views = [inspect(client, { depth: 10, showHidden: true }), inspect(client, { depth: 10, customInspect: false }), JSON.stringify(client), JSON.stringify({ client })];
    for (const shown of views) assert.ok(!shown.includes(KEY.slice(9)), shown);
    assert.match(inspect(client), /SdgClient .*"baseUrl":"http:\/\/127\.0\.0\.1:8080".*"apiKey":"\[redacted\]"/);
    assert.equal(Object.keys(client).includes('options'), false, 'not an own enumerable field');
    assert.equal(client.options.apiKey, KEY);
  });

  test('a base URL with a user name or password is refused, and the error does not print the password', () => {
    assert.throws(
      () => new SdgClient({ apiKey: KEY, baseUrl: 'http://user:hunter2@gateway.example:8080' }),
      (e: unknown) => e instanceof SdgError && !e.message.includes('hunter2') && !e.message.includes('user:') && /gateway\.example:8080/.test(e.message),
    );
  });
});
