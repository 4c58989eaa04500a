// Postgres: metering without a round trip per call, exact across any number of processes.
//
// Leases. Each process leases a slice of an account's available balance with one conditional UPDATE
// (accounts.reserved grows by the slice, and a credit_leases row records it as this process's), then
// holds calls against the slice in memory. The next slice is leased while a quarter of this one is
// left, so that no call waits for the statement (nor, behind it, for the account row's lock, which
// the group in flight holds). A lease is renewed while the process lives; one that is
// not renewed for CREDIT_LEASE_SECONDS expires, and every API process sweeps expired leases back into
// the available balance, so a process killed mid-call blocks nothing for longer than that plus one
// sweep interval. What a process does not use goes back: after a second without use, and at once
// when another process asks for it.
//
// Charges. Settles are committed in groups, as on SQLite: the charges a process settles while its
// previous group is being written go in the next one, one statement (one transaction) debiting each
// account once and inserting every ledger entry with its own balance after. No 2xx is answered before
// the statement that carries its charge has committed. When a group's statement ends, the next
// group's is sent before the ended group's calls are answered: Postgres commits the next group while
// this process writes the answers, instead of waiting for them.
//
// Lost answers. A statement whose answer never came (the connection failed after it was sent) may
// have committed. Until that is settled the process sends no group charge and folds in no spending
// (lost-answers.ts): one statement changes its epoch (so that nothing it sent before can still commit),
// reads which of the lost group's charges committed (those calls are answered as charged, the others
// with the failure, uncharged), and gives back every lease it holds, each exactly from the ledger.
// Calls then lease anew. Without it, a group that committed unseen was answered 503 yet charged, and
// its lease row no longer matched the account's reserved credits: every sweep after it failed.
//
// Contention. A call whose slice runs short (the slice ahead was refused, or a burst outran it)
// leases more itself (sized as in nextChunk); if even its own cost cannot be
// leased, the account's expired leases are swept and the other processes are asked (credit_leases.
// wanted) to give back what they hold for no call. They answer within POLL_MS; the call is refused
// (402) only when, after every live holder has answered, the credits are still not there. A process
// that was asked leases exactly what each call needs for a while.
import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { groupColumns } from './group-columns.js';
import { isLeaseGone, LeaseStatements, outcomeUnknown } from './lease-statements.js';
import { chargeDirect } from './direct-charge.js';
import { findKeyRecord } from './key-record.js';
import { answerLost, LostAnswers } from './lost-answers.js';
import { LostCharges } from './refunds.js';
import { nowIso } from '../domain/ids.js';
import type { AccountLease, Hold, LeaseAttempt, PendingCharge, Refusal } from './lease-state.js';
import { MeterStats, type GiveBackReason } from './meter-stats.js';
import { UnsyncedSpending } from './unsynced-spending.js';
import { checkAmount, type AuthRecord, type ChargeInfo, type Charged, type MeterStore, type Reservation, type ReserveResult, type SettleTarget, settlePromise } from './meter-store.js';

/** A first lease covers this many calls; the next, if the first was spent within a second, twice as many. */
const LEASE_FIRST_CALLS = 8;
const LEASE_MAX_CALLS = 4096;
/** A lease unused this long is given back (what calls in flight hold stays). */
const IDLE_RETURN_MS = 1_000;
/** How often a process looks for requests to give back (and for idle leases). */
const POLL_MS = 50;
/** After being asked, or refused, a process leases exactly what each call needs for this long. */
const CONTENDED_MS = 5_000;
/** How long a call waits for other processes to answer before it is refused (a dead holder never answers). */
const ASK_DEADLINE_MS = 2_000;
/** Charges per group statement, at most. */
const MAX_GROUP = 2_000;
/**
 * Group statements in flight at once. One: a group costs Postgres about the same whatever it carries
 * (its commit), so groups in flight together are smaller and cost more a charge. Measured with 50
 * connections on one account: 4 in flight, groups of about 10 and 120 µs of Postgres CPU a charge
 * (4,800 req/s, p99 24 ms); 1 in flight, groups of about 25 and 39 µs (7,800 req/s, p99 14 ms). Not
 * the account row's lock: groups that took none did no better (where-the-time-goes, 2026-12-03).
 */
