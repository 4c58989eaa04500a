// A TCP proxy in front of Postgres that loses one chosen statement's answer, or the statement itself,
// and then resets the connection: what a network failure at that instant does. The statement is
// found by its text in the wire protocol (a simple Query, or the Parse of an extended one up to its
// Sync). Armed once per `arm` call; everything else passes through unchanged.
import net from 'node:net';

export type Loss = 'answer' | 'request';

interface Batch {
  texts: string[];
  dropping: boolean;
}

export class PgAnswerLoss {
  private server: net.Server | undefined;
  private armed: { pattern: string; loss: Loss; hit: () => void; downForMs: number } | undefined;
  /** Until when (ms since the epoch) connections are refused: Postgres out of reach. */
  private downUntil = 0;
  private readonly sockets = new Set<net.Socket>();
  port = 0;

  constructor(
    private readonly target: { host: string; port: number },
  ) {}

  async start(): Promise<void> {
    this.server = net.createServer((client) => this.connect(client));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as net.AddressInfo).port;
  }

  /**
   * The next statement whose text holds `pattern` loses its answer (it runs) or its request (it never
   * reaches Postgres); resolves when it has. With `downForMs`, Postgres is then out of reach that
   * long: every connection is reset, and new ones at once.
   */
  arm(pattern: string, loss: Loss = 'answer', opts: { downForMs?: number } = {}): Promise<void> {
    return new Promise((hit) => (this.armed = { pattern, loss, hit, downForMs: opts.downForMs ?? 0 }));
  }

  /** Whether connections are refused now (an armed `downForMs`). */
  get down(): boolean {
    return Date.now() < this.downUntil;
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private connect(client: net.Socket): void {
    if (this.down) {
      client.destroy();
      return;
    }
    const upstream = net.connect(this.target.port, this.target.host);
    this.sockets.add(client).add(upstream);
    const end = () => {
      client.destroy();
      upstream.destroy();
      this.sockets.delete(client);
      this.sockets.delete(upstream);
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);

    const batches: Batch[] = [];
    let unsent: Buffer[] = [];
    let texts: string[] = [];
    let lastParse = '';
    const named = new Map<string, string>();
    // Frontend messages: held until the end of their batch (Sync, or a simple Query), then sent, or not.
    const endBatch = (batch: Batch) => {
      const armed = this.armed;
      if (armed && batch.texts.some((t) => t.includes(armed.pattern))) {
        this.armed = undefined;
        if (armed.downForMs > 0) this.downUntil = Date.now() + armed.downForMs;
        armed.hit();
        if (armed.loss === 'request') return end();
        batch.dropping = true;
      }
      batches.push(batch);
      upstream.write(Buffer.concat(unsent));
      unsent = [];
    };
    client.on(
      'data',
      frames(true, (type, message) => {
        unsent.push(message);
        const body = message.subarray(5);
        if (type === 'P') {
          const [name, at] = cString(body, 0);
          [lastParse] = cString(body, at);
          named.set(name, lastParse);
        } else if (type === 'B') {
          const [, at] = cString(body, 0);
          const [statement] = cString(body, at);
          texts.push(statement === '' ? lastParse : (named.get(statement) ?? ''));
        } else if (type === 'Q') {
          endBatch({ texts: [cString(body, 0)[0]], dropping: false });
        } else if (type === 'S') {
          endBatch({ texts, dropping: false });
          texts = [];
        } else if (type === undefined || type === 'X' || type === 'p') {
          // The startup message, a password, the end: not part of a batch.
          upstream.write(Buffer.concat(unsent));
          unsent = [];
        }
      }),
    );
    // Backend messages: a batch's answer ends with ReadyForQuery ('Z').
    upstream.on(
      'data',
      frames(false, (type, message) => {
        const batch = batches[0];
        if (batch?.dropping) {
          if (type === 'Z') {
            end();
            // Out of reach: the other connections go too.
            if (this.down) for (const s of this.sockets) s.destroy();
          }
          return;
        }
        client.write(message);
        if (type === 'Z') batches.shift();
      }),
    );
  }
}

/** Splits a stream into protocol messages; the frontend's first (startup) message has no type byte. */
function frames(frontend: boolean, on: (type: string | undefined, message: Buffer) => void): (data: Buffer) => void {
  let buffer = Buffer.alloc(0);
  let started = !frontend;
  return (data) => {
    buffer = Buffer.concat([buffer, data]);
    for (;;) {
      if (!started) {
        if (buffer.length < 8) return;
        const length = buffer.readInt32BE(0);
        if (buffer.length < length) return;
        // An SSLRequest (80877103) is followed by the real startup message.
        if (buffer.readInt32BE(4) !== 80877103) started = true;
        on(undefined, buffer.subarray(0, length));
        buffer = buffer.subarray(length);
        continue;
      }
      if (buffer.length < 5) return;
      const length = buffer.readInt32BE(1);
      if (buffer.length < 1 + length) return;
      on(String.fromCharCode(buffer[0]!), buffer.subarray(0, 1 + length));
      buffer = buffer.subarray(1 + length);
    }
  };
}

function cString(b: Buffer, at: number): [string, number] {
  const end = b.indexOf(0, at);
  return [b.toString('utf8', at, end), end + 1];
}
