import { connect, createServer, type Socket } from 'node:net';

export interface LazyLoopback {
  /** The loopback port, open from the start. */
  readonly port: number;
  /** Closes the port and every connection, and stops the service if it was started. */
  close(): Promise<void>;
}

/**
 * A loopback port that opens at once and starts the service behind it on its first connection,
 * then forwards every connection to it. The local stand-ins for SES and S3 cost more to start than
 * the rest of a local server (their libraries' load and set-up: about 150 ms of CPU each, every test
 * file's server paying it), while most local servers never send a mail or keep a file.
 */
export const lazyLoopback = async <T extends { readonly port: number }>(
  what: string,
  start: () => Promise<T>,
  stop: (started: T) => Promise<void>,
): Promise<LazyLoopback> => {
  let upstream: Promise<T> | undefined;
  let closing = false;
  const open = new Set<Socket>();
  const track = (socket: Socket): Socket => {
    open.add(socket);
    socket.once('close', () => open.delete(socket));
    return socket;
  };
  const front = createServer((client) => {
    track(client);
    // A client that goes away while the service starts is dropped, not an uncaught error.
    client.on('error', () => client.destroy());
    // Bytes that arrive meanwhile wait in the socket: a stream flows only once piped.
    upstream ??= start().catch((err: unknown) => {
      upstream = undefined; // the next connection tries again
      process.emitWarning(`${what} could not start: ${err instanceof Error ? err.message : String(err)}`);
      throw err;
    });
    upstream.then(
      ({ port }) => {
        // Gone meanwhile (it reset, or the port closed): no connection upstream is left behind for it.
        if (closing || client.destroyed) return client.destroy();
        const server = track(connect(port, '127.0.0.1'));
        server.on('error', () => client.destroy());
        client.on('error', () => server.destroy());
        client.once('close', () => server.destroy());
        client.pipe(server).pipe(client);
      },
      () => client.destroy(),
    );
  });
  await new Promise<void>((resolve, reject) => {
    front.once('error', reject);
    front.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = front.address() as { port: number };
  return {
    port,
    close: async () => {
      closing = true;
      const closed = new Promise<void>((resolve) => front.close(() => resolve()));
      for (const socket of open) socket.destroy();
      await closed;
      const started = await upstream?.catch(() => undefined);
      if (started) await stop(started);
    },
  };
};
