import type { FastifyBaseLogger } from 'fastify';
import type { Bindings, ChildLoggerOptions, Level, Logger } from 'pino';

// Fastify gives every request a child logger (pino's child() copies bindings and serializers: about
// a microsecond). Most requests never log, so the child is made on the first line actually written.
class LazyChildLogger {
  private made: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly opts: ChildLoggerOptions,
  ) {}

  private get real(): FastifyBaseLogger {
    return (this.made ??= this.parent.child(this.bindings, this.opts));
  }

  get level(): string {
    return this.made?.level ?? this.parent.level;
  }
  set level(v: string) {
    this.real.level = v;
  }

  isLevelEnabled(level: string): boolean {
    const p = this.parent as Partial<Pick<Logger, 'isLevelEnabled'>>;
    return p.isLevelEnabled ? p.isLevelEnabled(level) : true;
  }

  private log(level: Level, args: unknown[]): void {
    if (this.isLevelEnabled(level)) (this.real[level] as (...a: unknown[]) => void)(...args);
  }

  // Methods on the prototype: a request's logger is one small object, not seven closures.
  fatal(...a: unknown[]): void {
    this.log('fatal', a);
  }
  error(...a: unknown[]): void {
    this.log('error', a);
  }
  warn(...a: unknown[]): void {
    this.log('warn', a);
  }
  info(...a: unknown[]): void {
    this.log('info', a);
  }
  debug(...a: unknown[]): void {
    this.log('debug', a);
  }
  trace(...a: unknown[]): void {
    this.log('trace', a);
  }
  silent(): void {}

  child(bindings: Bindings, opts?: ChildLoggerOptions): FastifyBaseLogger {
    return this.real.child(bindings, opts);
  }
}

export function lazyChildLogger(logger: FastifyBaseLogger, bindings: Bindings, opts: ChildLoggerOptions): FastifyBaseLogger {
  // A route with a level of its own needs its own child to apply it.
  if (opts.level) return logger.child(bindings, opts);
  return new LazyChildLogger(logger, bindings, opts) as unknown as FastifyBaseLogger;
}