const GROUPS_IN_FLIGHT = 1;
/** Retries of a group statement that Postgres chose as a deadlock's victim (it wrote nothing). */
const DEADLOCK_RETRIES = 3;

export interface PostgresMeterOptions {
  /** A lease not renewed for this long expires (CREDIT_LEASE_SECONDS). */
  leaseSeconds: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class PostgresMeterStore implements MeterStore {
  /** This process's name on its leases. */
  readonly owner = `p_${randomBytes(9).toString('base64url')}`;
  /** What metering did in this process (on /metrics). */
  readonly stats = new MeterStats();
  private readonly leases = new Map<string, AccountLease>();
  private pending: PendingCharge[] = [];
  /** Group statements in flight. */
  private writing = 0;
  /** Groups not yet answered (their statement may have ended). */
  private answering = 0;
  private flushScheduled = false;
  private timer: NodeJS.Timeout | undefined;
  private lastRenewAt = 0;
  private readonly unsynced = new UnsyncedSpending();
  /** This process's epoch as last read (undefined before its first lease): a group names it. */
  private epoch: number | undefined;
  private readonly leaseMs: number;
  private readonly statements: LeaseStatements;
  /** Statements whose answer was lost, settled before the next group (lost-answers.ts). */
  private readonly lost: LostAnswers;
  /** Calls answered 503 whose charge may have committed, to refund if it did (refunds.ts). */
  readonly lostCharges: LostCharges;

  constructor(
    private readonly db: Kysely<Database>,
    opts: PostgresMeterOptions = { leaseSeconds: 30 },
    /** Where the group charges run (Store.chargeDb); `db` if not given. */
    chargeDb: Kysely<Database> = db,
  ) {
    this.leaseMs = Math.round(opts.leaseSeconds * 1000);
    this.lostCharges = new LostCharges(db, this.stats.lostCharges, () => this.lost.settle());
    this.statements = new LeaseStatements(db, this.owner, this.leaseMs, chargeDb);
    this.lost = new LostAnswers(
      (group) => this.statements.settleOwn(group),
      (r) => {
        // Every lease row of this process was given back: the records go (their holds are charged
        // from the balance), and the epoch is the new one.
        for (const l of [...this.leases.values()]) this.lose(l);
        if (r.epoch !== undefined) this.epoch = r.epoch;
        this.stats.settled++;
      },
    );
    this.stats.now = () => {
      let unheld = 0;
      for (const l of this.leases.values()) unheld += l.leased - l.held;
      return { accounts: this.leases.size, unheld };
    };
  }

  findKey(keyHash: string): Promise<AuthRecord | undefined> {
    return findKeyRecord(this.db, keyHash);
  }

  tryReserveSync(accountId: string, amount: number): ReserveResult | undefined {
    checkAmount(amount);
    const l = this.leases.get(accountId);
    if (!l || l.leased - l.held < amount) return undefined;
    const r = this.hold(l, amount);
    // A quarter of the slice left: lease the next one now, so that no call waits for it.
    if (l.leased - l.held < l.chunk / 4 && !l.extending && !l.lost && Date.now() >= l.contendedUntil && Date.now() >= l.noPrefetchUntil) {
      l.prefetching = true;
      l.extending = this.prefetch(l, amount).finally(() => {
        l.extending = undefined;
        l.prefetching = false;
      });
    }
    return r;
  }

  async reserve(accountId: string, amount: number): Promise<ReserveResult> {
    for (let waited = false; ; waited = true) {
      const fast = this.tryReserveSync(accountId, amount);
      if (fast) return fast;
      if (!waited) this.stats.callsWaited++;
      const l = this.leaseOf(accountId);
      // One extension at a time per account: the others wait for it and try again.
      const extending = l.extending ?? (l.extending = this.extend(l, amount).finally(() => (l.extending = undefined)));
      const refused = await extending;
      if (refused && refused.need <= amount && l.leased - l.held < amount) {
        this.stats.callsRefused++;
        return { ok: false, available: Math.max(0, refused.available + l.leased - l.held) };
      }
    }
  }

  settle(reservationId: Reservation, info: ChargeInfo): Promise<Charged | undefined> {
    return settlePromise((to) => this.settleTo(reservationId, info, to));
  }

  settleTo(reservationId: Reservation, info: ChargeInfo, to: SettleTarget): void {
    const hold = reservationId as unknown as Hold;
    if (!hold.open) return to.settled(undefined);
    hold.open = false;
    this.pending.push({ hold, info, to });
    this.scheduleFlush();
  }

  async release(reservationId: Reservation): Promise<boolean> {
    const hold = reservationId as unknown as Hold;
    if (!hold.open) return false;
    hold.open = false;
    hold.lease.held -= hold.amount;
    return true;
  }

  heldHere = (accountId: string): number => this.leases.get(accountId)?.held ?? 0;

  async balance(accountId: string): Promise<number | undefined> {
    const r = await this.db.selectFrom('accounts').select('balance').where('id', '=', accountId).executeTakeFirst();
    return r && Number(r.balance);
  }

  /**
   * Gives the leases of processes that stopped renewing back to their accounts; the number swept.
   * Like every statement here it locks the accounts before the leases (no deadlock), and deletes each
   * lease before crediting it back, so two processes sweeping at once release each lease once.
   */
  async sweep(): Promise<number> {
    return this.stats.swept(await this.statements.sweep());
  }

  /** Waits for the charges in flight, then gives back every lease (calls still holding keep theirs); usable after. */
  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    while (this.answering > 0 || this.pending.length > 0) await sleep(5);
    // A slice being leased ahead of need lands first, and goes back with the rest.
    await Promise.all([...this.leases.values()].map((l) => l.extending));
    // A lost answer: settling gives every lease back (from the ledger); if it cannot, they expire.
    if (this.lost.unsettled) await this.lost.settle();
    for (const l of this.leases.values()) if (!l.lost && l.leased > l.held) await this.giveBack(l, l.leased - l.held, 'close');
    // The rows then hold only what their entries spent: folded in, they read as spent.
    await this.syncSpent(true);
  }

