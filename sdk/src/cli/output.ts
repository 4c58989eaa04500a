// Where sdg-client writes: results on stdout (JSON with --json, text otherwise), JSON Lines to a
// file or stdout, progress bars and notes on stderr (bars only when stderr is a terminal).
import { once } from 'node:events';
import cliProgress from 'cli-progress';
import type { Credits } from '../result.js';

export interface Output {
  json: boolean;
  progress: boolean;
}

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

// With the text-direction controls (U+061C, U+200E, U+200F, U+202A-U+202E, U+2066-U+2069), with
// which a text reads reversed, and what follows it on the line.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
/**
 * `text` with control characters written out (`\x1b`), newlines and tabs kept: readable output
 * carries text others wrote (tweets, profiles, a key's name), and a terminal would act on an escape
 * sequence in it (retitle, clear, recolour, fake lines). JSON output escapes them itself.
 */
export function visible(text: string): string {
  return text.replace(CONTROL, (c) => {
    const code = c.charCodeAt(0);
    return code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}

/** Readable output on stdout. */
export function say(text: string): void {
  process.stdout.write(visible(text));
}

let barShown = false;

export function note(line: string): void {
  // A note while a bar is drawn starts on a line of its own; the bar redraws below it.
  process.stderr.write(`${barShown ? '\n' : ''}${visible(line)}\n`);
}

export function creditsNote(out: Output, credits: Credits | undefined, charged = credits?.charged): void {
  if (out.json || !credits) return;
  note(`${charged ?? 0} credits charged, ${credits.remaining} left`);
}

/** JSON Lines on stdout (a list under --json). */
export class Lines {
  count = 0;
  async write(value: unknown): Promise<void> {
    this.count++;
    if (!process.stdout.write(`${JSON.stringify(value)}\n`)) await once(process.stdout, 'drain');
  }
}

/** A progress bar on stderr, or nothing when stderr is not a terminal or --no-progress was given. */
export interface Bar {
  update(value: number, payload?: Record<string, unknown>): void;
  setTotal(total: number): void;
  stop(): void;
}

const none: Bar = { update: () => undefined, setTotal: () => undefined, stop: () => undefined };

function bar(out: Output, format: string, total: number): Bar {
  if (!out.progress || !process.stderr.isTTY) return none;
  const b = new cliProgress.SingleBar({ format, stream: process.stderr, hideCursor: true, clearOnComplete: false }, cliProgress.Presets.shades_classic);
  b.start(total, 0, {});
  barShown = true;
  return {
    update: (v, p) => b.update(v, p ?? {}),
    setTotal: (t) => b.setTotal(t),
    stop: () => {
      b.stop();
      barShown = false;
    },
  };
}

/** Runs `fn` with a progress bar that is stopped however it ends (a running bar keeps the process alive). */
export async function withBar<T>(out: Output, format: string, total: number, fn: (bar: Bar) => Promise<T>): Promise<T> {
  const b = bar(out, format, total);
  try {
    return await fn(b);
  } finally {
    b.stop();
  }
}

const EXTRAS = Symbol('sdg-client extras');

/**
 * Marks an error with what the --json error object adds (`nextCursor` and `resume` of a list cut
 * short, `exportId` of an export generated before the failure).
 */
export function withExtras(error: unknown, extras: Record<string, unknown>): unknown {
  if (error !== null && typeof error === 'object') {
    const e = error as Record<symbol, Record<string, unknown> | undefined>;
    e[EXTRAS] = { ...e[EXTRAS], ...extras };
  }
  return error;
}

export function extrasOf(error: unknown): Record<string, unknown> {
  return (error !== null && typeof error === 'object' ? (error as Record<symbol, Record<string, unknown> | undefined>)[EXTRAS] : undefined) ?? {};
}

/** Words for a shell: bare when plain, else single-quoted. */
export function shellWords(words: string[]): string {
  return words.map((w) => (/^[A-Za-z0-9_@%+=:,./-]+$/.test(w) ? w : `'${w.replaceAll("'", "'\\''")}'`)).join(' ');
}
