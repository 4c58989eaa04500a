// The secret that signs cursors and download links, with the one it replaced. Answers are signed
// with the current secret only; what comes back is accepted under either, so SECRET can be changed
// (with the old value as SECRET_PREVIOUS) without refusing the cursors and links already given out.
import { timingSafeEqual } from 'node:crypto';

export interface SigningSecrets {
  readonly current: string;
  /** Still accepted, never used to sign (SECRET_PREVIOUS). */
  readonly previous: readonly string[];
}

/**
 * Whether `got` is the signature `sign` makes with any of the secrets. Every secret is tried, and
 * each comparison takes the same time, so the answer's timing does not say which secret matched.
 */
export function signedByAny(secrets: SigningSecrets, got: string, sign: (secret: string) => string): boolean {
  const g = Buffer.from(got);
  let ok = false;
  for (const s of [secrets.current, ...secrets.previous]) {
    const want = Buffer.from(sign(s));
    if (want.length === g.length && timingSafeEqual(want, g)) ok = true;
  }
  return ok;
}
