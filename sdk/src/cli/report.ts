// How sdg-client tells a failure: one line on stderr (what the gateway sent written out, as it may
// hold terminal escapes), or with --json an error object; and the exit code that says its kind.
import { NetworkError, SdgApiError, SdgError, UnreadableAnswerError } from '../errors.js';
import { CliError, exitCodeFor, exitCodes } from './exit-codes.js';
import { extrasOf, visible } from './output.js';

/** A failure of Node's own (a file that cannot be written): its errno says it, not a stack. */
const isSystemError = (e: unknown): e is NodeJS.ErrnoException => e instanceof Error && typeof (e as NodeJS.ErrnoException).code === 'string' && typeof (e as NodeJS.ErrnoException).syscall === 'string';

function errorObject(error: unknown): Record<string, unknown> {
  const key = error instanceof SdgError && error.idempotencyKey ? { idempotencyKey: error.idempotencyKey } : {};
  if (error instanceof SdgApiError) return { code: error.code, status: error.status, message: error.message, details: error.details ?? null, requestId: error.requestId ?? null, ...key };
  if (error instanceof CliError) return { code: error.code, message: error.message, details: error.details ?? null };
  if (error instanceof NetworkError) return { code: error.name, message: error.message, timedOut: error.timedOut, maybeCharged: error.maybeCharged, ...key };
  if (error instanceof UnreadableAnswerError) return { code: error.name, status: error.status, message: error.message, requestId: error.requestId ?? null, credits: error.credits ?? null, ...key };
  if (isSystemError(error)) return { code: error.code, message: error.message };
  return { code: error instanceof SdgError ? error.name : 'error', message: error instanceof Error ? error.message : String(error) };
}

/** Writes the failure to stderr and answers the exit code. */
export function report(error: unknown, json: boolean): number {
  const exitCode = exitCodeFor(error);
  if (json) {
    process.stderr.write(`${JSON.stringify({ error: errorObject(error), exitCode, ...extrasOf(error) })}\n`);
    return exitCode;
  }
  const msg = error instanceof Error ? error.message : String(error);
  // The code comes from the server too: written out like the message.
  const code = error instanceof SdgApiError && error.status ? `${visible(error.code)}: ` : '';
  process.stderr.write(`sdg-client: ${code}${visible(msg)}\n`);
  if (exitCode === exitCodes.failure && error instanceof Error && error.stack && !(error instanceof SdgError) && !isSystemError(error)) process.stderr.write(`${error.stack}\n`);
  return exitCode;
}

/** A usage error of commander's (a missing argument, an unknown option) under --json. */
export function reportUsage(message: string): number {
  process.stderr.write(`${JSON.stringify({ error: { code: 'usage', message: message.replace(/^error: /, '') }, exitCode: exitCodes.usage })}\n`);
  return exitCodes.usage;
}