  private hold(l: AccountLease, amount: number): ReserveResult {
    l.held += amount;
    l.lastUsedAt = Date.now();
    const hold: Hold = { lease: l, amount, open: true };
    return { ok: true, reservationId: hold as unknown as Reservation };
  }

  private leaseOf(accountId: string): AccountLease {
    let l = this.leases.get(accountId);
    if (!l) {
      l = { accountId, leased: 0, held: 0, chunk: 0, lastLeaseAt: 0, lastUsedAt: Date.now(), contendedUntil: 0, noPrefetchUntil: 0, prefetching: false, extending: undefined, lost: false };
      this.leases.set(accountId, l);
    }
    return l;
  }

  // ---- Leasing -----------------------------------------------------------------------------------

  /**
   * The next slice's size: one spent within a second was too small (double it, bounded); one that
   * lasted up to 4 s is right; a longer one was too large (halve it).
   */
  private nextChunk(l: AccountLease, amount: number, now: number): number {
    if (now < l.contendedUntil) return 0;
    const since = now - l.lastLeaseAt;
    const first = amount * LEASE_FIRST_CALLS;
    if (since < 1_000) return Math.min(Math.max(l.chunk, first) * 2, amount * LEASE_MAX_CALLS);
    if (since < 4_000) return Math.max(l.chunk, first);
    return Math.max(Math.floor(l.chunk / 2), first);
  }

  /** The next slice, leased while the current one still covers calls; if it is not there, calls lease as they need. */
  private async prefetch(l: AccountLease, amount: number): Promise<undefined> {
    const chunk = this.nextChunk(l, amount, Date.now());
    try {
      if (chunk > 0 && (await this.lease(l, chunk, false, 'ahead')).granted) {
        l.chunk = chunk;
        return undefined;
      }
    } catch {
      // Postgres failed: the call that needs credits next meets it, and answers for it.
    }
    l.noPrefetchUntil = Date.now() + 1_000;
    return undefined;
  }

