// HTTP written and read as bytes on a socket of its own: what Node's client would refuse to send or
// would hide (a missing Host, the exact head and its header order).
import { connect } from 'node:net';

/** Sends raw bytes and reads the whole answer, until the server closes the connection. */
export function raw(port: number, bytes: string): Promise<{ status: number; headers: string; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let data = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk) => (data += chunk));
    socket.on('error', reject);
    socket.on('end', () => {
      const [head = '', body = ''] = data.split('\r\n\r\n');
      resolve({ status: Number(head.split(' ')[1]), headers: head, body });
    });
    socket.write(bytes);
  });
}
