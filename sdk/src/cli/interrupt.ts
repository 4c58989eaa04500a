// Ctrl-C (SIGINT) or SIGTERM while a command waits for a job or downloads a file: the wait and the
// transfer are aborted, so that the command can say what it leaves (the export it generated, the part
// file it kept) before it exits 130 or 143, as a shell expects. A second signal exits at once.
import { CliError } from './exit-codes.js';

const SIGNALS = { SIGINT: 2, SIGTERM: 15 } as const;
type StopSignal = keyof typeof SIGNALS;

export interface Interruptible {
  signal: AbortSignal;
  /** The error to throw for the signal that stopped the command (a CliError with its exit code), or the error as it came. */
  errorFor(error: unknown): unknown;
  dispose(): void;
}

export function interruptible(): Interruptible {
  const controller = new AbortController();
  let stoppedBy: StopSignal | undefined;
  const handlers = (Object.keys(SIGNALS) as StopSignal[]).map((name) => {
    const handler = () => {
      if (stoppedBy) process.exit(128 + SIGNALS[name]);
      stoppedBy = name;
      controller.abort(new CliError(`Stopped by ${name}.`, 'interrupted', 128 + SIGNALS[name], { signal: name }));
    };
    process.on(name, handler);
    return [name, handler] as const;
  });
  return {
    signal: controller.signal,
    errorFor: (error) => (stoppedBy ? controller.signal.reason : error),
    dispose: () => {
      for (const [name, handler] of handlers) process.off(name, handler);
    },
  };
}
