// API keys to their records, for the key check of every keyed route.
import type { AuthRecord, MeterStore } from '../credits/meter-store.js';
import { TurnMemo } from '../db/turn-memo.js';
import { hashApiKey, isWellFormedKey } from './api-keys.js';

type Lookup = AuthRecord | undefined | Promise<AuthRecord | undefined>;

/** Resolves API keys to their records: one lookup per key per event-loop turn (see TurnMemo). */
export class KeyResolver {
  private readonly memo = new TurnMemo<string, Lookup>();
  private readonly lookup: (key: string) => Lookup;

  constructor(meter: Pick<MeterStore, 'findKey'>) {
    this.lookup = (key) => (isWellFormedKey(key) ? meter.findKey(hashApiKey(key)) : undefined);
  }

  resolve(key: string): Lookup {
    return this.memo.get(key, this.lookup);
  }

  /** Called when this process changes a key, so even a request in the same turn sees it. */
  forget(): void {
    this.memo.clear();
  }
}

