import { SerializerSelector, type SerializerFactory } from '@fastify/fast-json-stringify-compiler';

export type LazySerializers = SerializerFactory & {
  /** Compiles every serializer not compiled yet; throws on the first schema that does not compile. */
  compileAll(): void;
};

/**
 * Fastify's own response serializers (fast-json-stringify), each compiled when its route first
 * answers with that status rather than when the server starts: compiling all of them took about a
 * tenth of start-up. Given to Fastify as `schemaController.compilersFactory.buildSerializer`.
 */
export function lazySerializers(): LazySerializers {
  const build = SerializerSelector();
  const pending = new Set<() => (doc: unknown) => string>();
  const factory: SerializerFactory = (externalSchemas, options) => {
    const compileFor = build(externalSchemas, options);
    return (route) => {
      let serialize: ((doc: unknown) => string) | undefined;
      const compile = () => {
        serialize ??= compileFor(route);
        pending.delete(compile);
        return serialize;
      };
      pending.add(compile);
      return (doc) => (serialize ?? compile())(doc);
    };
  };
  return Object.assign(factory, { compileAll: () => [...pending].forEach((compile) => compile()) });
}
