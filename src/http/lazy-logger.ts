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

/**
 * The app's root logger: pino, except that the child Fastify asks for on every request is made only
 * when something is written to it. Done here rather than with Fastify's childLoggerFactory option,
 * because Fastify checks the seven methods of every custom factory's logger on every request.
 */
export function withLazyChildren(root: Logger): FastifyBaseLogger {
  // Inherits every method and setting of `root`; only child() differs. Children made for real come
  // from root's own child(), so bindings and serializers work as pino's always do.
  const facade = Object.create(root) as Logger;
  const child = (bindings: Bindings, opts?: ChildLoggerOptions): FastifyBaseLogger =>
    // A route with a level of its own needs its own child to apply it.
    opts?.level ? root.child(bindings, opts) : (new LazyChildLogger(root as unknown as FastifyBaseLogger, bindings, opts ?? {}) as unknown as FastifyBaseLogger);
  Object.defineProperty(facade, 'child', { value: child, enumerable: false });
  return facade as unknown as FastifyBaseLogger;
}
