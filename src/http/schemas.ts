// Envelopes of the contract (docs/spec/contract.md, section 3) as TypeBox builders, so every route's schema states its exact shape.
import { Type, type TSchema } from '@sinclair/typebox';

export const Meta = Type.Object({ requestId: Type.String(), cached: Type.Boolean() });

export const single = <T extends TSchema>(data: T) => Type.Object({ data, meta: Meta });

export const paginated = <T extends TSchema>(item: T) =>
  Type.Object({
    items: Type.Array(item),
    hasNextPage: Type.Boolean(),
    nextCursor: Type.Union([Type.String(), Type.Null()]),
    requestId: Type.String(),
    cached: Type.Boolean(),
  });

export const ErrorEnvelope = Type.Object({
  error: Type.Object({
    code: Type.String(),
    message: Type.String(),
    details: Type.Optional(Type.Object({}, { additionalProperties: true })),
  }),
  meta: Type.Object({ requestId: Type.String() }),
});

export const PageQuery = Type.Object(
  {
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 2048, description: 'nextCursor of the previous page' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
  },
  { additionalProperties: false },
);

export const NumericId = Type.String({ pattern: '^[0-9]{1,19}$', description: 'numeric id' });
