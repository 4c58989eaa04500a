// A TCP proxy that can be cut off as a network partition cuts a host off: while cut, nothing is
// forwarded either way and new connections are accepted but never reach the target; no connection
// is reset, so the client's side sees only silence. Healing forwards what was held, in order, as
// TCP's retransmissions would deliver it. `silenceOpen` cuts only the connections already made (a NAT
// or firewall that forgot them), while new ones pass.
import net from 'node:net';

interface Pair {
  client: net.Socket;
  server: net.Socket | undefined;
  /** Held while cut: to the server, to the client. */
  up: Buffer[];
  down: Buffer[];
  /** Cut on its own (silenceOpen). */
  silenced: boolean;
  /** The target closed its side while cut: passed on once what was held is delivered. */
  closed: boolean;
}

export class TcpPartition {
  private server: net.Server | undefined;
  private readonly pairs = new Set<Pair>();
  private cut = false;
  port = 0;

  constructor(private readonly target: { host: string; port: number }) {}

  async start(): Promise<void> {
    this.server = net.createServer((client) => this.accept(client));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as net.AddressInfo).port;
  }

  /** From now on nothing passes, and new connections hang. */
  partition(): void {
    this.cut = true;
  }

  /** The connections open now pass nothing from now on; new ones pass. */
  silenceOpen(): void {
    for (const p of this.pairs) p.silenced = true;
  }

  /** Passes again: what was held is delivered, and connections made meanwhile reach the target. */
  heal(): void {
    this.cut = false;
    for (const p of this.pairs) {
      p.silenced = false;
      if (!p.server) this.connectTarget(p);
      this.flush(p);
    }
  }

  async close(): Promise<void> {
    for (const p of this.pairs) {
      p.client.destroy();
      p.server?.destroy();
    }
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private accept(client: net.Socket): void {
    const p: Pair = { client, server: undefined, up: [], down: [], silenced: false, closed: false };
    this.pairs.add(p);
    client.on('data', (d) => {
      p.up.push(d);
      this.flush(p);
    });
    client.on('error', () => undefined);
    client.on('close', () => {
      p.server?.destroy();
      this.pairs.delete(p);
    });
    if (!this.cut) this.connectTarget(p);
  }

  private connectTarget(p: Pair): void {
    const server = net.connect(this.target.port, this.target.host);
    p.server = server;
    server.on('data', (d) => {
      p.down.push(d);
      this.flush(p);
    });
    server.on('error', () => undefined);
    server.on('close', () => {
      p.closed = true;
      this.flush(p);
    });
  }

  private flush(p: Pair): void {
    if (this.cut || p.silenced || !p.server) return;
    for (const d of p.up.splice(0)) p.server.write(d);
    for (const d of p.down.splice(0)) p.client.write(d);
    if (p.closed) p.client.end();
  }
}
