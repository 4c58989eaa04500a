// Communities of the demo network: COMMUNITY_COUNT of them, each derived from hash(seed, index).
import type { Community } from '../../domain/models.js';
import { ACCOUNT_SPAN_MS, DAY, IMAGE_BASE, iso, type Net } from './network.js';
import { below, hash3, rehash, Rng, Salt, unit } from './prng.js';
import { COMMUNITY_QUALIFIERS, COMMUNITY_RULES, COMMUNITY_TOPICS, PLACES } from './text.js';
import { poolSize, statusOf } from './users.js';

/** The index of a community id, or -1. */
export function parseCommunityId(net: Net, id: string): number {
  const index = net.communityIds.decode(id);
  return index >= 0 && index < net.communityCount ? index : -1;
}

export function buildCommunity(net: Net, index: number): Community {
  const h = hash3(net.seed, Salt.community, index);
  const rng = new Rng(rehash(h, 1));
  const createdMs = net.epochMs + 30 * DAY + below(rehash(h, 2), ACCOUNT_SPAN_MS + 180 * DAY);
  const pool = poolSize(net, createdMs);
  let creatorId: string | null = null;
  if (pool > 0) {
    const start = below(rehash(h, 3), pool);
    for (let t = 0; t < 32 && t < pool; t++) {
      const c = (start + t) % pool;
      if (statusOf(net, c) !== 'suspended') {
        creatorId = net.userIds.encode(c);
        break;
      }
    }
  }
  const topic = rng.pick(COMMUNITY_TOPICS);
  const qualifier = rng.pick(COMMUNITY_QUALIFIERS);
  const name = rng.chance(0.3) ? `${topic} · ${rng.pick(PLACES)}` : `${topic} ${qualifier}`.trim();
  const members = Math.floor(Math.pow(10, 1 + 4.5 * Math.pow(unit(rehash(h, 4)), 1.5)));
  const access = rng.chance(0.8) ? 'public' : 'closed';
  const joinPolicy = access === 'public' && rng.chance(0.7) ? 'open' : 'restricted';
  const ruleCount = rng.int(COMMUNITY_RULES.length + 1);
  const first = rng.int(COMMUNITY_RULES.length);
  const rules: Community['rules'] = [];
  for (let k = 0; k < ruleCount; k++) {
    const rule = COMMUNITY_RULES[(first + k) % COMMUNITY_RULES.length];
    if (rule) rules.push({ id: String(k + 1), name: rule[0], description: rule[1] });
  }
  return {
    id: net.communityIds.encode(index),
    name,
    description: `A made-up community about ${topic.toLowerCase()}, part of the simulated demo network.`,
    memberCount: members,
    moderatorCount: Math.max(1, Math.min(members, 1 + Math.floor(Math.log10(members) * 2 * rng.float()))),
    createdAt: iso(createdMs),
    access,
    joinPolicy,
    rules,
    bannerUrl: rng.chance(0.7) ? `${IMAGE_BASE}/communities/${net.communityIds.encode(index)}.jpg` : null,
    creatorId,
  };
}
