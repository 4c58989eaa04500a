import { Type } from '@sinclair/typebox';
import type { App } from '../../http/types.js';
import { single } from '../../http/schemas.js';
import { nowIso } from '../../domain/ids.js';

export const EchoHello = Type.Object({ message: Type.Literal('hello'), accountId: Type.String(), timestamp: Type.String({ format: 'date-time' }) });

export function registerEchoHello(app: App): void {
  app.get(
    '/echo/v1/hello',
    { schema: { operationId: 'echoHello', tags: ['echo'], summary: 'Says hello: checks a key and connectivity.', response: { 200: single(EchoHello) } } },
    (request) => ({
      data: { message: 'hello' as const, accountId: request.auth!.accountId, timestamp: nowIso() },
      meta: { requestId: request.id, cached: false },
    }),
  );
}
