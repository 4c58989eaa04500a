import { randomBytes } from 'node:crypto';
import { newId } from './ids.js';

// Export ids are numeric strings (path `{id}` is "a numeric ID as a string"): milliseconds since
// 2020-01-01 in the high bits and 22 random bits, so they rise with time like the network's ids.
const EPOCH = Date.UTC(2020, 0, 1);

export function newExportId(nowMs: number): string {
  const ms = BigInt(Math.max(0, nowMs - EPOCH));
  const rnd = BigInt(randomBytes(3).readUIntBE(0, 3) & 0x3fffff);
  return ((ms << 22n) | rnd).toString();
}

export const newBatchId = (): string => newId('wlb', 12);
export const newCycleId = (): string => newId('cyc', 9);
