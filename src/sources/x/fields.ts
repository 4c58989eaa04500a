// The fields and expansions we ask X for, in two dialects:
//  - 'posts': the names of the X API v2 OpenAPI document, version 2.167 (docs/upstream): post.fields,
//    note_post, referenced_posts and author_id/in_reply_to_user_id as expansions, pinned_post_id as
//    a user expansion. Checked against the document by the Prism tests.
//  - 'tweets': the tweet-era names of X's reference pages (tweet.fields, note_tweet,
//    referenced_tweets, pinned_tweet_id as a user field), for deployments whose API wants those.
// Responses in either dialect are understood whichever is configured (see map.ts). X_API_DIALECT sets
// the first one asked with; x-source.ts switches to the other once if X refuses it.

export type XFieldDialect = 'posts' | 'tweets';

export type QueryParams = Record<string, string | undefined>;

/** The parameters whose names or values differ between the two vocabularies: X refusing one of them may mean the other vocabulary. */
export const DIALECT_PARAMS: ReadonlySet<string> = new Set(['post.fields', 'tweet.fields', 'user.fields', 'expansions']);

const USER_FIELDS = [
  'created_at',
  'description',
  'entities',
  'location',
  'name',
  'profile_banner_url',
  'profile_image_url',
  'protected',
  'public_metrics',
  'url',
  'username',
  'verified',
  'verified_type',
];

const MEDIA_FIELDS = ['alt_text', 'height', 'media_key', 'preview_image_url', 'type', 'url', 'width'];

/** Parameters for endpoints that return users. */
export function userParams(dialect: XFieldDialect): QueryParams {
  return dialect === 'posts'
    ? { 'user.fields': USER_FIELDS.join(','), expansions: 'pinned_post_id' }
    : { 'user.fields': [...USER_FIELDS, 'pinned_tweet_id'].join(',') };
}

/** Parameters for endpoints that return tweets: the tweet, its media and its author's username. */
export function tweetParams(dialect: XFieldDialect): QueryParams {
  const common = { 'user.fields': 'username', 'media.fields': MEDIA_FIELDS.join(',') };
  if (dialect === 'posts') {
    return {
      'post.fields': ['attachments', 'conversation_id', 'created_at', 'entities', 'lang', 'note_post', 'public_metrics'].join(','),
      expansions: ['attachments.media_keys', 'author_id', 'in_reply_to_user_id', 'referenced_posts'].join(','),
      ...common,
    };
  }
  return {
    'tweet.fields': [
      'attachments',
      'author_id',
      'conversation_id',
      'created_at',
      'entities',
      'in_reply_to_user_id',
      'lang',
      'note_tweet',
      'public_metrics',
      'referenced_tweets',
    ].join(','),
    expansions: ['attachments.media_keys', 'author_id'].join(','),
    ...common,
  };
}

export function communityParams(): QueryParams {
  return { 'community.fields': ['access', 'created_at', 'description', 'id', 'join_policy', 'member_count', 'name'].join(',') };
}

/** X's time parameters have second granularity; tweets' created_at are whole seconds, so rounding up
 * keeps start_time (inclusive) and end_time (exclusive) exact. */
export function xTime(date: Date): string {
  const ms = Math.ceil(date.getTime() / 1000) * 1000;
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}
