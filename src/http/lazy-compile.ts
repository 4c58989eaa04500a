/**
 * Compilations put off until first use (request validators, response serializers: compiling all of
 * them took about a fifth of start-up), with a way for tests to run every one still pending.
 */
export class LazyCompiles {
  private readonly pending = new Set<() => unknown>();

  /** `build` runs once, on the first call of the returned getter or at `compileAll`. */
  defer<T>(build: () => T): () => T {
    let built: { value: T } | undefined;
    const get = (): T => {
      if (!built) {
        built = { value: build() };
        this.pending.delete(get);
      }
      return built.value;
    };
    this.pending.add(get);
    return get;
  }

  /** Compiles everything not compiled yet; throws on the first that does not compile. */
  compileAll(): void {
    for (const get of [...this.pending]) get();
  }
}
