import { Type, type Static } from '@sinclair/typebox';
import type { App } from '../../http/types.js';
import { asPayload } from '../../http/json-text.js';
import { single } from '../../http/schemas.js';
import { nowIso } from '../../domain/ids.js';

export const EchoHello = Type.Object({ message: Type.Literal('hello'), accountId: Type.String(), timestamp: Type.String({ format: 'date-time' }) }, { title: 'Hello' });

const Answer = single(EchoHello, 'Hello.');

/**
 * The answer as JSON text, not an object for the schema's serializer: each value is the gateway's
 * own (an account id and a request id of [A-Za-z0-9_-], an ISO time), with nothing to escape, and
 * the serializer's per-character escape loop and date check were about 3% of the echo's
 * instructions. Tests check the text against the schema (json-text.ts).
 */
const hello = (accountId: string, requestId: string): Static<typeof Answer> => {
  const text = `{"data":{"message":"hello","accountId":"${accountId}","timestamp":"${nowIso()}"},"meta":{"requestId":"${requestId}","cached":false}}`;
  return asPayload(text, text.length);
};

export function registerEchoHello(app: App): void {
  app.get(
    '/echo/v1/hello',
    {
      schema: {
        operationId: 'echoHello',
        tags: ['echo'],
        summary: 'Says hello: checks a key and connectivity.',
        description: 'Answers with the account the key belongs to and the server’s time.',
        response: { 200: Answer },
      },
    },
    (request) => hello(request.auth!.accountId, request.id),
  );
}