  /** Leases at least `need` more credits for `l`, or says what was available. */
  private async extend(l: AccountLease, amount: number): Promise<Refusal | undefined> {
    const now = Date.now();
    const need = amount - (l.leased - l.held);
    l.chunk = this.nextChunk(l, amount, now);
    const want = Math.max(need, l.chunk);
    if (want > need && (await this.lease(l, want, false, 'call')).granted) return undefined;
    let r = await this.lease(l, need, true, 'call');
    if (r.granted) return undefined;
    l.contendedUntil = Date.now() + CONTENDED_MS;
    // The attempt above asked the other live holders to give back what they hold for no call.
    const asked = r.others > 0;
    if (asked) this.stats.asks++;
    if (r.expired > 0) {
      await this.sweep();
      r = await this.lease(l, need, false, 'call');
      if (r.granted) return undefined;
    }
    if (asked) {
      // Each answers within POLL_MS; try again until none is left to answer (or one never does).
      const deadline = Date.now() + ASK_DEADLINE_MS;
      do {
        await sleep(POLL_MS / 2);
        r = await this.lease(l, need, false, 'call');
        if (r.granted) return undefined;
      } while (r.waiting > 0 && Date.now() < deadline);
    }
    return { need: amount, available: r.free };
  }

  /** One attempt to lease `amount` more; `ask`: if refused, ask the account's other holders to give back. */
  private async lease(l: AccountLease, amount: number, ask: boolean, purpose: 'ahead' | 'call'): Promise<LeaseAttempt> {
    const a = l.accountId;
    const started = performance.now();
    const row = await this.lost.statement(() => this.statements.tryLease(a, amount, ask));
    this.stats.leaseSeconds.observe((performance.now() - started) / 1000);
    const granted = Number(row.granted) === 1;
    this.stats.leases[purpose][granted ? 'granted' : 'refused']++;
    const read = row.epoch === null ? undefined : Number(row.epoch);
    if (read !== undefined && this.epoch !== undefined && read < this.epoch) {
      // Read before a sweep of this process's leases that it has learned of since: a grant cannot be
      // told apart from what the sweep gave back. The row goes (and any record of it), and again.
      if (granted) await this.dropLease(this.leases.get(a) ?? l);
      return this.lease(this.leaseOf(a), amount, ask, purpose);
    }
    // A new epoch (read here, or by a statement meanwhile): every record was lost, and the grant is a
    // new row's, for a new record.
    if (read !== undefined) this.noteEpoch(read);
    const to = l.lost ? this.leaseOf(a) : l;
    if (granted) {
      // A lease row swept meanwhile is a new row now: its holds before stay on the lost record.
      to.leased += amount;
      to.lastLeaseAt = Date.now();
      this.startTimer();
    }
    return { granted, free: Number(row.free ?? 0), waiting: Number(row.waiting), expired: Number(row.expired), others: Number(row.others) };
  }

  /**
   * Gives `amount` of `l`'s lease back to the account (taken off the local lease first), clearing a
   * request to give back. A lease swept meanwhile (this process stalled) is lost instead.
   */
  private async giveBack(l: AccountLease, amount: number, reason: GiveBackReason): Promise<void> {
    l.leased -= amount;
    this.stats.givenBack[reason]++;
    try {
      await this.lost.statement(() => this.statements.giveBack(l.accountId, amount));
    } catch (err) {
      if (!isLeaseGone(err)) throw err;
      this.lose(l);
    }
  }

