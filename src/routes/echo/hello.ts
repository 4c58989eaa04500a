import { Type } from '@sinclair/typebox';
import type { App } from '../../http/types.js';
import { single } from '../../http/schemas.js';
import { nowIso } from '../../domain/ids.js';

export const EchoHello = Type.Object({ message: Type.Literal('hello'), accountId: Type.String(), timestamp: Type.String({ format: 'date-time' }) }, { title: 'Hello' });

export function registerEchoHello(app: App): void {
  app.get(
    '/echo/v1/hello',
    {
      schema: {
        operationId: 'echoHello',
        tags: ['echo'],
        summary: 'Says hello: checks a key and connectivity.',
        description: 'Answers with the account the key belongs to and the server’s time.',
        response: { 200: single(EchoHello, 'Hello.') },
      },
    },
    (request) => ({
      data: { message: 'hello' as const, accountId: request.auth!.accountId, timestamp: nowIso() },
      meta: { requestId: request.id, cached: false },
    }),
  );
}
