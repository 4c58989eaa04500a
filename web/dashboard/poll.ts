// A value read again every few seconds while the tab is visible, waiting longer while the gateway
// refuses (429, 503): the reads spend the account's rate limit, shared by all its keys.
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from './api.js';

const MAX_WAIT_MS = 5 * 60_000;

/** The wait after the `failures`-th failure in a row: doubling from `every`, and never less than Retry-After asks. */
export function waitAfter(e: unknown, failures: number, every: number): number {
  const doubling = Math.min(MAX_WAIT_MS, every * 2 ** failures);
  const asked = e instanceof ApiError && e.retryAfter !== undefined ? e.retryAfter * 1000 : 0;
  return Math.max(doubling, asked);
}

/** The same failure again (the next 429): the first is kept, so its alert is not announced anew. */
export function sameError(a: unknown, b: unknown): boolean {
  if (a instanceof ApiError && b instanceof ApiError) return a.status === b.status && a.code === b.code;
  return a instanceof Error && b instanceof Error && a.message === b.message;
}

export interface Polled<T> {
  data: T | undefined;
  /** When `data` was read. */
  at: Date | undefined;
  /** The last read's failure, until a read succeeds. */
  error: unknown;
  /** Reads at once (a Try again button). */
  retry(): void;
}

export function usePolled<T>(load: () => Promise<T>, every: number): Polled<T> {
  const [state, setState] = useState<{ data?: T; at?: Date; error?: unknown }>({});
  const now = useRef<() => void>(() => undefined);
  useEffect(() => {
    let live = true;
    let running = false;
    let failures = 0;
    let timer: ReturnType<typeof setTimeout> | undefined;
    // When the next read is due; kept while the tab is hidden, so showing it again reads at once only
    // if the wait (a Retry-After, say) is over.
    let due = 0;
    const plan = (ms: number) => {
      clearTimeout(timer);
      due = Date.now() + ms;
      if (!document.hidden) timer = setTimeout(run, ms);
    };
    const run = () => {
      if (!live || running || document.hidden) return;
      running = true;
      clearTimeout(timer);
      load().then(
        (data) => {
          running = false;
          if (!live) return;
          failures = 0;
          setState({ data, at: new Date() });
          plan(every);
        },
        (e: unknown) => {
          running = false;
          if (!live) return;
          failures++;
          setState((s) => ({ ...s, error: s.error !== undefined && sameError(s.error, e) ? s.error : e }));
          plan(waitAfter(e, failures, every));
        },
      );
    };
    // A hidden tab reads nothing (its timer is dropped) until it is shown again.
    const onVisibility = () => (document.hidden ? clearTimeout(timer) : plan(Math.max(0, due - Date.now())));
    document.addEventListener('visibilitychange', onVisibility);
    now.current = run;
    run();
    return () => {
      live = false;
      clearTimeout(timer);
      document.removeEventListener('visibilitychange', onVisibility);
    };
  }, []);
  return { data: state.data, at: state.at, error: state.error, retry: () => now.current() };
}
