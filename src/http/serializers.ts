import { SerializerSelector, type SerializerFactory } from '@fastify/fast-json-stringify-compiler';
import { LazyCompiles } from './lazy-compile.js';

export type LazySerializers = SerializerFactory & Pick<LazyCompiles, 'compileAll'>;

/**
 * Fastify's own response serializers (fast-json-stringify), each compiled when its route first
 * answers with that status rather than when the server starts. Given to Fastify as
 * `schemaController.compilersFactory.buildSerializer`.
 */
export function lazySerializers(): LazySerializers {
  const build = SerializerSelector();
  const lazy = new LazyCompiles();
  const factory: SerializerFactory = (externalSchemas, options) => {
    const compileFor = build(externalSchemas, options);
    return (route) => {
      const serializer = lazy.defer(() => compileFor(route));
      return (doc) => serializer()(doc);
    };
  };
  return Object.assign(factory, { compileAll: () => lazy.compileAll() });
}
