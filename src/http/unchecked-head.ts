import { OutgoingMessage, type ServerResponse } from 'node:http';

// Node checks each header it is handed (writeHead, setHeader) with two regular expressions, its name
// against the token characters and its value against control characters: about 770 instructions a
// header, 8% of the echo's with a keyed answer's 9 headers (docs/benchmarks.md, "Where the time goes",
// 2026-12-08). Headers already in the response's own table (what setHeader fills, after its checks)
// are not checked again when the head is written. A keyed answer's names are constants and its
// values the gateway's own (its request ids, counts, constants: no CR, LF or other control character
// can be in them), so they are put in that table as setHeader would leave them. Node keeps the table
// under a symbol of its own; where it is not found (another Node), or the response already has a
// header, writeHead is given the headers and checks them as usual.
const kOutHeaders = Object.getOwnPropertySymbols(new OutgoingMessage()).find((s) => s.description === 'kOutHeaders');

/** Whether this Node's table was found, so that keyed heads skip the checks (a test fails where not). */
export const headsUnchecked = kOutHeaders !== undefined;

/** A header as Node's table holds it: [name, value], under its lower-case name. */
export type HeadEntry = readonly [string, string];
/** Headers as Node's table holds them: lower-case name → [name, value]. */
export type HeadTable = Readonly<Record<string, HeadEntry>>;

/**
 * `res.writeHead(status, headers)` for headers the gateway made itself: lower-case names, values of
 * printable ASCII only (see above). The same bytes on the wire, in the table's order.
 */
export function writeOwnHead(res: ServerResponse, status: number, table: HeadTable): void {
  const slots = res as unknown as Record<symbol, unknown>;
  if (kOutHeaders === undefined || slots[kOutHeaders] != null) {
    const pairs: string[] = [];
    for (const name in table) pairs.push(name, table[name]![1]);
    res.writeHead(status, pairs);
    return;
  }
  slots[kOutHeaders] = table;
  res.writeHead(status);
}
