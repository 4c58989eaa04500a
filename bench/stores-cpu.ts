// The stores' processes (Postgres, Redis) while bench/http.ts measures the servers: found from
// /proc, pinned to wrk's CPU (at real-time priority when asked), and put back after.
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The host's Postgres and Redis processes, with the fields of their /proc stat after the command's name. */
export function storeProcesses(): Array<{ pid: string; which: 'postgres' | 'redis'; fields: string[] }> {
  const out: Array<{ pid: string; which: 'postgres' | 'redis'; fields: string[] }> = [];
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      continue; // exited meanwhile
    }
    const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    const which = comm === 'postgres' ? 'postgres' : comm === 'redis-server' ? 'redis' : undefined;
    if (which) out.push({ pid, which, fields: stat.slice(stat.lastIndexOf(')') + 2).split(' ') });
  }
  return out;
}

/**
 * On Postgres + Redis, the stores' processes (and the backends Postgres forks meanwhile, which inherit
 * the postmaster's CPUs) run on wrk's CPU while the servers are measured, so that the server's CPU is
 * its own, as bare Fastify's is, and as on a deployment, whose stores are other hosts. Left to the
 * scheduler, Postgres's backend ran on the server's CPU part of the time: the server's CPU a request
 * rose and the group charge waited for a CPU (where-the-time-goes, 2026-11-29 12:10).
 *
 * With `realtime` (`BENCH_STORES_REALTIME=1`) they also run at real-time priority (SCHED_RR) there,
 * so that they do not wait behind wrk for that CPU, as they would not on hosts of their own: without
 * it the group charge's backend spent over a quarter of a run runnable but waiting for wrk, which
 * set the p99 over 50 accounts. It is not the default because it distorts the other way: Postgres,
 * answering sooner, commits smaller groups and spends more CPU a call, which wrk then lacks, so the
 * throughput falls (where-the-time-goes, 2026-12-03). The kernel's real-time throttling (95% of each
 * second by default) still leaves wrk a share.
 *
 * Gives back what puts each process back as it was (a run killed before that leaves them pinned:
 * `taskset -a -c -p 0-1 <pid>` and `chrt -a -o -p 0 <pid>` for each Postgres and Redis process undo it).
 */
export async function pinStoresTo(wrkCpu: string, cpuCount: number, realtime: boolean): Promise<() => Promise<void>> {
  const before: Array<{ pid: string; mask: string; policy: string[] }> = [];
  for (const { pid } of storeProcesses()) {
    try {
      const mask = /affinity mask: ([0-9a-f]+)/.exec((await run('taskset', ['-p', pid])).stdout)?.[1];
      if (!mask) continue;
      const policy = realtime ? chrtArgs((await run('chrt', ['-p', pid])).stdout) : [];
      await run('taskset', ['-a', '-c', '-p', wrkCpu, pid]);
      before.push({ pid, mask, policy });
      if (realtime) await run('chrt', ['-a', '-r', '-p', '10', pid]);
    } catch (err) {
      // A backend that exited since the list was read (a client of the set-up disconnecting) is no
      // concern; until 2026-12-03 it ended the loop, leaving the processes after it unpinned.
      if (!existsSync(`/proc/${pid}`)) continue;
      // Not allowed (another user's processes): measured unpinned, and said so.
      console.error(`the stores' processes could not all be pinned to CPU ${wrkCpu}${realtime ? ' at real-time priority' : ''} (${(err as Error).message.split('\n')[0]}): they share the server's CPU, or wait behind wrk, in this run`);
      break;
    }
  }
  return async () => {
    const known = new Set(before.map((b) => b.pid));
    for (const { pid, mask, policy } of before) {
      await run('taskset', ['-a', '-p', mask, pid]).catch(() => undefined);
      if (policy.length > 0) await run('chrt', ['-a', ...policy, pid]).catch(() => undefined);
    }
    // Backends forked meanwhile inherited the pinning (and the priority); those still alive go back
    // to the defaults.
    for (const { pid } of storeProcesses()) {
      if (known.has(pid)) continue;
      await run('taskset', ['-a', '-c', '-p', `0-${cpuCount - 1}`, pid]).catch(() => undefined);
      if (realtime) await run('chrt', ['-a', '-o', '-p', '0', pid]).catch(() => undefined);
    }
  };
}

/** `chrt -p`'s report of a process's policy, as the arguments that set it again (`-o -p 0`...). */
export function chrtArgs(report: string): string[] {
  const policy = /policy: SCHED_(\w+)/.exec(report)?.[1];
  const priority = /priority: (\d+)/.exec(report)?.[1] ?? '0';
  const flag = { OTHER: '-o', BATCH: '-b', IDLE: '-i', FIFO: '-f', RR: '-r', DEADLINE: undefined }[policy ?? ''];
  if (!flag) throw new Error(`chrt reported a policy this bench does not restore: ${report.trim()}`);
  return [flag, '-p', priority];
}
