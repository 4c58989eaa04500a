// How sdg-client tells a failure: one line on stderr (what the gateway sent written out, as it may
// hold terminal escapes), or with --json an error object; and the exit code that says its kind.
import { ExportError, NetworkError, SdgApiError, SdgError, UnreadableAnswerError, WaitTimeoutError } from '../errors.js';
import { BatchItemsError, CliError, exitCodeFor, exitCodes } from './exit-codes.js';
import { extrasOf, visible } from './output.js';

/** A failure of Node's own (a file that cannot be written): its errno says it, not a stack. */
const isSystemError = (e: unknown): e is NodeJS.ErrnoException => e instanceof Error && typeof (e as NodeJS.ErrnoException).code === 'string' && typeof (e as NodeJS.ErrnoException).syscall === 'string';

/**
 * The --json error object: always `{ code, status, message, details, requestId }` (status and
 * requestId null when no answer of the gateway's is behind it), codes in snake_case as the gateway's.
 */
function errorObject(error: unknown): Record<string, unknown> {
  const key = error instanceof SdgError && error.idempotencyKey ? { idempotencyKey: error.idempotencyKey } : {};
  const shape = (code: string, message: string, o: { status?: number; details?: Record<string, unknown> | null; requestId?: string | undefined } = {}) => ({
    code,
    status: o.status ?? null,
    message,
    details: o.details ?? null,
    requestId: o.requestId ?? null,
    ...key,
  });
  if (error instanceof SdgApiError) return shape(error.code, error.message, { status: error.status, details: error.details ?? null, requestId: error.requestId });
  if (error instanceof CliError) return shape(error.code, error.message, { details: error.details ?? null });
  if (error instanceof NetworkError) return shape('network_error', error.message, { details: { timedOut: error.timedOut, maybeCharged: error.maybeCharged } });
  if (error instanceof UnreadableAnswerError) return shape('unreadable_answer', error.message, { status: error.status, requestId: error.requestId, details: { credits: error.credits ?? null, timedOut: error.timedOut } });
  if (error instanceof WaitTimeoutError) return shape('wait_timeout', error.message, { details: error.exportId ? { exportId: error.exportId } : error.batchId ? { batchId: error.batchId } : null });
  if (error instanceof ExportError) return shape('export_failed', error.message, { details: { exportId: error.exportId } });
  if (error instanceof BatchItemsError) return shape('batch_items_failed', error.message);
  // A failure of Node's own: its errno (ENOSPC, EACCES) is the code.
  if (isSystemError(error)) return shape(error.code ?? 'error', error.message);
  return shape('error', error instanceof Error ? error.message : String(error));
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
  process.stderr.write(`${JSON.stringify({ error: { code: 'usage', status: null, message: message.replace(/^error: /, ''), details: null, requestId: null }, exitCode: exitCodes.usage })}\n`);
  return exitCodes.usage;
}
