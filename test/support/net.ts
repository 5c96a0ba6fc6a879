// Ports for servers a test starts itself: the OS picks a free one (port 0), so files run concurrently.
import net from 'node:net';

/**
 * A port free at this moment on 127.0.0.1, for a process that must be told its port before it
 * listens (BASE_URL names it). A server the test starts in-process should listen on 0 instead.
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as net.AddressInfo).port;
      server.close(() => resolve(port));
    });
  });
}
