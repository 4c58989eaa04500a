// Users of the demo network: everything about user #index is derived from hashes of (seed, index).
// Accounts are created in index order across ACCOUNT_SPAN_MS after the epoch, so "the users that
// existed at time t" is the prefix [0, poolSize(t)) of the indices.
import type { SocialProfile } from '../../domain/models.js';
import { ACCOUNT_SPAN_MS, type Net } from './network.js';
import { below, hash3, rehash, Salt, unit } from './prng.js';
import { ADJECTIVES, capitalize, FIRST_NAMES, LANG_SHARES, LANGS, LAST_NAMES, NOUNS, type Lang } from './text.js';

export type UserStatus = 'public' | 'protected' | 'suspended';
export type VerifiedType = SocialProfile['verifiedType'];

export const SUSPENDED_SHARE = 0.01;
export const PROTECTED_SHARE = 0.03;
export const ACTIVE_SHARE = 0.2;

export interface UserCore {
  index: number;
  id: string;
  /** absolute ms */
  createdMs: number;
  status: UserStatus;
  /** Active users post at least once in every hour bucket. */
  active: boolean;
  /** Mean tweets per hour (for active users: on top of the guaranteed one). */
  rate: number;
  /** Hour offset of the user's day, for the daily rhythm of posting. */
  tz: number;
  lang: Lang;
  followers: number;
  verifiedType: VerifiedType;
  /** Base hash of the profile's details. */
  hash: number;
}

function statusDraw(net: Net, index: number): number {
  return unit(hash3(net.seed, Salt.userStatus, index));
}

export function statusOf(net: Net, index: number): UserStatus {
  const u = statusDraw(net, index);
  return u < SUSPENDED_SHARE ? 'suspended' : u < SUSPENDED_SHARE + PROTECTED_SHARE ? 'protected' : 'public';
}

/** Public (neither protected nor suspended). */
export function isPublic(net: Net, index: number): boolean {
  return statusDraw(net, index) >= SUSPENDED_SHARE + PROTECTED_SHARE;
}

/** Active users are a fixed 20% of all users, all of them public. */
export function isActive(net: Net, index: number): boolean {
  const u = statusDraw(net, index);
  const from = SUSPENDED_SHARE + PROTECTED_SHARE;
  return u >= from && u < from + ACTIVE_SHARE;
}

export function createdMsOf(net: Net, index: number): number {
  const jitter = unit(hash3(net.seed, Salt.userCore, index));
  return net.epochMs + Math.floor(((index + jitter) * ACCOUNT_SPAN_MS) / net.userCount);
}

/** How many users had been created at or before the absolute time tMs (a prefix of the indices). */
export function poolSize(net: Net, tMs: number): number {
  if (tMs < net.epochMs) return 0;
  let n = Math.min(net.userCount, Math.floor(((tMs - net.epochMs) * net.userCount) / ACCOUNT_SPAN_MS));
  while (n > 0 && createdMsOf(net, n - 1) > tMs) n--;
  while (n < net.userCount && createdMsOf(net, n) <= tMs) n++;
  return n;
}

function pickLang(u: number): Lang {
  for (let i = 0; i < LANG_SHARES.length; i++) if (u < (LANG_SHARES[i] ?? 1)) return LANGS[i] ?? 'en';
  return 'en';
}

export function userCore(net: Net, index: number): UserCore {
  const status = statusOf(net, index);
  const active = isActive(net, index);
  const sh = hash3(net.seed, Salt.userSchedule, index);
  const ph = hash3(net.seed, Salt.userProfile, index);
  const v = unit(sh);
  // Active: 24..48 a day. Others: 1..24 a day, skewed towards the low end.
  const rate = active ? v : Math.pow(24, Math.pow(v, 1.6)) / 24;
  const vt = unit(rehash(ph, 1));
  const verifiedType: VerifiedType = vt < 0.003 ? 'government' : vt < 0.023 ? 'business' : vt < 0.14 ? 'blue' : 'none';
  const fu = unit(rehash(ph, 2));
  let followers = Math.floor(Math.pow(10, 0.5 + 4 * Math.pow(fu, 1.4)));
  if (active) followers = followers * 2 + 50;
  if (verifiedType === 'government' || verifiedType === 'business') followers = followers * 20 + 5_000;
  else if (verifiedType === 'blue') followers = followers * 3 + 200;
  return {
    index,
    id: net.userIds.encode(index),
    createdMs: createdMsOf(net, index),
    status,
    active,
    rate,
    tz: below(rehash(sh, 1), 24),
    lang: pickLang(unit(rehash(ph, 3))),
    followers,
    verifiedType,
    hash: ph,
  };
}

/** The display form of the handle (mixed case); the username is its lowercase form. */
export function displayHandle(net: Net, index: number): string {
  const h = hash3(net.seed, Salt.userProfile, index);
  const a = rehash(h, 10);
  const b = rehash(h, 11);
  const base =
    unit(rehash(h, 12)) < 0.6
      ? capitalize(ADJECTIVES[below(a, ADJECTIVES.length)] ?? 'quiet') + capitalize(NOUNS[below(b, NOUNS.length)] ?? 'falcon')
      : (FIRST_NAMES[below(a, FIRST_NAMES.length)] ?? 'Ada') + (LAST_NAMES[below(b, LAST_NAMES.length)] ?? 'Kestrel');
  return `${base}_${index}`;
}

export function usernameOf(net: Net, index: number): string {
  return displayHandle(net, index).toLowerCase();
}

const USERNAME = /^[a-z]+_(0|[1-9][0-9]{0,6})$/;

/** The index of a username (case-insensitive, an optional leading @), or -1. */
export function parseUsername(net: Net, username: string): number {
  const name = (username.startsWith('@') ? username.slice(1) : username).toLowerCase();
  const m = USERNAME.exec(name);
  if (!m) return -1;
  const index = Number(m[1]);
  if (index >= net.userCount) return -1;
  return usernameOf(net, index) === name ? index : -1;
}

/** The index of a user id, or -1. */
export function parseUserId(net: Net, id: string): number {
  const index = net.userIds.decode(id);
  return index >= 0 && index < net.userCount ? index : -1;
}