  private startTimer(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.tick().catch(() => undefined), POLL_MS);
    this.timer.unref();
  }

  private ticking = false;

  // Every POLL_MS while this process holds leases: answer requests to give back, give back idle
  // leases, renew the rest (a third of their life before they would expire).
  private async tick(): Promise<void> {
    if (this.ticking) return;
    this.ticking = true;
    try {
      // Lost answers first: until they are settled, no spending is folded in (it might skip a group's).
      if (this.lost.unsettled && !(await this.lost.settle())) return;
      const now = Date.now();
      for (const account_id of await this.statements.wanted()) {
        const l = this.leases.get(account_id);
        if (!l) continue;
        l.contendedUntil = now + CONTENDED_MS;
        // A slice being leased ahead lands first: given back after, it would stay here for no call
        // while the asker, told we answered, refused its call. (One statement, never a wait on others.)
        if (l.prefetching) await l.extending;
        // Clears the flag even when nothing is unused: the asker stops waiting for us.
        await this.giveBack(l, Math.max(0, l.leased - l.held), 'asked');
      }
      const forgotten: string[] = [];
      for (const l of this.leases.values()) {
        if (l.extending) continue;
        if (l.leased > l.held && now - l.lastUsedAt > IDLE_RETURN_MS) await this.giveBack(l, l.leased - l.held, 'idle');
        if (l.leased === 0 && l.held === 0 && now - l.lastUsedAt > IDLE_RETURN_MS) {
          this.leases.delete(l.accountId);
          forgotten.push(l.accountId);
        }
      }
      // What the groups spent folded in (every second, and before empty rows are looked for)... A
      // failed sync keeps its spending for the next, and must not keep the renewal below from running.
      await this.syncSpent(forgotten.length > 0).catch(() => undefined);
      // ...then their empty rows (a row leased meanwhile is not empty and stays).
      if (forgotten.length > 0) await this.lost.statement(() => this.statements.deleteEmpty(forgotten));
      if (this.leases.size === 0 && this.timer) {
        clearInterval(this.timer);
        this.timer = undefined;
      }
      if (now - this.lastRenewAt > this.leaseMs / 3) {
        this.lastRenewAt = now;
        // A new epoch: this process stalled beyond its lease time and its leases were swept.
        this.noteEpoch(await this.statements.renew());
      }
    } finally {
      this.ticking = false;
    }
  }

  /** Folds what the groups spent since the last sync into the lease rows (lease-statements.ts, sync), `now` or if a second has passed. */
  private syncSpent(now: boolean): Promise<void> {
    // After a lost answer, a sync up to the last group seen could pass over the entries of a group
    // that committed unseen: the settlement gives the leases back from the ledger instead.
    if (this.lost.unsettled) return Promise.resolve();
    return this.unsynced.syncWith(now, (ids, amounts, upTo) => this.lost.statement(() => this.statements.sync(ids, amounts, upTo)), (a) => this.leases.has(a));
  }

  /**
   * Takes note of this process's epoch as a statement read it. Epochs only grow (a sequence): an
   * older one, read by a statement that ended late, is no news. A newer one means a sweep gave back
   * every lease this process held: all are lost (their holds are charged directly).
   */
  private noteEpoch(epoch: number): void {
    if (this.epoch !== undefined && epoch <= this.epoch) return;
    if (this.epoch !== undefined) for (const l of [...this.leases.values()]) this.lose(l);
    this.epoch = epoch;
  }

  /** Gives back all that is left of `l`'s lease row (whatever the process thought it held), and forgets it. */
  private async dropLease(l: AccountLease): Promise<void> {
    this.lose(l);
    await this.lost.statement(() => this.statements.dropLease(l.accountId));
  }

  /** This process's lease on `l` is gone: holds on it are charged directly; new calls lease anew. */
  private lose(l: AccountLease): void {
    if (!l.lost) this.stats.leasesLost++;
    l.lost = true;
    // Its row is gone (swept, or dropped): what its entries spent was counted from the ledger then.
    this.unsynced.forget(l.accountId);
    if (this.leases.get(l.accountId) === l) this.leases.delete(l.accountId);
  }

  // ---- Charging ----------------------------------------------------------------------------------

  private scheduleFlush(): void {
    if (this.writing >= GROUPS_IN_FLIGHT || this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(() => {
      this.flushScheduled = false;
      void this.flush();
    });
  }

  // One group: the charges settled since the last one began, in one statement.
  private async flush(): Promise<void> {
    if (this.writing >= GROUPS_IN_FLIGHT || this.pending.length === 0) return;
    this.writing++;
    this.answering++;
    const batch = this.pending.length > MAX_GROUP ? this.pending.splice(0, MAX_GROUP) : this.pending;
    if (batch === this.pending) this.pending = [];
    let inFlight = true;
    // The group's statement has ended: the next group goes at once, before this one's calls are
    // answered, so that Postgres is not left idle while this process writes the answers.
    const ended = (): void => {
      if (!inFlight) return;
      inFlight = false;
      this.writing--;
      if (this.pending.length > 0) void this.flush();
    };
    try {
      // A lost answer not settled yet: no group goes until it is (settling gives back every lease,
      // so these calls are then charged from the balance); if it cannot be now, they get the failure.
      if (this.lost.unsettled && !(await this.lost.settle())) {
        for (const c of batch) {
          c.hold.lease.held -= c.hold.amount;
          c.to.failed(this.lost.lastFailure);
        }
        return;
      }
      const leased = batch.filter((c) => !c.hold.lease.lost);
      const lost = leased.length === batch.length ? [] : batch.filter((c) => c.hold.lease.lost);
      if (leased.length > 0) await this.chargeLeased(leased, ended);
      for (const c of lost) await this.chargeDirect(c);
    } finally {
      this.answering--;
      ended();
    }
  }

  private async chargeLeased(batch: PendingCharge[], ended: () => void): Promise<void> {
    const { entries, ids, totals } = groupColumns(batch);
    const offsets = entries.later;
    let rows: Array<{ id: string; balance: number }>;
    let lastId: number;
    const createdAt = nowIso();
    try {
      for (let attempt = 0; ; attempt++) {
        try {
          const started = performance.now();
          // A lease granted read the epoch; without one, -1 fails as a swept lease would.
          ({ balances: rows, lastId } = await this.lost.statement(() => this.statements.chargeGroup(ids, totals, entries, this.epoch ?? -1, createdAt)));
          this.stats.groupSeconds.observe((performance.now() - started) / 1000);
          this.stats.groupCharges += batch.length;
          break;
        } catch (err) {
          // Accounts are locked in id order, so this is not expected; if it happens, nothing was written.
          if ((err as { code?: string }).code !== '40P01') throw err;
          this.stats.groupDeadlocks++;
          if (attempt >= DEADLOCK_RETRIES) throw err;
        }
      }
    } catch (err) {
      this.stats.groupFailures++;
      if (outcomeUnknown(err)) {
        // The answer was lost: the group may have committed. Settled before any other group goes.
        const charged = await this.lost.settleGroup({ accountIds: ids, createdAt });
        answerLost(batch.map((c) => ({ requestId: c.info.requestId, accountId: c.hold.lease.accountId, amount: c.hold.amount, to: c.to })), createdAt, charged, err, this.stats.lostAnswers, this.lostCharges);
        return;
      }
      if (isLeaseGone(err)) {
        // Some lease of the group was swept (this process stalled): nothing was written. Give back
        // what is left of each lease, and charge each call from the available balance.
        try {
          for (const id of ids) {
            const l = this.leases.get(id);
            if (l) await this.dropLease(l);
          }
        } catch (e) {
          // Postgres failed in turn: none of the group is charged. Every call is answered (a
          // rejection here would have left them waiting and ended the process, unhandled).
          for (const c of batch) c.to.failed(e);
          return;
        }
        for (const c of batch) await this.chargeDirect(c);
        return;
      }
      // Nothing was written: the holds' credits stay in the lease, free for other calls.
      for (const c of batch) {
        c.hold.lease.held -= c.hold.amount;
        c.to.failed(err);
      }
      return;
    }
    // The next group's statement goes out (its socket write happens in this turn's microtasks),
    // then this group's calls are answered.
    ended();
    await new Promise((r) => setImmediate(r));
    const balances = new Map(rows.map((r) => [r.id, Number(r.balance)]));
    const missed: PendingCharge[] = [];
    const now = Date.now();
    // What each lease spent goes to the unsynced total once per run of its charges (a run ends where
    // the lease object changes: one account can have two in a group, one lost and one leased anew).
    let spentBy: AccountLease | undefined;
    let spent = 0;
    for (let i = 0; i < batch.length; i++) {
      const c = batch[i]!;
      const l = c.hold.lease;
      const balance = balances.get(l.accountId);
      if (balance === undefined) {
        // Our lease row was swept: charge it without the lease (or refuse it).
        if (!l.lost) this.lose(l);
        missed.push(c);
        continue;
      }
      l.held -= c.hold.amount;
      l.leased -= c.hold.amount;
      l.lastUsedAt = now;
      // Spent from the lease row, folded into it by the next sync (unless the row went meanwhile).
      if (l !== spentBy) {
        if (spentBy && !spentBy.lost) this.unsynced.add(spentBy.accountId, spent);
        spentBy = l;
        spent = 0;
      }
      spent += c.hold.amount;
      c.to.settled({ charged: c.hold.amount, balance: balance + offsets[i]! });
    }
    if (spentBy && !spentBy.lost) this.unsynced.add(spentBy.accountId, spent);
    this.unsynced.committed(lastId);
    for (const c of missed) await this.chargeDirect(c);
  }

  /** A charge whose lease is gone: debited only if the account's available balance still covers it. */
  private readonly chargeDirect = (c: PendingCharge): Promise<void> => chargeDirect(this.statements, this.stats, this.lostCharges, c);
}
