// The normalized resource models of the specification (docs/spec/connector-spec.md, section 2) and the contract (docs/spec/contract.md, section 10).
// One TypeBox schema each: it validates, documents (OpenAPI) and types.
import { Type, type Static } from '@sinclair/typebox';
import './formats.js';

const Nullable = <T extends ReturnType<typeof Type.String>>(t: T, description?: string) => Type.Union([t, Type.Null()], description ? { description } : {});
const Count = Type.Integer({ minimum: 0 });

export const ProfileMetrics = Type.Object(
  {
    followers: Count,
    following: Count,
    tweets: Count,
    listed: Count,
    likes: Count,
    media: Count,
  },
  { title: 'ProfileMetrics' },
);

export const VerifiedType = Type.Union([
  Type.Literal('blue'),
  Type.Literal('business'),
  Type.Literal('government'),
  Type.Literal('none'),
]);

export const SocialProfile = Type.Object(
  {
    id: Type.String({ pattern: '^[0-9]+$', description: 'user id' }),
    username: Type.String({ description: 'handle, lowercase, without the at-sign' }),
    displayUsername: Type.String({ description: 'display variant of the username' }),
    name: Type.String({ description: 'display name' }),
    description: Type.String({ description: 'bio text' }),
    location: Type.String({ description: 'user-set location' }),
    url: Nullable(Type.String(), 'website URL'),
    profileImageUrl: Nullable(Type.String(), 'avatar image URL'),
    bannerUrl: Nullable(Type.String(), 'profile banner image URL'),
    createdAt: Type.String({ format: 'date-time', description: 'account creation time' }),
    verified: Type.Boolean({ description: 'has a verification badge' }),
    verifiedType: VerifiedType,
    protected: Type.Boolean({ description: 'the account is protected: its tweets are not visible' }),
    metrics: ProfileMetrics,
    pinnedTweetIds: Type.Array(Type.String(), { description: 'ids of pinned tweets' }),
  },
  { additionalProperties: false, title: 'SocialProfile' },
);
export type SocialProfile = Static<typeof SocialProfile>;

export const TweetMetrics = Type.Object(
  {
    retweets: Count,
    replies: Count,
    likes: Count,
    quotes: Count,
    views: Count,
    bookmarks: Count,
  },
  { title: 'TweetMetrics' },
);

// Element shapes inside entities and media are "not shown" in the specification; these follow
// X API v2's entities with camelCase names, offsets in characters of `text`.
export const HashtagEntity = Type.Object({ tag: Type.String(), start: Count, end: Count });
export const UrlEntity = Type.Object({
  url: Type.String(),
  expandedUrl: Type.String(),
  displayUrl: Type.String(),
  start: Count,
  end: Count,
});
export const MentionEntity = Type.Object({
  username: Type.String(),
  id: Nullable(Type.String()),
  start: Count,
  end: Count,
});
export const Media = Type.Object(
  {
    id: Type.String(),
    type: Type.Union([Type.Literal('photo'), Type.Literal('video'), Type.Literal('animated_gif')]),
    url: Nullable(Type.String()),
    previewImageUrl: Nullable(Type.String()),
    width: Type.Union([Count, Type.Null()]),
    height: Type.Union([Count, Type.Null()]),
    altText: Nullable(Type.String()),
  },
  { title: 'Media' },
);

export const Tweet = Type.Object(
  {
    id: Type.String({ pattern: '^[0-9]+$', description: 'tweet id' }),
    text: Type.String({ description: 'full tweet text' }),
    authorId: Type.String({ description: 'id of the author' }),
    createdAt: Type.String({ format: 'date-time' }),
    url: Type.String({ description: 'permalink' }),
    language: Nullable(Type.String(), 'detected language code'),
    conversationId: Nullable(Type.String(), 'id of the conversation thread'),
    inReplyTo: Type.Union([Type.Object({ tweetId: Type.String(), userId: Type.String() }), Type.Null()], { description: 'the tweet and user replied to, when this is a reply' }),
    metrics: TweetMetrics,
    entities: Type.Object({
      hashtags: Type.Array(HashtagEntity),
      urls: Type.Array(UrlEntity),
      mentions: Type.Array(MentionEntity),
    }),
    media: Type.Array(Media),
    quotedTweetId: Nullable(Type.String(), 'id of the quoted tweet'),
    retweetedTweetId: Nullable(Type.String(), 'id of the retweeted tweet'),
  },
  { additionalProperties: false, title: 'Tweet' },
);
export type Tweet = Static<typeof Tweet>;

export const CommunityRule = Type.Object({ id: Type.String(), name: Type.String(), description: Type.String() }, { title: 'CommunityRule' });
export const Community = Type.Object(
  {
    id: Type.String({ pattern: '^[0-9]+$' }),
    name: Type.String(),
    description: Type.String(),
    memberCount: Count,
    moderatorCount: Count,
    createdAt: Type.String({ format: 'date-time' }),
    access: Type.Union([Type.Literal('public'), Type.Literal('closed')]),
    joinPolicy: Type.Union([Type.Literal('open'), Type.Literal('restricted')]),
    rules: Type.Array(CommunityRule),
    bannerUrl: Nullable(Type.String()),
    creatorId: Nullable(Type.String()),
  },
  { additionalProperties: false, title: 'Community' },
);
export type Community = Static<typeof Community>;
